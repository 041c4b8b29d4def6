"""Verification by the offline judge's lexical layer: alignment, evidence and each way to reach
a verdict. With `learned=False` the words decide the verdict; the support model only adds a
probability, whose prefix `judge_one` strips from the reason so each lexical rule is seen on its
own (the probability has its own tests: test_offline_learned.py and
test_offline_lexical_support.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vera
from vera import Claim, ClaimVerdict, Verdict
from vera.judges import Judge, OfflineJudge
from vera.judges._base import match_verdicts
from vera.judges._offline import Settings, analyse, stem, verify

WHITEBOX = "the offline judge's own parts"


async def judge_one(claim: str, contexts: list[str], **knobs: float) -> ClaimVerdict:
    judge = OfflineJudge(learned=False, **knobs)  # type: ignore[arg-type]
    [verdict] = await judge.verify_claims([Claim("c1", claim)], contexts)
    probability, _, lexical = verdict.reason.partition("; ")
    assert verdict.entailment is not None
    assert probability == f"P(supported) = {verdict.entailment:.2f}"
    return verdict.model_copy(update={"reason": lexical})


def test_satisfies_the_judge_protocol() -> None:
    judge = OfflineJudge()
    assert isinstance(judge, Judge)
    assert isinstance(OfflineJudge(learned=False), Judge)
    assert judge.spec == "offline"
    assert OfflineJudge(learned=True).spec == "offline:learned"


@pytest.mark.parametrize(
    "knobs",
    [
        {"full_support": 0.0},
        {"partial_support": 1.5},
        {"full_support": 0.5, "partial_support": 0.7},
        {"window_sentences": 0},
    ],
)
def test_rejects_bad_knobs(knobs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        OfflineJudge(**knobs)  # type: ignore[arg-type]


async def test_paris_seed_example_is_fully_supported() -> None:
    verdict = await judge_one("Paris is in France", ["Paris is the capital of France."])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED
    assert verdict.evidence == "Paris is the capital of France."
    assert verdict.context_index == 0


async def test_apollo_is_partially_supported_for_the_missing_qualifier() -> None:
    verdict = await judge_one(
        "The internal project is called Apollo.", ["The project code name is Apollo."]
    )
    # "called" is a light word; "internal" is a qualifier the context never states.
    assert verdict.verdict is Verdict.PARTIALLY_SUPPORTED
    assert "internal" in verdict.reason


async def test_stemming_matches_inflections() -> None:
    verdict = await judge_one(
        "Contracts can be terminated with notice.",
        ["Either party may terminate the contract with written notice."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED
    assert stem("contracts") == stem("contract")
    assert stem("terminated") == stem("terminate") == stem("termination")


async def test_different_number_with_same_unit_contradicts() -> None:
    verdict = await judge_one(
        "The refund window is 30 days.", ["You have 60 days to return the item."]
    )
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.reason == "claim says 30 days; context says 60 days"
    assert verdict.evidence == "You have 60 days to return the item."


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Refunds are issued within thirty days.", "Refunds are issued within 30 days."),
        ("The company has 1,000 employees.", "The company has 1000 employees."),
        ("Revenue reached $5 million.", "Revenue reached $5,000,000."),
        ("The discount is 5%.", "The discount is 5 percent."),
    ],
)
async def test_numbers_are_normalised(claim: str, context: str) -> None:
    verdict = await judge_one(claim, [context])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict.reason


async def test_year_swap_contradicts() -> None:
    verdict = await judge_one("Acme was founded in 2018.", ["Acme was founded in 2019."])
    assert verdict.verdict is Verdict.CONTRADICTED
    assert "2018" in verdict.reason and "2019" in verdict.reason


async def test_number_in_no_context_without_a_rival_is_no_evidence() -> None:
    verdict = await judge_one(
        "The office has 40 parking spaces.", ["The office is located downtown near the station."]
    )
    assert verdict.verdict is Verdict.NO_EVIDENCE
    assert "40 parking" in verdict.reason


async def test_number_stated_in_another_context_is_not_a_contradiction() -> None:
    verdict = await judge_one(
        "Shipping takes 5 days.",
        ["Shipping takes 3 days in the city.", "Rural shipping takes 5 days."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED


async def test_number_found_only_in_an_unrelated_passage_still_contradicts() -> None:
    verdict = await judge_one(
        "The warranty lasts 3 years.",
        ["The warranty lasts 2 years.", "The company is 3 years old."],
    )
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.reason == "claim says 3 years; context says 2 years"
    assert verdict.context_index == 0


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The warranty does not cover water damage.", "The warranty covers water damage."),
        ("The warranty covers water damage.", "The warranty doesn't cover water damage."),
        ("Refunds are never issued for gift cards.", "Refunds are issued for gift cards."),
    ],
)
async def test_negation_flip_contradicts(claim: str, context: str) -> None:
    verdict = await judge_one(claim, [context])
    assert verdict.verdict is Verdict.CONTRADICTED
    assert "negated" in verdict.reason


async def test_double_negation_is_not_a_flip() -> None:
    verdict = await judge_one(
        "Returns are not accepted without a receipt.",
        ["Returns are not accepted without a receipt."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Prices increased sharply in 2020.", "Prices decreased sharply in 2020."),
        ("Pets are allowed in the lobby.", "Pets are prohibited in the lobby."),
        ("The maximum order size is ten units.", "The minimum order size is ten units."),
        ("Payment is due before delivery.", "Payment is due after delivery."),
    ],
)
async def test_antonym_swap_contradicts(claim: str, context: str) -> None:
    verdict = await judge_one(claim, [context])
    assert verdict.verdict is Verdict.CONTRADICTED, verdict.reason


async def test_negated_antonym_cancels_out() -> None:
    verdict = await judge_one("Prices did not increase in 2020.", ["Prices decreased in 2020."])
    assert verdict.verdict is not Verdict.CONTRADICTED


async def test_swapped_name_contradicts() -> None:
    verdict = await judge_one(
        "The report was written by Alice Smith.", ["The report was written by Bob Jones."]
    )
    assert verdict.verdict is Verdict.CONTRADICTED
    assert verdict.reason == "swapped name: claim says Alice Smith; context says Bob Jones"


async def test_unknown_name_without_alignment_is_no_evidence() -> None:
    verdict = await judge_one(
        "The audit was led by Carol White.", ["The audit covered three regional offices."]
    )
    assert verdict.verdict is Verdict.NO_EVIDENCE
    assert "Carol White" in verdict.reason


async def test_sentence_initial_capital_is_not_a_name() -> None:
    facts = analyse("Refunds go to Alice Smith in New York.")
    assert [n.surface for n in facts.names] == ["Alice Smith", "New York"]
    assert analyse("Refunds are issued quickly.").names == ()


async def test_invented_fact_is_no_evidence_without_citation() -> None:
    verdict = await judge_one(
        "The CEO enjoys skydiving on weekends.",
        ["Refunds are issued within 30 days of purchase.", "Support is available by email."],
    )
    assert verdict.verdict is Verdict.NO_EVIDENCE
    assert verdict.evidence == ""
    assert verdict.context_index is None


async def test_low_coverage_is_no_evidence() -> None:
    verdict = await judge_one(
        "The mobile app supports offline mode and dark themes.",
        ["The desktop app is available for Windows."],
    )
    assert verdict.verdict is Verdict.NO_EVIDENCE


async def test_empty_contexts_give_no_evidence_for_every_claim() -> None:
    claims = [Claim("c1", "Paris is in France."), Claim("c2", "Berlin is in Germany.")]
    verdicts = await OfflineJudge(learned=False).verify_claims(claims, [])
    assert [v.claim_id for v in verdicts] == ["c1", "c2"]
    assert all(v.verdict is Verdict.NO_EVIDENCE and v.evidence == "" for v in verdicts)


async def test_claim_without_content_is_no_evidence() -> None:
    verdict = await judge_one("It is what it is.", ["It is what it is."])
    assert verdict.verdict is Verdict.NO_EVIDENCE


async def test_one_verdict_per_claim_in_order_with_real_evidence() -> None:
    contexts = [
        "Our store opens at 9 a.m. on weekdays. Parking is free for customers.",
        "Refunds are issued within 30 days. Items must be unused. Gift cards are final sale.",
        "The loyalty program gives 5% back on every purchase.",
    ]
    response = (
        "Refunds are issued within 30 days. The loyalty program gives 5% back. "
        "Parking is free for customers. The store sells vintage guitars."
    )
    judge = OfflineJudge()
    claims = await judge.extract_claims(response)
    verdicts = await judge.verify_claims(claims, contexts)
    assert match_verdicts(claims, verdicts) == verdicts
    assert [v.claim_id for v in verdicts] == ["c1", "c2", "c3", "c4"]
    assert [v.verdict for v in verdicts] == [
        Verdict.FULLY_SUPPORTED,
        Verdict.FULLY_SUPPORTED,
        Verdict.FULLY_SUPPORTED,
        Verdict.NO_EVIDENCE,
    ]
    assert [v.context_index for v in verdicts] == [1, 2, 0, None]
    for verdict in verdicts[:3]:
        assert verdict.context_index is not None
        assert verdict.evidence in contexts[verdict.context_index]
    assert verdicts[0].evidence == "Refunds are issued within 30 days."


async def test_two_sentence_window_when_the_claim_spans_sentences() -> None:
    context = "Acme was founded in Ohio. The founder was Jane Doe. It sells tools."
    verdict = await judge_one("Jane Doe founded Acme in Ohio.", [context])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED
    assert verdict.evidence == "Acme was founded in Ohio. The founder was Jane Doe."
    one = await judge_one("Jane Doe founded Acme in Ohio.", [context], window_sentences=1)
    assert one.evidence in ("Acme was founded in Ohio.", "The founder was Jane Doe.")


async def test_verdicts_are_deterministic() -> None:
    contexts = ["The warranty lasts two years. It covers parts and labour.", "Shipping is free."]
    claims = [
        Claim("a", "The warranty lasts three years."),
        Claim("b", "Shipping is not free."),
        Claim("c", "The warranty covers parts."),
    ]
    first = await OfflineJudge(learned=False).verify_claims(claims, contexts)
    second = await OfflineJudge(learned=False).verify_claims(claims, contexts)
    assert first == second
    assert [v.verdict for v in first] == [
        Verdict.CONTRADICTED,
        Verdict.CONTRADICTED,
        Verdict.FULLY_SUPPORTED,
    ]


async def test_thresholds_are_honoured() -> None:
    claim, contexts = "The internal project is called Apollo.", ["The project code name is Apollo."]
    claims = [Claim("c1", claim)]
    [strict] = verify(claims, contexts, Settings(partial_support=0.7, full_support=0.9))
    [lenient] = verify(claims, contexts, Settings(full_support=0.6))
    assert strict.verdict is Verdict.NO_EVIDENCE
    assert lenient.verdict is Verdict.FULLY_SUPPORTED
    # The judge's verdict is never worse than the words' (the probability may lift it).
    assert (await judge_one(claim, contexts, full_support=0.6)).verdict is Verdict.FULLY_SUPPORTED


_WORDS = st.sampled_from(
    [
        *("the", "warranty", "not", "covers", "30", "days", "sixty", "Alice", "Bob"),
        *("increased", "decreased", ".", ",", ";", "?", "\n"),
    ]
)
_TEXT = st.lists(_WORDS, max_size=30).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, max_size=4), st.lists(_TEXT, max_size=3))
async def test_any_input_gets_one_cited_verdict_per_claim(
    claim_texts: list[str], contexts: list[str]
) -> None:
    claims = [Claim(f"c{i}", text) for i, text in enumerate(claim_texts)]
    verdicts = await OfflineJudge(learned=False).verify_claims(claims, contexts)
    assert [v.claim_id for v in verdicts] == [c.id for c in claims]
    for verdict in verdicts:
        if verdict.context_index is None:
            assert verdict.evidence == ""
        else:
            assert verdict.evidence and verdict.evidence in contexts[verdict.context_index]


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        # "no reason" negates "reason", which the claim does not state.
        (
            "Either party may terminate the agreement on thirty (30) days' notice.",
            "Either party may terminate this Agreement for any reason or no reason upon "
            "thirty (30) days' notice.",
        ),
        # "not received" negates "received"; the claim is about accruing interest.
        (
            "Late amounts accrue interest at 1% per month.",
            "Any amount not received by the due date shall accrue interest at 1% per month.",
        ),
    ],
)
async def test_negation_of_an_unrelated_word_does_not_contradict(claim: str, context: str) -> None:
    verdict = await judge_one(claim, [context])
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict.reason


async def test_negation_of_the_claimed_predicate_contradicts() -> None:
    verdict = await judge_one(
        "Assignment to a successor requires the other party's consent.",
        ["Either party may assign this Agreement to a successor without the other's consent."],
    )
    assert verdict.verdict is Verdict.CONTRADICTED
    assert "without" in verdict.reason


async def test_antonym_inside_the_claim_itself_is_not_a_swap() -> None:
    verdict = await judge_one(
        "The clause excludes liability for indirect damages, including lost profits.",
        ["Neither party is liable for indirect damages, including lost profits."],
    )
    assert verdict.verdict is not Verdict.CONTRADICTED, verdict.reason


@pytest.mark.parametrize("marker", ["[1]", "[2][3]", "[doc-3]", "[^2]", "[1, 2]"])
async def test_citation_markers_are_not_numbers(marker: str) -> None:
    verdict = await judge_one(
        f"The CLI requires Python 3.10 or later {marker}.",
        ["The Ferrite CLI requires Python 3.10 or later."],
    )
    assert verdict.verdict is Verdict.FULLY_SUPPORTED, verdict.reason


async def test_spelled_out_counts_are_not_required_in_the_context() -> None:
    verdict = await judge_one(
        "Both studies compared the two chunk sizes across enterprise datasets.",
        ["Both studies compared 256-token and 1,024-token chunk sizes across enterprise datasets."],
    )
    assert verdict.verdict is not Verdict.NO_EVIDENCE, verdict.reason


async def test_ordinals_are_read_as_their_numbers() -> None:
    from vera.judges import OfflineJudge

    judge = OfflineJudge()
    claims = await judge.extract_claims("The store opened on the 16th of May.")
    [same] = await judge.verify_claims(claims, ["The store opened on 16 May."])
    [other] = await judge.verify_claims(claims, ["The store opened on 18 May."])
    assert same.verdict.value == "FULLY_SUPPORTED"
    assert other.verdict.value == "CONTRADICTED"


def test_a_verbatim_clause_beside_a_negated_one_is_not_contradicted() -> None:
    """A clause quoted from a sentence whose other clause negates one of its words ("accept
    or reject each order; an order not rejected is accepted") is supported, and so is the
    negated clause; a real negation flip is still caught."""
    sentence = (
        "Supplier shall accept or reject each purchase order within five (5) business days; "
        "an order not rejected within that period is deemed accepted."
    )
    flipped = "Supplier shall not accept or reject purchase orders within five (5) business days."
    samples = [
        vera.Sample(id="verbatim", query="q", response=sentence, contexts=[sentence]),
        vera.Sample(id="flipped", query="q", response=flipped, contexts=[sentence]),
    ]
    report = vera.evaluate(samples, [vera.metrics.create_metric("faithfulness")])
    verbatim, wrong = report.samples
    assert [c.verdict for c in verbatim.claims] == [Verdict.FULLY_SUPPORTED] * 2
    assert [c.verdict for c in wrong.claims] == [Verdict.CONTRADICTED]


# A number belongs to the list item it sits in: a claim that names one item and states
# another item's number is wrong though every one of its words is in the sentence.
_LIMITS = (
    "API rate limits: Free plan 60 requests per minute, Team plan 600 requests per minute, "
    "Business plan 3000 requests per minute, per organisation."
)
_LABELLED = "Basic: 5 users, Pro: 20 users, Enterprise: unlimited"
_ELIDED = "the Basic plan allows 5 users, the Pro plan 20 and the Enterprise plan unlimited."
_YEARS = "The company had revenue of 5 million dollars in 2019, and 7 million dollars in 2020."


@pytest.mark.parametrize(
    ("claim", "context", "verdict", "reason"),
    [
        (
            "On the Team plan you can make 3000 API requests per minute.",
            _LIMITS,
            Verdict.CONTRADICTED,
            "claim says 3000 API; context says 600 requests for it",
        ),
        ("The Pro plan allows 5 users.", _LABELLED, Verdict.CONTRADICTED, "context says 20 users"),
        ("The Pro plan allows 5 users.", _ELIDED, Verdict.CONTRADICTED, "context says 20 for it"),
        ("The Enterprise plan allows 20 users.", _LABELLED, Verdict.NO_EVIDENCE, "20 users for"),
        (
            "The company had revenue of 7 million dollars in 2019.",
            _YEARS,
            Verdict.CONTRADICTED,
            "context says 5 million dollars",
        ),
    ],
)
async def test_a_number_of_another_list_item_does_not_support_the_claim(
    claim: str, context: str, verdict: Verdict, reason: str
) -> None:
    found = await judge_one(claim, [context])
    assert found.verdict is verdict
    assert reason in found.reason


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("On the Team plan you can make 600 API requests per minute.", _LIMITS),
        ("The Business plan allows 3000 requests per minute per organisation.", _LIMITS),
        ("The Basic plan allows 5 users.", _ELIDED),
        ("The Pro plan allows 20 users.", _ELIDED),
        ("The company had revenue of 7 million dollars in 2020.", _YEARS),
        ("The company had revenue of 5 million dollars in 2019.", _YEARS),
        # Fields of one record: "12 seats" has no words of its own, so it is the account's.
        (
            "Your account ACME-17 is on the Team plan with 12 seats, and 9 seats are in use.",
            "Account ACME-17: plan Team, 12 seats, 9 seats in use, renewal date 2026-03-01.",
        ),
    ],
)
async def test_a_number_of_the_claims_own_list_item_supports_it(claim: str, context: str) -> None:
    found = await judge_one(claim, [context])
    assert found.verdict is Verdict.FULLY_SUPPORTED, found.reason
