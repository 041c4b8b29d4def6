"""Grounding precision, recall and F1: the response's claims against the context, and the
reference's claims against the response.

    grounding_precision = grounded response claims / response claims
    grounding_recall    = reference claims the response states / reference claims
    grounding_f1        = 2 · P · R / (P + R)

A claim is grounded when its verdict is FULLY or PARTIALLY supported; for judges that give an
entailment probability (NLI, the offline judges), when that probability is at least
`min_entailment` (0.70, as seed 001 sets it) and the verdict is not NO_EVIDENCE or
CONTRADICTED.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import Field

from vera._types import DEFAULT_MIN_ENTAILMENT, ClaimVerdict, Sample, Verdict
from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._base import MetricOptions, not_applicable, scored

_GROUNDED = frozenset({Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED})


def is_grounded(verdict: ClaimVerdict, min_entailment: float = DEFAULT_MIN_ENTAILMENT) -> bool:
    """Whether a verdict counts as grounded: never when it is NO_EVIDENCE or CONTRADICTED,
    else by probability where the judge gives one."""
    if verdict.verdict.unsupported:
        return False
    if verdict.entailment is not None:
        return verdict.entailment >= min_entailment
    return verdict.verdict in _GROUNDED


def _share(verdicts: Sequence[ClaimVerdict], min_entailment: float) -> tuple[dict[str, float], int]:
    weights = {v.claim_id: float(is_grounded(v, min_entailment)) for v in verdicts}
    return weights, int(sum(weights.values()))


class GroundedOptions(MetricOptions):
    """Options of the metrics that count grounded claims."""

    min_entailment: float = Field(default=DEFAULT_MIN_ENTAILMENT, ge=0.0, le=1.0)
    """For judges that give an entailment probability: the least that counts as grounded."""


class GroundingPrecision(GroundedOptions):
    """Share of the response's claims that the context grounds."""

    name: ClassVar[str] = "grounding_precision"
    description: ClassVar[str] = "share of the response's claims grounded in the context"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        if not analysis.claims:
            return scored(self, 1.0, "no claims to ground", status=MetricStatus.NO_CLAIMS)
        weights, grounded = _share(analysis.verdicts, self.min_entailment)
        return scored(
            self,
            grounded / len(weights),
            f"{grounded} of {len(weights)} response claims grounded in the context",
            claim_weights=weights,
        )


class GroundingRecall(GroundedOptions):
    """Share of the reference answer's claims that the response states."""

    name: ClassVar[str] = "grounding_recall"
    description: ClassVar[str] = "share of the reference answer's claims present in the response"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.REFERENCE_IN_RESPONSE})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        recall = _recall(analysis, self.min_entailment)
        if recall is None:
            return not_applicable(
                self,
                "no reference answer (or it has no claims) to recall",
                fields=("reference",),
            )
        value, covered, total = recall
        return scored(self, value, f"{covered} of {total} reference claims in the response")


class GroundingF1(GroundedOptions):
    """Harmonic mean of grounding precision and recall."""

    name: ClassVar[str] = "grounding_f1"
    description: ClassVar[str] = "harmonic mean of grounding precision and grounding recall"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS, Need.REFERENCE_IN_RESPONSE})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        recall = _recall(analysis, self.min_entailment)
        if recall is None:
            return not_applicable(
                self,
                "no reference answer (or it has no claims) to recall",
                fields=("reference",),
            )
        r = recall[0]
        if analysis.claims:
            _, grounded = _share(analysis.verdicts, self.min_entailment)
            p = grounded / len(analysis.claims)
        else:
            p = 1.0
        f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
        return scored(
            self,
            f1,
            f"precision {p:.2f}, recall {r:.2f}",
            sub_scores={"precision": p, "recall": r},
        )


def _recall(analysis: ClaimAnalysis, min_entailment: float) -> tuple[float, int, int] | None:
    verdicts = analysis.reference_in_response
    if not verdicts:
        return None
    _, covered = _share(verdicts, min_entailment)
    return covered / len(verdicts), covered, len(verdicts)
