"""The lexical `offline` judge's probability of support: the support model's, weighed by what
the words found (`vera.judges.offline.lexical_support`)."""

from __future__ import annotations

import pytest

from vera.judges.offline import OfflineJudge
from vera.judges.offline.lexical_support import LEXICAL_WEIGHTS, LexicalWeights, lexical_support
from vera.types import Claim, ClaimVerdict, Verdict

CONTEXT = (
    "The warranty covers parts for 24 months from the date of purchase. "
    "Labour is covered for the first 12 months only. Claims are handled by Acme Repairs."
)


@pytest.mark.parametrize(
    ("verdict", "reason", "weight"),
    [
        (Verdict.CONTRADICTED, "claim says 36 months; context says 24 months", 0.5),
        (Verdict.CONTRADICTED, 'claim is negated ("not"); context is not', 0.5),
        (Verdict.NO_EVIDENCE, "no context states 40 euros", 0.6),
        (Verdict.NO_EVIDENCE, "no context names Globex", 0.8),
        (Verdict.NO_EVIDENCE, "closest passage: context covers 1/4 content words", 1.0),
        (Verdict.PARTIALLY_SUPPORTED, "context covers 3/4 content words", 1.0),
        (Verdict.FULLY_SUPPORTED, "context covers 4/4 content words", 1.0),
    ],
)
def test_a_verdict_that_names_what_is_wrong_weighs_the_probability_down(
    verdict: Verdict, reason: str, weight: float
) -> None:
    lexical = ClaimVerdict("c1", verdict, reason=reason)
    assert LEXICAL_WEIGHTS.of(lexical) == weight
    weighed = lexical_support(lexical, 0.9)
    assert weighed.verdict is verdict  # the words still decide the verdict
    assert weighed.entailment == pytest.approx(0.9 * weight)
    assert weighed.reason == f"P(supported) = {0.9 * weight:.2f}; {reason}"


def test_other_weights_can_be_tried() -> None:
    lexical = ClaimVerdict("c1", Verdict.CONTRADICTED, reason="claim says 3; context says 2")
    assert lexical_support(lexical, 0.8, LexicalWeights(contradicted=0.25)).entailment == 0.2


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
        assert weighed.entailment == pytest.approx(
            probability.entailment * LEXICAL_WEIGHTS.of(weighed)
        )
    assert lexical[0].entailment is not None and lexical[0].entailment <= 0.5
    assert lexical[2].entailment is not None and lexical[2].entailment > 0.9


async def test_without_contexts_nothing_is_supported() -> None:
    (verdict,) = await OfflineJudge().verify_claims([Claim("c1", "Water is wet.")], [])
    assert verdict.verdict is Verdict.NO_EVIDENCE and verdict.entailment == 0.0
