"""Hallucination rate: how much of a response nothing in the context backs.

    score = (claims NO_EVIDENCE or CONTRADICTED) / claims          (lower is better)

The sub-score `hallucinated` is 1 when the sample has at least one such claim, so its mean is
the share of samples with a hallucination. On an unanswerable question (`Sample.unanswerable`)
an abstention is the right answer and scores 0; a confident answer there is itself a
hallucination and scores 1.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from vera._text._abstention import abstains
from vera._types import Sample
from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._base import MetricOptions, scored


class HallucinationRate(MetricOptions):
    """Share of a response's claims with no support, or contradicted, in the context."""

    name: ClassVar[str] = "hallucination_rate"
    description: ClassVar[str] = (
        "share of claims with no evidence or contradicted (lower is better)"
    )
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = False

    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """A sample passes when its rate is at most this; 0 means no hallucinated claim at all."""

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        response = sample.response or ""
        if sample.unanswerable:
            if abstains(response) or not analysis.claims:
                return scored(
                    self,
                    0.0,
                    "unanswerable question, and the response abstains",
                    sub_scores={"hallucinated": 0.0},
                )
            return scored(
                self,
                1.0,
                "unanswerable question, but the response answers it",
                sub_scores={"hallucinated": 1.0},
                claim_weights={c.id: 1.0 for c in analysis.claims},
            )
        if not analysis.claims:
            return scored(
                self,
                0.0,
                "no claims, so nothing hallucinated",
                status=MetricStatus.NO_CLAIMS,
                sub_scores={"hallucinated": 0.0},
            )
        weights = {v.claim_id: float(v.verdict.unsupported) for v in analysis.verdicts}
        bad = sum(weights.values())
        return scored(
            self,
            bad / len(weights),
            f"{bad:.0f} of {len(weights)} claims unsupported or contradicted",
            claim_weights=weights,
            sub_scores={"hallucinated": float(bad > 0)},
        )
