"""The offline judge in each language it reads, and its refusal of the others."""

from __future__ import annotations

import asyncio

import pytest

from vera import ClaimVerdict, Verdict
from vera.judges import OfflineJudge, UnsupportedLanguageError
from vera.judges._offline import SUPPORTED

WHITEBOX = "the offline judge's own parts"

# Per language: the policy context, a faithful two-sentence answer, and an answer whose first
# sentence changes the number and whose second reverses or invents the shipping cost.
CASES = {
    "en": (
        "Items can be returned within 60 days of delivery. Refunds go to the original payment "
        "method. Shipping is free for all orders.",
        "Items can be returned within 60 days. Refunds go to the original payment method.",
        "Items can be returned within 30 days. Shipping is paid for all orders.",
    ),
    "de": (
        "Artikel können innerhalb von 60 Tagen nach Lieferung zurückgegeben werden. "
        "Erstattungen erfolgen auf die ursprüngliche Zahlungsart. Der Versand ist kostenlos.",
        "Artikel können innerhalb von 60 Tagen zurückgegeben werden. Erstattungen erfolgen "
        "auf die ursprüngliche Zahlungsart.",
        "Artikel können innerhalb von 30 Tagen zurückgegeben werden. Der Versand ist "
        "kostenpflichtig.",
    ),
    "fr": (
        "Les articles peuvent être retournés dans les 60 jours suivant la livraison. Le "
        "remboursement est effectué sur le moyen de paiement initial. La livraison est gratuite.",
        "Les articles peuvent être retournés dans les 60 jours. Le remboursement est effectué "
        "sur le moyen de paiement initial.",
        "Les articles peuvent être retournés dans les 30 jours. La livraison est payante.",
    ),
    "es": (
        "Los artículos se pueden devolver en un plazo de 60 días desde la entrega. El "
        "reembolso se hace al método de pago original. El envío es gratuito.",
        "Los artículos se pueden devolver en un plazo de 60 días. El reembolso se hace al "
        "método de pago original.",
        "Los artículos se pueden devolver en un plazo de 30 días. El envío cuesta 5 euros.",
    ),
    "pt": (
        "Os artigos podem ser devolvidos no prazo de 60 dias após a entrega. O reembolso é "
        "feito no método de pagamento original. O envio é gratuito.",
        "Os artigos podem ser devolvidos no prazo de 60 dias. O reembolso é feito no método "
        "de pagamento original.",
        "Os artigos podem ser devolvidos no prazo de 30 dias. O envio é pago.",
    ),
    "it": (
        "Gli articoli possono essere restituiti entro 60 giorni dalla consegna. Il rimborso "
        "avviene sul metodo di pagamento originale. La spedizione è gratuita.",
        "Gli articoli possono essere restituiti entro 60 giorni. Il rimborso avviene sul "
        "metodo di pagamento originale.",
        "Gli articoli possono essere restituiti entro 30 giorni. La spedizione costa 5 euro.",
    ),
    "nl": (
        "Artikelen kunnen binnen 60 dagen na levering worden geretourneerd. Terugbetalingen "
        "gaan naar de oorspronkelijke betaalmethode. Verzending is gratis.",
        "Artikelen kunnen binnen 60 dagen worden geretourneerd. Terugbetalingen gaan naar de "
        "oorspronkelijke betaalmethode.",
        "Artikelen kunnen binnen 30 dagen worden geretourneerd. Verzending is betaald.",
    ),
    "ja": (
        "商品は到着後60日以内に返品できます。返金は元の支払い方法に行われます。送料は無料です。",
        "商品は60日以内に返品できます。返金は元の支払い方法に行われます。",
        "商品は30日以内に返品できます。送料は有料です。",
    ),
    "zh": (
        "商品可在收货后60天内退货。退款将退回原支付方式。运费免费。",
        "商品可在60天内退货。退款将退回原支付方式。",
        "商品可在30天内退货。运费收费。",
    ),
    "ko": (
        "상품은 수령 후 60일 이내에 반품할 수 있습니다. 환불은 원래 결제 수단으로 처리됩니다. "
        "배송비는 무료입니다.",
        "상품은 60일 이내에 반품할 수 있습니다. 환불은 원래 결제 수단으로 처리됩니다.",
        "상품은 30일 이내에 반품할 수 있습니다. 배송비는 유료입니다.",
    ),
}


def judge(response: str, contexts: list[str], **options: str) -> list[ClaimVerdict]:
    async def run() -> list[ClaimVerdict]:
        offline = OfflineJudge(**options)  # type: ignore[arg-type]
        claims = await offline.extract_claims(response)
        return await offline.verify_claims(claims, contexts)

    return asyncio.run(run())


def test_every_supported_language_has_a_case() -> None:
    assert set(CASES) == set(SUPPORTED)


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_faithful_answer_is_fully_supported(language: str) -> None:
    context, faithful, _ = CASES[language]
    verdicts = judge(faithful, [context])
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED] * 2, verdicts


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_changed_number_is_contradicted_and_a_reversed_cost_is_caught(language: str) -> None:
    context, _, wrong = CASES[language]
    verdicts = judge(wrong, [context])
    assert len(verdicts) == 2
    assert verdicts[0].verdict is Verdict.CONTRADICTED
    assert "30" in verdicts[0].reason and "60" in verdicts[0].reason
    assert verdicts[1].verdict is not Verdict.FULLY_SUPPORTED, verdicts[1]


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("返品はできません。", "返品は60日以内であればできます。"),
        ("Der Versand ist nicht kostenlos.", "Der Versand ist kostenlos für alle Bestellungen."),
        ("La livraison n'est pas gratuite.", "La livraison est gratuite pour toutes commandes."),
        ("El envío no es gratuito.", "El envío es gratuito para todos los pedidos."),
    ],
)
def test_a_negation_flip_is_contradicted(claim: str, context: str) -> None:
    (verdict,) = judge(claim, [context])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict
    assert "negated" in verdict.reason


@pytest.mark.parametrize(
    ("response", "context", "named"),
    [
        (
            "Okres zwrotu wynosi 60 dni. Zwrot pieniędzy następuje na oryginalną metodę.",
            "Okres zwrotu wynosi 60 dni od otrzymania towaru.",
            "Polish (pl)",
        ),
        (
            "Срок возврата составляет 60 дней. Деньги возвращаются на исходный способ оплаты.",
            "Срок возврата составляет 60 дней с момента получения.",
            "Russian (ru)",
        ),
        (
            "ระยะเวลาคืนสินค้าคือ 60 วัน การคืนเงินจะทำผ่านวิธีการชำระเงินเดิม",
            "ระยะเวลาคืนสินค้าคือ 60 วัน นับจากวันที่ได้รับสินค้า",
            "Thai (th)",
        ),
        (
            "فترة الإرجاع 60 يومًا. يتم رد المبلغ إلى وسيلة الدفع الأصلية.",
            "فترة الإرجاع 60 يومًا من تاريخ الاستلام.",
            "Arabic (ar)",
        ),
    ],
)
def test_a_language_outside_the_set_is_refused_not_judged(
    response: str, context: str, named: str
) -> None:
    with pytest.raises(UnsupportedLanguageError) as refused:
        judge(response, [context])
    message = str(refused.value)
    assert message.startswith("unsupported_language")
    assert named in message
    assert "LLM judge" in message
    assert "--language" in message
    # The claims were segmented all the same; each is NO_EVIDENCE, marked.
    assert len(refused.value.verdicts) == 2
    for verdict in refused.value.verdicts:
        assert verdict.verdict is Verdict.NO_EVIDENCE
        assert verdict.reason.startswith("unsupported_language")


def test_an_answer_in_one_language_from_contexts_in_another_is_refused() -> None:
    context = CASES["de"][0]
    with pytest.raises(UnsupportedLanguageError, match="English and the contexts in German"):
        judge("Items can be returned within 60 days of delivery.", [context])


def test_a_forced_language_is_used_and_an_unknown_one_rejected() -> None:
    context, faithful, _ = CASES["de"]
    verdicts = judge(faithful, [context], language="de")
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED] * 2
    with pytest.raises(ValueError, match="does not read language 'pl'"):
        OfflineJudge(language="pl")


def test_english_reading_is_unchanged_by_a_previous_sample_in_another_language() -> None:
    # The per-text caches are keyed by language: a context first read as German is read
    # afresh as English.
    context = "Die Frist beträgt 60 Tage. Der Versand ist kostenlos."
    judge("Die Frist beträgt 60 Tage.", [context])
    english = "The period is 60 days. Shipping is free."
    (verdict,) = judge("The period is 60 days.", [english])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED


def test_the_bundled_multilingual_example_meets_the_documented_rates() -> None:
    # docs/languages.md: at least 80 % of planted errors caught and of clean samples passed
    # in every supported language, two scenarios' worth at least of each.
    import vera

    caught: dict[str, list[bool]] = {}
    passed: dict[str, list[bool]] = {}
    for sample in vera.load_dataset("multilingual"):
        verdicts = judge(sample.response or "", [c.text for c in sample.contexts])
        flagged = any(v.verdict is not Verdict.FULLY_SUPPORTED for v in verdicts)
        language = str(sample.metadata["language"])
        if sample.metadata.get("planted"):
            caught.setdefault(language, []).append(flagged)
        else:
            passed.setdefault(language, []).append(not flagged)
    assert set(caught) == set(passed) == set(SUPPORTED)
    for language in SUPPORTED:
        assert sum(caught[language]) >= 0.8 * len(caught[language]), language
        assert sum(passed[language]) >= 0.8 * len(passed[language]), language


def test_each_sample_records_its_languages_and_groups_by_them() -> None:
    import vera
    from vera import Sample, SampleStatus

    samples = [
        Sample(id=f"s-{language}", query="?", response=CASES[language][1],
               contexts=[CASES[language][0]])
        for language in ("en", "de", "ja")
    ]  # fmt: skip
    samples.append(
        Sample(id="s-pl", query="?", response="Okres zwrotu wynosi 60 dni od dostawy towaru.",
               contexts=["Okres zwrotu wynosi 60 dni od otrzymania towaru przez klienta."])
    )  # fmt: skip
    # A refused sample leaves the run incomplete: never a pass.
    with pytest.warns(Warning, match="would exit 3"):
        report = vera.evaluate(samples, group_by=["language"])
    by_id = {s.id: s for s in report.samples}
    for language in ("en", "de", "ja"):
        result = by_id[f"s-{language}"]
        assert result.status is SampleStatus.SCORED
        assert (result.language, result.context_language) == (language, language)
        assert result.group_values == {"language": language}
    refused = by_id["s-pl"]
    assert refused.status is SampleStatus.ERROR
    assert refused.language == "pl"
    assert refused.error is not None and "unsupported_language" in str(refused.error)
    assert "Polish (pl)" in str(refused.error)
    assert refused.scores == {}
    assert set(report.breakdowns["language"]) >= {"en", "de", "ja"}  # type: ignore[index]
