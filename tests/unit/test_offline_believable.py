"""The default offline judge on ordinary rows: what it says about a claim is what a reader
would say (issue 26). Each row failed before the judge read structured contexts, rounded
numbers, units and "only"."""

from __future__ import annotations

import json

import pytest

from vera import ClaimVerdict, Verdict
from vera.judges import OfflineJudge

F, P, N, C = (
    Verdict.FULLY_SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NO_EVIDENCE,
    Verdict.CONTRADICTED,
)


async def judge(response: str, *contexts: str) -> list[ClaimVerdict]:
    offline = OfflineJudge()
    claims = await offline.extract_claims(response)
    return await offline.verify_claims(claims, list(contexts))


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The store also sells garden furniture in Oslo.", "The refund window is 30 days."),
        ("It also supports Japanese.", "The app is available in English, French and German."),
    ],
)
async def test_a_claim_no_context_supports_is_no_evidence_with_a_low_probability(
    claim: str, context: str
) -> None:
    [verdict] = await judge(claim, context)
    assert verdict.verdict is N
    assert verdict.entailment is not None and verdict.entailment < 0.3


async def test_an_invented_qualifier_beyond_a_contexts_only_is_caught() -> None:
    context = (
        "The basic plan includes email support only. Phone support is available on the Pro plan."
    )
    [verdict] = await judge("The basic plan includes phone support around the clock.", context)
    assert verdict.verdict is C
    assert verdict.reason is not None and 'context says only "email"' in verdict.reason
    assert verdict.entailment is not None and verdict.entailment <= 0.5
    [kept] = await judge("The basic plan includes email support.", context)
    assert kept.verdict is F


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Mount Everest is 8,849 metres tall.", "Mount Everest is 8,848.86 metres tall."),
        ("The flight takes 2 hours.", "The flight takes 120 minutes."),
        ("The summit is about 8.8 km high.", "The summit is 8,848.86 metres high."),
    ],
)
async def test_a_rounded_or_converted_quantity_is_supported(claim: str, context: str) -> None:
    [verdict] = await judge(claim, context)
    assert verdict.verdict is F


@pytest.mark.parametrize(
    ("claim", "context", "verdict"),
    [
        ("The refund window is 34 days.", "The refund window is 30 days.", C),
        ("The company was founded in 2020.", "The company was founded in 2024.", C),
        # Another unit of the same kind: another quantity of the same thing, so contradicted.
        ("The flight takes 3 hours.", "The flight takes 120 minutes.", C),
    ],
)
async def test_a_different_quantity_is_not_supported(
    claim: str, context: str, verdict: Verdict
) -> None:
    [found] = await judge(claim, context)
    assert found.verdict is verdict
    assert found.entailment is not None and found.entailment <= 0.5


async def test_a_negation_that_agrees_with_the_contexts_only_is_not_a_contradiction() -> None:
    context = "The basic plan includes email support only."
    [agrees] = await judge("The plan does not include phone support; only email.", context)
    assert agrees.verdict is not C and agrees.verdict is not N
    [denies] = await judge("The basic plan does not include email support.", context)
    assert denies.verdict is C


RECORD = json.dumps(
    {
        "name": "Finch & Fork",
        "city": "Santa Barbara",
        "state": "CA",
        "hours": {"Monday": "17:30-23:0"},
        "attributes": {"OutdoorSeating": False, "WiFi": "free"},
        "review_info": [{"review_text": "Our server Jamie was awesome.\nThe mimosas were cheap."}],
    }
)


async def test_a_json_record_is_read_field_by_field() -> None:
    response = (
        "Finch & Fork is in Santa Barbara, California. It does not offer outdoor seating. "
        "It has free WiFi. On Mondays it opens at 5:30 PM. A server named Jamie was awesome. "
        "It offers outdoor seating. It opens at 6 PM on Mondays."
    )
    verdicts = await judge(response, RECORD)
    # "does not offer" agrees with `"OutdoorSeating": false`: the record's yes/no is what the
    # place offers, so "offer" is the record's word too.
    assert [v.verdict for v in verdicts] == [F, F, F, F, F, C, C]
    # The judge quotes the field as the record writes it.
    assert verdicts[1].evidence is not None and '"OutdoorSeating": false' in verdicts[1].evidence
    assert (verdicts[5].reason or "").endswith(
        'claim says "outdoor seating"; the record says OutdoorSeating: false'
    )


async def test_a_table_row_is_read_with_its_headers() -> None:
    table = "| Plan | Price per month |\n|---|---|\n| Basic | $10 |\n| Pro | $20 |"
    verdicts = await judge(
        "The Pro plan costs $20 a month. The Basic plan costs $15 a month.", table
    )
    assert [v.verdict for v in verdicts] == [F, C]
    assert verdicts[0].evidence == "| Pro | $20 |"


async def test_key_value_lines_are_read_as_facts() -> None:
    record = "Warranty: 24 months\nSupport: email only\nPrice: $99"
    verdicts = await judge("The warranty is 24 months. The price is $129.", record)
    assert [v.verdict for v in verdicts] == [F, C]
    assert verdicts[0].evidence == "Warranty: 24 months"
