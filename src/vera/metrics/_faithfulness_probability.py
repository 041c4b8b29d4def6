"""Faithfulness probability: the chance, by the judge's own probabilities, that every claim of
a response is supported.

    score = p(claim 1) · p(claim 2) · … · p(claim n)

with p a claim's probability of support (`ClaimVerdict.entailment`), given by the offline
judges, NLI judges and the claims a cascade decides offline. A claim without one (a claim a
cascade sent to its LLM) counts its verdict's ratio weight as its p: FULLY_SUPPORTED 1,
PARTIALLY_SUPPORTED 0.5, NO_EVIDENCE and CONTRADICTED 0. A response with no claims scores 1.0
(status NO_CLAIMS), as `faithfulness` does.

This is the score that *ranks* responses (`vera benchmark`'s AUROC, the calibration block's),
while `faithfulness`, the seeds' mean of verdict weights, is the one every judge shares. A
response is unfaithful when any claim is, so what ranks it is the weakest claim and how many
claims could be wrong: a mean forgets the second, the least supported claim alone the first.
On RAGTruth dev, with `offline:learned`, the product ranks unfaithful answers with AUROC 0.778
against 0.764 for the mean of the probabilities and 0.766 for the least supported claim
(docs/metrics.md). Its default threshold, 0.5, passes a response that more likely than not
holds no unsupported claim, and never one with a claim the judge found NO_EVIDENCE or
CONTRADICTED, whatever its probability (`unsupported_veto`).

A judge that gives no claim a probability (an LLM judge) gives this metric nothing to read: the
result is NOT_APPLICABLE with a reason naming the judge, never a number made from its verdicts.
"""

from __future__ import annotations

import math
from typing import ClassVar

from vera._text._quote import quote_claim
from vera._types import ClaimVerdict, Sample
from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._base import MetricOptions, not_applicable, scored, unsupported_veto
from vera.metrics._faithfulness import RATIO_WEIGHTS

_STAND_IN = RATIO_WEIGHTS
"""The p of a claim the judge gave no probability: its verdict's ratio weight."""
PROBABILITY_JUDGES = "offline, offline:learned, nli:MODEL or cascade"
"""The judges that give claim probabilities, as a reason names them."""


class FaithfulnessProbability(MetricOptions):
    """The probability that every claim of the response is supported: the product of the
    judge's per-claim probabilities of support. Not applicable with a judge that gives none."""

    name: ClassVar[str] = "faithfulness_probability"
    description: ClassVar[str] = (
        "probability that every claim is supported, from the judge's claim probabilities"
    )
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = True

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        """Score one sample from its claims' probabilities of support."""
        if not analysis.claims:
            return scored(
                self,
                1.0,
                "no claims to verify; vacuously every claim is supported",
                status=MetricStatus.NO_CLAIMS,
            )
        if all(v.entailment is None for v in analysis.verdicts):
            judge = f"judge {analysis.judge}" if analysis.judge else "the judge"
            return not_applicable(
                self,
                f"{judge} gives no claim probabilities (ClaimVerdict.entailment); "
                f"faithfulness_probability needs a judge that does: {PROBABILITY_JUDGES}",
            )
        probabilities = {v.claim_id: _probability(v) for v in analysis.verdicts}
        return scored(
            self,
            math.prod(probabilities.values()),
            _reason(analysis, probabilities),
            claim_weights=probabilities,
            veto=unsupported_veto(analysis),
        )


def _probability(verdict: ClaimVerdict) -> float:
    if verdict.entailment is not None:
        return verdict.entailment
    return _STAND_IN[verdict.verdict]


def _reason(analysis: ClaimAnalysis, probabilities: dict[str, float]) -> str:
    """The product in words, naming the claim that pulls it down most, and how many claims
    stood in with their verdict's weight."""
    reason = f"P(every claim supported) = {math.prod(probabilities.values()):.2f}"
    if len(probabilities) > 1:
        # Claim and verdict ids pair up one to one (the runner enforces it).
        weakest = min(analysis.claims, key=lambda c: probabilities[c.id])
        reason += f", least supported {quote_claim(weakest.text)} ({probabilities[weakest.id]:.2f})"
    stand_ins = sum(v.entailment is None for v in analysis.verdicts)
    if stand_ins:
        reason += (
            f"; {stand_ins} of {len(analysis.verdicts)} claims had no probability and count "
            "their verdict's weight (1, 0.5 or 0)"
        )
    return reason
