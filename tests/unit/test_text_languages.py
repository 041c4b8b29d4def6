"""vera._text in every script: sentences and spans, numbers, abstention, language identification."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vera._text import (
    abstains,
    canonical_numbers,
    guess_language,
    identify,
    language_name,
    parse_number,
    read_numbers,
    split_units,
)
from vera.judges._offline import extract_claims

WHITEBOX = "the text utilities"

# The refund-window answer of issue 31, two sentences in each language.
TWO_SENTENCES = {
    "en": "The return window is 60 days. Refunds go to the original payment method.",
    "de": "Die Rückgabefrist beträgt 60 Tage. Erstattungen gehen an die ursprüngliche Zahlungsart.",
    "fr": "Le délai de retour est de 60 jours. Le remboursement est fait sur le moyen initial.",
    "es": "El plazo de devolución es de 60 días. El reembolso se hace al método de pago original.",
    "pt": "O prazo de devolução é de 60 dias. O reembolso vai para o método de pagamento original.",
    "it": "Il periodo di reso è di 60 giorni. Il rimborso va al metodo di pagamento originale.",
    "nl": "De retourtermijn is 60 dagen. Terugbetalingen gaan naar de oorspronkelijke betaalwijze.",
    "ja": "返品期間は60日です。返金は元の支払い方法に行われます。",
    "zh": "退货期限为60天。退款将退回原支付方式。",
    "ko": "반품 기간은 60일입니다. 환불은 원래 결제 수단으로 처리됩니다.",
    "th": "ระยะเวลาคืนสินค้าคือ 60 วัน การคืนเงินจะทำผ่านวิธีการชำระเงินเดิม",
    "ar": "فترة الإرجاع 60 يومًا. يتم رد المبلغ إلى وسيلة الدفع الأصلية.",
    "he": "תקופת ההחזרה היא 60 יום. ההחזר מתבצע לאמצעי התשלום המקורי.",
    "hi": "वापसी की अवधि 60 दिन है। धनवापसी मूल भुगतान विधि से की जाती है।",
    "ru": "Срок возврата составляет 60 дней. Деньги возвращаются на исходный способ оплаты.",
}


@pytest.mark.parametrize("language", sorted(TWO_SENTENCES))
def test_two_sentences_are_two_units_and_two_claims_with_exact_spans(language: str) -> None:
    text = TWO_SENTENCES[language]
    units = split_units(text)
    assert len(units) == 2, [text[u.start : u.end] for u in units]
    assert text[units[0].start : units[0].end].rstrip("。.।") .endswith(
        ("60 days", "60 Tage", "60 jours", "60 días", "60 dias", "60 giorni", "60 dagen",
         "60日です", "60天", "60일입니다", "60 วัน", "60 يومًا", "60 יום", "60 दिन है",
         "60 дней")
    )  # fmt: skip
    claims = extract_claims(text)
    assert len(claims) == 2
    for claim in claims:
        assert claim.span is not None
        assert text[claim.span[0] : claim.span[1]] == claim.text


def test_issue_31_japanese_answer_is_two_claims() -> None:
    text = "返品期間は60日です。返金は元の支払い方法に行われます。"
    assert [c.text for c in extract_claims(text)] == [
        "返品期間は60日です。",
        "返金は元の支払い方法に行われます。",
    ]


def test_cjk_questions_and_full_width_colons_are_not_claims() -> None:
    units = split_units("退货期限为60天！你知道吗？如下：")
    assert [u.claimable for u in units] == [True, False, False]
    arabic = split_units("هل الفترة 60 يومًا؟ نعم.")
    assert [u.claimable for u in arabic] == [False, True]


def test_a_quoted_sentence_that_runs_on_is_one_sentence() -> None:
    text = "「返品は可能です。」と彼は言った。次の文です。"
    assert [text[u.start : u.end] for u in split_units(text)] == [
        "「返品は可能です。」と彼は言った。",
        "次の文です。",
    ]


def test_combining_marks_and_decimals_do_not_split() -> None:
    # The tanween in يومًا is a combining mark: the word is not a one-letter initial.
    assert len(split_units("فترة الإرجاع 60 يومًا. يتم رد المبلغ.")) == 2
    assert len(split_units("Die Gebühr beträgt 3,5 % bzw. 1.234,50 € im Jahr.")) == 1
    assert len(split_units("See Fig. 3 for the results.")) == 1


@pytest.mark.parametrize(
    ("surface", "language", "value"),
    [
        ("1,234.5", "en", 1234.5),
        ("1.234", "en", 1.234),
        ("1.234,5", "de", 1234.5),
        ("1.234", "de", 1234.0),
        ("1,5", "fr", 1.5),
        ("1 234,5", "fr", 1234.5),
        ("1.234,5", None, 1234.5),
        ("2.500", "es", 2500.0),
        ("3,75", "pt", 3.75),
        ("1.000.000", "it", 1_000_000.0),
        ("12,5", "nl", 12.5),
        ("１２３", "ja", 123.0),
        ("三十", "ja", 30.0),
        ("二十五", "zh", 25.0),
        ("一百二十", "zh", 120.0),
        ("3万", "ja", 30_000.0),
        ("1.5億", "ja", 150_000_000.0),
        ("5천", "ko", 5000.0),
        ("3만", "ko", 30_000.0),
        ("٣٠", "ar", 30.0),
        ("३०", "hi", 30.0),
    ],
)
def test_numbers_are_read_in_every_convention(
    surface: str, language: str | None, value: float
) -> None:
    assert parse_number(surface, language) == value


def test_read_numbers_spans_are_exact_and_a_lone_one_is_a_word() -> None:
    text = "費用は３万円、期間は三十日。第一条は統一された規則です。"
    mentions = read_numbers(text, "ja")
    assert [(text[m.start : m.end], m.value) for m in mentions] == [
        ("３万", 30_000.0),
        ("三十", 30.0),
    ]


def test_canonical_numbers_meet_across_conventions() -> None:
    german = canonical_numbers("Die Gebühr beträgt 1.234,50 € für 30 Tage.", "de")
    english = canonical_numbers("The fee is 1,234.50 € for 30 days.", "en")
    assert "1234.5 €" in german
    assert "1234.5 €" in english
    assert canonical_numbers("返品期間は三十日です。", "ja") == "返品期間は30日です。"


@pytest.mark.parametrize(
    ("text", "declines"),
    [
        ("The documents do not specify the fee.", True),
        ("Die Dokumente enthalten keine Angaben zur Gebühr.", True),
        ("Les documents ne précisent pas le montant.", True),
        ("Los documentos no especifican la tarifa.", True),
        ("Os documentos não mencionam a taxa.", True),
        ("I documenti non specificano la tariffa.", True),
        ("De documenten vermelden de kosten niet.", True),
        ("資料には料金の記載がありません。", True),
        ("文档中没有提到费用。", True),
        ("문서에는 수수료에 대한 정보가 없습니다.", True),
        ("Die Verträge enthalten keine Frist.", False),
        ("Le délai est de 60 jours.", False),
        ("返品期間は60日です。", False),
        ("退货期限为60天。", False),
        ("반품 기간은 60일입니다.", False),
    ],
)
def test_abstention_in_the_offline_judges_languages(text: str, declines: bool) -> None:
    assert abstains(text) is declines


@pytest.mark.parametrize("language", sorted(TWO_SENTENCES))
def test_language_identification(language: str) -> None:
    assert identify(TWO_SENTENCES[language]) == language


def test_too_little_text_is_no_guess() -> None:
    assert identify("Yes.") is None
    assert guess_language("12345 !!").code is None
    assert language_name("ja") == "Japanese"
    assert language_name("xx") == "xx"


def test_english_text_is_checked_against_english_phrases_only_when_said() -> None:
    german = "Die Dokumente enthalten keine Angaben zur Gebühr."
    assert abstains(german)
    assert abstains(german, "de")
    assert not abstains(german, "en")
    assert abstains("The documents do not specify the fee.", "en")


@pytest.mark.slow
def test_identification_works_where_no_temporary_file_can_be_written() -> None:
    # py3langid decompresses its model through a temporary file; under a file-size limit (a
    # full disk, a quota) VERA reads it in memory instead of failing at the first sample.
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000)); "
        "from vera._text import identify; "
        "print(identify('Der Vertrag endet nach dreißig Tagen und verlängert sich nicht.'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "de"), done.stderr
