"""Issue 38: the offline judge's claim verdicts on ordinary rows it used to get wrong.

Each case goes through the judge as users get it (`OfflineJudge`, or `vera.evaluate` with
judge "offline") and asserts the verdict a reader would give.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import vera
from vera import ClaimVerdict, Verdict, evaluate_conversations
from vera.judges import OfflineJudge, UnsupportedLanguageError

SUPPORTED = (Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED)
UNSUPPORTED = (Verdict.NO_EVIDENCE, Verdict.CONTRADICTED)


def judged(response: str, contexts: list[str]) -> list[ClaimVerdict]:
    judge = OfflineJudge()

    async def run() -> list[ClaimVerdict]:
        claims = await judge.extract_claims(response)
        return await judge.verify_claims(claims, contexts)

    return asyncio.run(run())


def only(response: str, contexts: list[str]) -> ClaimVerdict:
    verdicts = judged(response, contexts)
    assert len(verdicts) == 1, verdicts
    return verdicts[0]


# ---- values stated by different sentences are not one statement -----------------------------


@pytest.mark.parametrize(
    "context",
    [
        "You are billed annually. Monthly reports are emailed to every account owner.",
        "Monthly reports are emailed to every account owner. You are billed annually.",
    ],
)
def test_a_frequency_the_window_states_otherwise_is_not_supported(context: str) -> None:
    verdict = only("You are billed monthly.", [context])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict
    assert verdict.entailment is not None and verdict.entailment <= 0.5


def test_the_same_frequency_is_still_supported() -> None:
    verdict = only(
        "You are billed annually.",
        ["You are billed annually. Monthly reports are emailed to every account owner."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict


# ---- paraphrases: stems, synonyms and numbers that agree ------------------------------------


@pytest.mark.parametrize(
    ("response", "context"),
    [
        (
            "Customers can get their money back within 30 days of buying.",
            "Refunds are available for 30 days after purchase.",
        ),
        (
            "Die Rückgabe ist innerhalb von 30 Tagen nach dem Kauf möglich.",
            "Artikel können binnen 30 Tagen ab Kaufdatum zurückgegeben werden.",
        ),
        (
            "Puedes pedir el reembolso hasta 30 días después de comprar.",
            "Los clientes pueden solicitar la devolución del dinero dentro de los 30 días "
            "posteriores a la compra.",
        ),
    ],
    ids=["en", "de", "es"],
)
def test_a_paraphrase_is_at_least_partially_supported(response: str, context: str) -> None:
    verdict = only(response, [context])
    assert verdict.verdict in SUPPORTED, verdict


def test_a_paraphrase_with_another_number_is_still_not_supported() -> None:
    verdict = only(
        "Customers can get their money back within 60 days of buying.",
        ["Refunds are available for 30 days after purchase."],
    )
    assert verdict.verdict in UNSUPPORTED, verdict


# ---- invented conditions and qualifiers, in every language ----------------------------------


@pytest.mark.parametrize(
    ("response", "context"),
    [
        (
            "For premium members, returns are possible within 30 days.",
            "Returns are possible within 30 days of purchase.",
        ),
        (
            "Für Premium-Mitglieder ist die Rückgabe innerhalb von 30 Tagen möglich.",
            "Die Rückgabe ist innerhalb von 30 Tagen nach dem Kauf möglich.",
        ),
        ("プレミアム会員の場合、返品は30日以内に可能です。", "返品は購入後30日以内に可能です。"),
        ("对于高级会员\uff0c30天内可以退货。", "购买后30天内可以退货。"),
        (
            "프리미엄 회원의 경우 30일 이내에 반품할 수 있습니다.",
            "구매 후 30일 이내에 반품할 수 있습니다.",
        ),
    ],
    ids=["en", "de", "ja", "zh", "ko"],
)
def test_an_invented_condition_is_not_supported(response: str, context: str) -> None:
    verdict = only(response, [context])
    assert verdict.verdict in UNSUPPORTED, verdict
    assert verdict.entailment is not None and verdict.entailment <= 0.5


@pytest.mark.parametrize(
    ("response", "context"),
    [
        (
            "For premium members, returns are possible within 30 days.",
            "For premium members, returns are possible within 30 days of purchase.",
        ),
        (
            "プレミアム会員の場合、返品は30日以内に可能です。",
            "プレミアム会員の場合、返品は購入後30日以内に可能です。",
        ),
    ],
    ids=["en", "ja"],
)
def test_a_condition_the_context_states_is_supported(response: str, context: str) -> None:
    assert only(response, [context]).verdict is Verdict.FULLY_SUPPORTED


# ---- what a context's "only", "not included" or "closed" rules out, in zh, ja, ko --------------


@pytest.mark.parametrize(
    ("response", "context"),
    [
        ("这个套餐包含电话支持。", "这个套餐仅包含电子邮件支持\uff0c不包含电话支持。"),
        ("这个套餐包含电话支持。", "这个套餐只包含电子邮件支持。"),
        (
            "このプランには電話サポートが含まれます。",
            "このプランにはメールサポートのみが含まれます。",
        ),
        (
            "매장은 일요일에 영업합니다.",
            "매장은 월요일부터 토요일까지 영업합니다. 일요일은 휴무입니다.",
        ),
        (
            "店舗は日曜日に営業しています。",
            "店舗は月曜日から土曜日まで営業しています。日曜日は定休日です。",
        ),
        ("博物馆在春节期间营业。", "博物馆全年开放。春节期间休息。"),
    ],
    ids=["zh-not-included", "zh-only", "ja-only", "ko-closed", "ja-closed", "zh-closed"],
)
def test_what_the_context_rules_out_is_contradicted(response: str, context: str) -> None:
    verdict = only(response, [context])
    assert verdict.verdict in UNSUPPORTED, verdict


@pytest.mark.parametrize(
    ("response", "context"),
    [
        ("这个套餐包含电子邮件支持。", "这个套餐仅包含电子邮件支持\uff0c不包含电话支持。"),
        (
            "매장은 토요일에 영업합니다.",
            "매장은 월요일부터 토요일까지 영업합니다. 일요일은 휴무입니다.",
        ),
    ],
    ids=["zh", "ko"],
)
def test_what_the_context_allows_is_supported(response: str, context: str) -> None:
    assert only(response, [context]).verdict in SUPPORTED


# ---- language by the share of the text -------------------------------------------------------


def test_a_mostly_english_record_with_a_chinese_review_is_read_as_english() -> None:
    record = {
        "name": "Golden Dragon",
        "city": "San Francisco",
        "categories": "Chinese restaurant, dim sum",
        "reviews": [
            {"text": "The dumplings were fresh and the service was quick.", "stars": 5},
            {"text": "Great dim sum, 很好吃, will come back.", "stars": 4},
        ],
    }
    report = vera.evaluate(
        [
            {
                "id": "r1",
                "response": "Golden Dragon is a Chinese restaurant in San Francisco.",
                "contexts": [json.dumps(record, ensure_ascii=False)],
            }
        ],
        judge="offline",
    )
    sample = report.samples[0]
    assert sample.status.value == "scored", sample.error
    assert sample.results["faithfulness"].score == 1.0


@pytest.mark.parametrize("answer", ["ten weeks", "B\u00e9la Bart\u00f3k", "Andrzej Żuławski"])
def test_a_short_answer_is_read_in_the_contexts_language(answer: str) -> None:
    context = (
        f"The album was recorded with {answer} in the studio. The band toured for ten weeks "
        "after its release, and the record was reissued on vinyl in the following year."
    )
    verdicts = judged(answer, [context])
    assert verdicts and all(v.verdict in SUPPORTED for v in verdicts), verdicts


def test_a_short_answer_in_another_script_is_still_refused() -> None:
    with pytest.raises(UnsupportedLanguageError):
        judged("30日以内です。", ["Items can be returned within 30 days of delivery."])


# ---- conversations: evidence from earlier tool results ---------------------------------------


def _sql(call: str, store: str) -> dict[str, object]:
    query = f"select count(*) from orders where store='{store}' and month='2026-03'"
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call,
                "type": "function",
                "function": {"name": "run_sql", "arguments": json.dumps({"query": query})},
            }
        ],
    }


def test_a_turn_drawing_on_tool_results_of_earlier_turns_is_supported() -> None:
    messages = [
        {"role": "user", "content": "How many orders did the Lisbon store have in March?"},
        _sql("c1", "Lisbon"),
        {"role": "tool", "tool_call_id": "c1", "content": "count: 1284"},
        {"role": "assistant", "content": "The Lisbon store had 1284 orders in March."},
        {"role": "user", "content": "And the Porto store?"},
        _sql("c2", "Porto"),
        {"role": "tool", "tool_call_id": "c2", "content": "count: 977"},
        {"role": "assistant", "content": "The Porto store had 977 orders in March."},
        {"role": "user", "content": "Which one had more?"},
        {"role": "assistant", "content": "Lisbon had more orders in March: 1284 against 977."},
        {"role": "user", "content": "And April?"},
        {"role": "assistant", "content": "Lisbon had 1500 orders in April."},
    ]
    report = evaluate_conversations([{"id": "stores", "messages": messages}], judge="offline")
    scores = {s.id: s.results["faithfulness"].score for s in report.turns.samples}
    assert scores["stores/turn-8"] == 1.0, scores
    # Two figures from two tool results: read together only where one context states every
    # number of the claim (else one entity's figure could lend itself to another: see
    # test_otlp_agents), so the comparison is partly supported, which the offline judge's
    # answer verdict counts as supported.
    assert scores["stores/turn-10"] == 0.5, scores
    # An invented figure stays unsupported, however many short contexts there are.
    assert scores["stores/turn-12"] == 0.0, scores


# ---- a Latin-script name where capitals do not mark names (de, ja, zh, ko) --------------------


@pytest.mark.parametrize(
    ("response", "context"),
    [
        (
            "Ashgrove Energy Partners unterhält eine Haftpflichtversicherung von 2.000.000 USD.",
            "Veldt Instruments Corp. unterhält eine Haftpflichtversicherung von 2.000.000 USD.",
        ),
        (
            "Ashgrove Energy Partnersは200万ドルの賠償責任保険を維持します。",
            "Veldt Instruments Corp.は200万ドルの賠償責任保険を維持します。",
        ),
        (
            "Ashgrove Energy Partners应维持200万美元的责任保险。",
            "Veldt Instruments Corp.应维持200万美元的责任保险。",
        ),
        (
            "Ashgrove Energy Partners는 200만 달러의 배상책임보험을 유지합니다.",
            "Veldt Instruments Corp.는 200만 달러의 배상책임보험을 유지합니다.",
        ),
    ],
    ids=["de", "ja", "zh", "ko"],
)
def test_a_name_no_context_names_is_not_supported(response: str, context: str) -> None:
    assert only(response, [context]).verdict in UNSUPPORTED


def test_a_german_noun_is_no_name_and_a_named_company_is_supported() -> None:
    context = "Veldt Instruments Corp. unterhält eine Haftpflichtversicherung von 2.000.000 USD."
    verdict = only("Veldt Instruments Corp. unterhält eine Haftpflichtversicherung.", [context])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict


# ---- what names a source, and a name written as one word -------------------------------------


def test_a_reference_to_a_numbered_passage_is_neither_a_name_nor_a_number() -> None:
    verdict = only(
        "According to Passage 2, the annual fee is 30 dollars.",
        ["The annual fee is 30 dollars, billed in January.", "Members may cancel at any time."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict


def test_a_name_written_as_one_word_in_the_context_is_named() -> None:
    record = json.dumps({"name": "Lure Fish House", "attributes": {"WiFi": "free"}})
    verdict = only("Lure Fish House offers free Wi-Fi.", [record])
    assert verdict.verdict in SUPPORTED, verdict
    assert only("Lure Fish House offers free Bluetooth.", [record]).verdict in UNSUPPORTED


def test_for_example_opens_no_condition() -> None:
    verdict = only(
        "For example, technicians in Alaska have the highest average pay.",
        ["Technicians in Alaska have the highest average pay of all states."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict


def test_saying_the_passages_cannot_answer_is_no_claim() -> None:
    judge = OfflineJudge()
    claims = asyncio.run(
        judge.extract_claims("Unable to answer based on the given passages. The fee is $30.")
    )
    assert [c.text for c in claims] == ["The fee is $30."]


@pytest.mark.parametrize(
    ("answer", "context"),
    [
        (
            "Darius Maskoliūnas coaches for Lietuvos krepšinio lyga.",
            "Darius Maskoliūnas is a Lithuanian basketball coach. He coaches for Lietuvos "
            "krepšinio lyga, the top division of basketball in Lithuania, and was an "
            "assistant coach of the national team for several years.",
        ),
        (
            "Yury Grigorovich was Vladimir's choreographer for many years.",
            # HaluEval QA, row "Yury Grigorovich" (MIT): English with Cyrillic names.
            "Vladimir Yaroshenko (Russian: \u0412\u043b\u0430\u0434\u0438\u043c\u0438\u0440 "
            "\u042f\u0440\u043e\u0448\u0435\u043d\u043a\u043e; born November 2, 1985 in Slavy"
            "ansk-na-Kubani) \u2013 Polish-Russian ballet dancer, first soloist with Yury Gri"
            "gorovich\u2019s Ballet Theatre, Krasnodar, trained in classical Russian ballet s"
            "chool.Yury Nikolayevich Grigorovich (Russian: \u042e\u0301\u0440\u0438\u0439 "
            "\u041d\u0438\u043a\u043e\u043b\u0430\u0301\u0435\u0432\u0438\u0447 \u0413\u0440"
            "\u0438\u0433\u043e\u0440\u043e\u0301\u0432\u0438\u0447 ; born 2 January 1927 in "
            "Leningrad) is a Soviet and Russian dancer and choreographer who dominated the Ru"
            "ssian ballet for 30 years.",
        ),
    ],
    ids=["foreign-names-in-the-answer", "foreign-names-in-the-context"],
)
def test_foreign_names_do_not_make_an_english_sample_foreign(answer: str, context: str) -> None:
    verdicts = judged(answer, [context])
    assert verdicts and all(v.verdict in SUPPORTED for v in verdicts), verdicts


# ---- answers that open with "No," and figures worked out from the context ------------------


def test_an_answer_opening_with_no_is_not_a_negated_claim() -> None:
    verdict = only(
        "No, downgrades are not prorated.",
        ["Downgrades take effect at the next renewal and are not prorated."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict


def test_a_difference_of_two_stated_quantities_is_supported() -> None:
    context = "Account BETA-3: storage quota 500 GB, 430 GB used."
    assert only("Account BETA-3 has 70 GB left.", [context]).verdict in SUPPORTED
    assert only("Account BETA-3 has 80 GB left.", [context]).verdict in UNSUPPORTED


def test_a_quantity_stated_twice_does_not_add_up_to_its_double() -> None:
    context = "Either party may terminate upon thirty (30) days' prior written notice."
    verdict = only(
        "Either party may terminate with sixty (60) days' prior written notice.", [context]
    )
    assert verdict.verdict in UNSUPPORTED, verdict


# ---- a business record's days, hours and yes/no attributes -----------------------------------

SHOP = json.dumps(
    {
        "name": "Sam's To Go",
        "city": "Santa Barbara",
        "state": "CA",
        "hours": {
            "Monday": "10:0-21:0",
            "Tuesday": "10:0-21:0",
            "Wednesday": "10:0-21:0",
            "Thursday": "10:0-21:0",
            "Friday": "10:0-21:0",
            "Saturday": "10:0-21:0",
        },
        "attributes": {
            "BusinessParking": {"garage": False, "street": True, "lot": True, "valet": False},
            "RestaurantsReservations": False,
            "OutdoorSeating": True,
            "WiFi": "free",
            "RestaurantsTakeOut": True,
            "Ambience": {"romantic": False, "casual": True},
        },
    }
)


@pytest.mark.parametrize(
    "claim",
    [
        "It is open Monday through Friday from 10:00 AM to 9:00 PM.",
        "It opens at 10 AM from Monday to Saturday.",
        "It is closed on Sundays.",
        "It offers takeout.",
        "It does not accept reservations.",
        "Lot parking is available, but garage and valet parking are not.",
        "While it does not offer valet parking, street parking is available.",
        "It has a casual atmosphere.",
    ],
)
def test_what_the_record_says_is_supported(claim: str) -> None:
    verdict = only(claim, [SHOP])
    assert verdict.verdict in SUPPORTED, verdict


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("It is open seven days a week.", "open on Sunday"),
        ("It is closed on Mondays.", "closed on Monday"),
        ("It is open every day except Sunday from 9 AM to 9 PM.", "Monday 9:00-21:00"),
        ("It has no outdoor seating.", "OutdoorSeating: true"),
        ("WiFi is not available.", "WiFi"),
        ("It takes reservations.", "RestaurantsReservations: false"),
        ("It offers valet parking.", "valet: false"),
        ("It has a romantic vibe.", "romantic: false"),
    ],
)
def test_what_the_record_rules_out_is_contradicted(claim: str, why: str) -> None:
    verdict = only(claim, [SHOP])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict
    assert why in (verdict.reason or ""), verdict


def test_a_name_does_not_run_on_into_the_next_sentence() -> None:
    # "CA. With" was read as one name, absent from the record, hence "swapped".
    verdicts = judged("Sam's To Go is in Santa Barbara, CA. With free WiFi, it is popular.", [SHOP])
    assert all("CA. With" not in (v.reason or "") for v in verdicts), verdicts


# ---- "only" restricts; "not only" adds ----------------------------------------------------------


def test_not_only_restricts_nothing() -> None:
    verdict = only(
        "The plan covers chat support.",
        ["The plan covers not only email support but also chat support."],
    )
    assert verdict.verdict in SUPPORTED, verdict


def test_only_rules_out_a_claim_that_is_its_sentence_with_one_thing_added() -> None:
    verdict = only("The plan includes phone support.", ["The plan includes email support only."])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict


def test_only_does_not_rule_out_another_statement_beside_it() -> None:
    # The claim shares a few words with the "only" sentence but says something else.
    verdict = only(
        "The prosecution showed a close-up video of the young victim, who died in the bombing.",
        ["The prosecution showed close-up video of the boy, who was only 3 feet from the bomb."],
    )
    assert verdict.verdict is not Verdict.CONTRADICTED, verdict


REVIEWED = json.dumps(
    {
        "name": "Sam's To Go",
        "attributes": {"OutdoorSeating": False},
        "review_info": [
            {"review_stars": 5.0, "review_text": "Sam was so kind to us and the food came fast."},
            {"review_stars": 4.0, "review_text": "Great pastrami sandwich, friendly people."},
        ],
    }
)


def test_a_summary_of_a_records_reviews_is_partly_supported() -> None:
    verdict = only(
        "Customers praise the friendly atmosphere, generous portions and fair prices.", [REVIEWED]
    )
    assert verdict.verdict is Verdict.PARTIALLY_SUPPORTED, verdict
    assert "summary of the reviews" in (verdict.reason or "")


def test_an_invention_beside_a_records_reviews_is_still_unsupported() -> None:
    assert only("It hosts weekly trivia nights and karaoke.", [REVIEWED]).verdict in UNSUPPORTED
    assert only("Customers love its outdoor seating.", [REVIEWED]).verdict is Verdict.CONTRADICTED


# ---- names: a number word, a short form, a people, a label, a unit ---------------------------

PLANE = (
    "The plane was coming back from the NCAA Final Four championship game in Indianapolis. "
    "Arizona Gov. Doug Ducey signed the law. A cyclist rode around China for 460 days."
)


@pytest.mark.parametrize(
    "claim",
    [
        "The plane was returning from the NCAA Final Four championship game in Indianapolis.",
        "Arizona Governor Doug Ducey signed the law.",
        "A Chinese cyclist rode for 460 days.",
    ],
)
def test_a_name_the_context_gives_in_other_form_is_named(claim: str) -> None:
    verdict = only(claim, [PLANE])
    assert verdict.verdict in SUPPORTED, verdict


def test_a_name_the_context_does_not_give_is_still_caught() -> None:
    verdict = only(
        "The plane was returning from the NCAA Final Four championship game in Chicago.", [PLANE]
    )
    assert verdict.verdict in UNSUPPORTED, verdict


def test_a_label_and_a_unit_are_no_names() -> None:
    context = (
        "Diet can aggravate acne, but it does not cause oily skin. July averages 69 degrees F."
    )
    for claim in ("Diet: While diet can aggravate acne, it does not cause oily skin.",):
        assert only(claim, [context]).verdict in SUPPORTED
    assert all(
        "swapped name" not in (v.reason or "") for v in judged("July averages 69°F.", [context])
    )


# ---- a denial in other words is no flip; "not just" denies nothing -----------------------------


def test_a_denial_in_other_words_agrees_with_a_negation() -> None:
    context = "Wang had turned down offers of a new bike and would not accept a replacement."
    verdict = only("Wang refused offers of a new bike and a replacement.", [context])
    assert verdict.verdict is not Verdict.CONTRADICTED, verdict


def test_not_just_limits_and_does_not_deny() -> None:
    context = "The cost of attendance includes tuition, books and fees."
    verdict = only("The cost includes not just tuition, but also books and fees.", [context])
    assert verdict.verdict in SUPPORTED, verdict


def test_a_plain_negation_still_flips() -> None:
    context = "The official said the fall of Ramadi is not imminent."
    verdict = only("The official said the fall of Ramadi is imminent.", [context])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict


# ---- days stated in prose --------------------------------------------------------------------

STORE = "The store is open Monday to Saturday from 9 AM to 6 PM. It is closed on Sundays."


@pytest.mark.parametrize(
    "claim",
    [
        "The store is open Monday through Friday.",
        "The store is closed on Sundays.",
        "On Saturday the store opens at 9 AM and closes at 6 PM.",
    ],
)
def test_days_the_prose_states_are_supported(claim: str) -> None:
    assert only(claim, [STORE]).verdict in SUPPORTED


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("The store is open every day.", "open on Sunday"),
        ("The store is open seven days a week.", "open on Sunday"),
        ("The store is closed on Mondays.", "closed on Monday"),
        ("The store is open Monday to Saturday from 9 AM to 5 PM.", "9:00-17:00"),
    ],
)
def test_days_the_prose_rules_out_are_contradicted(claim: str, why: str) -> None:
    verdict = only(claim, [STORE])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict
    assert why in (verdict.reason or ""), verdict


def test_a_day_inside_a_range_is_one_of_its_days() -> None:
    context = "Our support team answers from Monday to Friday."
    assert only("Support answers on Tuesdays.", [context]).verdict in SUPPORTED
    assert only("Support answers on Saturdays.", [context]).verdict in UNSUPPORTED


# ---- everyday quantities and word forms ---------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Passwords must be changed every three months.", "Passwords are reset every 90 days."),
        ("The warranty lasts one year.", "The warranty lasts 12 months."),
        ("Refunds are possible within one month.", "Refunds are possible within 30 days."),
    ],
)
def test_a_duration_in_other_units_is_the_same_duration(claim: str, context: str) -> None:
    assert only(claim, [context]).verdict in SUPPORTED


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The warranty lasts two years.", "The warranty lasts 12 months."),
        ("Refunds are possible within two months.", "Refunds are possible within 30 days."),
        ("The cable is 50 cm long.", "The cable is 2 metres long."),
        (
            "Shipping costs are refunded too.",
            "Refunds take 5 days. Shipping fees are not refundable.",
        ),
    ],
)
def test_another_quantity_or_a_denied_word_form_is_contradicted(claim: str, context: str) -> None:
    assert only(claim, [context]).verdict is Verdict.CONTRADICTED


# ---- what a claim says of its subject -----------------------------------------------------------

DEVICE = (
    "The device has a battery life of up to 10 hours and charges fully in 2 hours. "
    "Express delivery takes 1-2 business days and costs $15."
)


@pytest.mark.parametrize("claim", ["The device is waterproof.", "Express delivery is free."])
def test_a_claim_whose_point_the_context_lacks_is_unsupported(claim: str) -> None:
    # Only the subject is in the context; what the claim says of it is not.
    verdict = only(claim, [DEVICE])
    assert verdict.verdict is Verdict.NO_EVIDENCE, verdict
    assert "what the claim says of it" in (verdict.reason or "")


def test_a_claim_whose_point_the_context_states_is_supported() -> None:
    assert only(
        "The device is waterproof.", ["The device is waterproof to 50 metres."]
    ).verdict in (SUPPORTED)


def test_a_deeply_nested_record_is_read_without_error() -> None:
    nested: dict[str, object] = {}
    inner = nested
    for _ in range(800):
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    verdicts = judged("It offers takeout. It is open every day.", [json.dumps(nested)])
    assert [v.verdict for v in verdicts] == [Verdict.NO_EVIDENCE] * 2


# ---- one kind swapped for another in what a thing includes -------------------------------------


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The Pro plan includes phone support.", "The Pro plan includes email support."),
        ("The policy covers fire damage.", "The policy covers water damage."),
        ("We accept debit cards.", "We accept credit cards."),
    ],
)
def test_another_kind_of_what_a_thing_includes_is_unsupported(claim: str, context: str) -> None:
    verdict = only(claim, [context])
    assert verdict.verdict is Verdict.NO_EVIDENCE, verdict
    assert "another kind" in (verdict.reason or "")


def test_the_same_kind_is_still_supported() -> None:
    context = "The Pro plan costs 20 euros a month and includes email support."
    assert only("The Pro plan includes email support.", [context]).verdict in SUPPORTED
