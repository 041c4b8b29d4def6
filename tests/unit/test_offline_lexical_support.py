"""The default `offline` judge's verdicts and probabilities: the support model's probability,
weighed by what the words found, and cut into verdicts (`vera.judges._offline`)."""

from __future__ import annotations

import pytest

from vera import Claim, ClaimVerdict, Verdict
from vera.judges import OfflineJudge
from vera.judges._offline import LEXICAL_WEIGHTS, RULED_OUT, LexicalWeights, lexical_support

WHITEBOX = "the offline judge's own parts"

CONTEXT = (
    "The warranty covers parts for 24 months from the date of purchase. "
    "Labour is covered for the first 12 months only. Claims are handled by Acme Repairs."
)
CUT = 0.7


@pytest.mark.parametrize(
    ("verdict", "reason", "weight"),
    [
        (Verdict.CONTRADICTED, "claim says 36 months; context says 24 months", 0.7),
        (Verdict.CONTRADICTED, 'claim is negated ("not"); context is not', 0.7),
        (Verdict.NO_EVIDENCE, "no context states 40 euros", 0.7),
        (Verdict.NO_EVIDENCE, "no context names Globex", 0.5),
        (Verdict.NO_EVIDENCE, "no context shares a content word with it", 0.5),
    ],
)
def test_a_claim_the_words_rule_out_keeps_its_verdict_and_at_most_even_odds(
    verdict: Verdict, reason: str, weight: float
) -> None:
    lexical = ClaimVerdict("c1", verdict, reason=reason)
    assert LEXICAL_WEIGHTS.of(lexical) == weight
    for probability in (0.99, 0.4):
        weighed = lexical_support(lexical, probability, CUT)
        assert weighed.verdict is verdict  # however sure the model is
        expected = min(RULED_OUT, probability * weight)
        assert weighed.entailment == pytest.approx(expected)
        assert weighed.reason == f"P(supported) = {expected:.2f}; {reason}"


@pytest.mark.parametrize(
    ("lexical", "probability", "verdict"),
    [
        # A likely paraphrase the words leave short is partly supported...
        (Verdict.NO_EVIDENCE, 0.8, Verdict.PARTIALLY_SUPPORTED),
        (Verdict.NO_EVIDENCE, 0.5, Verdict.NO_EVIDENCE),
        # ...but only the words make a claim fully supported...
        (Verdict.NO_EVIDENCE, 0.99, Verdict.PARTIALLY_SUPPORTED),
        (Verdict.PARTIALLY_SUPPORTED, 0.99, Verdict.PARTIALLY_SUPPORTED),
        # ...and the probability never makes a claim whose words a context holds worse.
        (Verdict.PARTIALLY_SUPPORTED, 0.5, Verdict.PARTIALLY_SUPPORTED),
        (Verdict.FULLY_SUPPORTED, 0.5, Verdict.FULLY_SUPPORTED),
    ],
)
def test_the_probability_lifts_a_claim_the_words_leave_short_to_partial_support(
    lexical: Verdict, probability: float, verdict: Verdict
) -> None:
    reason = "closest passage: context covers 1/4 content words"
    weighed = lexical_support(ClaimVerdict("c1", lexical, reason=reason), probability, CUT)
    assert weighed.verdict is verdict
    assert weighed.entailment == probability


def test_other_weights_can_be_tried() -> None:
    lexical = ClaimVerdict("c1", Verdict.CONTRADICTED, reason="claim says 3; context says 2")
    weights = LexicalWeights(contradicted=0.25)
    assert lexical_support(lexical, 0.8, CUT, weights).entailment == 0.2


async def test_the_judge_weighs_the_same_models_probability() -> None:
    claims = [
        Claim("c1", "The warranty covers parts for 36 months from the date of purchase."),
        Claim("c2", "Claims are handled by Globex Repairs."),
        Claim("c3", "Labour is covered for the first 12 months only."),
    ]
    lexical = await OfflineJudge().verify_claims(claims, [CONTEXT])
    raw = await OfflineJudge(learned=True, min_support=0.0).verify_claims(claims, [CONTEXT])
    assert [v.verdict for v in lexical] == [
        Verdict.CONTRADICTED,
        Verdict.CONTRADICTED,
        Verdict.FULLY_SUPPORTED,
    ]
    for weighed, probability in zip(lexical, raw, strict=True):
        assert probability.entailment is not None and weighed.entailment is not None
        expected = probability.entailment * LEXICAL_WEIGHTS.of(weighed)
        if weighed.verdict is Verdict.CONTRADICTED:
            expected = min(RULED_OUT, expected)
        assert weighed.entailment == pytest.approx(expected)
    assert lexical[0].entailment is not None and lexical[0].entailment <= 0.5
    assert lexical[2].entailment is not None and lexical[2].entailment > 0.9


async def test_without_contexts_nothing_is_supported() -> None:
    (verdict,) = await OfflineJudge().verify_claims([Claim("c1", "Water is wet.")], [])
    assert verdict.verdict is Verdict.NO_EVIDENCE and verdict.entailment == 0.0
