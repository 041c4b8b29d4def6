"""What every metric shares: the claim analysis it reads and the result it returns.

The data types (`ClaimAnalysis`, `MetricResult`, `Need`, ...) are defined in
`vera._types._results`, below the runner and the report that also use them, and re-exported here.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera._types import Sample
from vera._types._results import (
    ClaimAnalysis,
    MetricResult,
    MetricStatus,
    Need,
)


class MetricOptions(BaseModel):
    """What the built-in metrics share: immutable options and a pass mark between 0 and 1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    higher_is_better: ClassVar[bool] = True
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """A sample passes when its score is at least this (at most, where lower is better)."""


@runtime_checkable
class Metric(Protocol):
    """A pure function of a sample and the judge work it `needs`.

    Metrics keep nothing on `self`, so one instance serves any number of concurrent samples.
    `higher_is_better` is False for rates of bad things (hallucination rate): a sample then
    passes when its score is at most `threshold`.
    """

    description: ClassVar[str]
    needs: ClassVar[frozenset[Need]]
    higher_is_better: ClassVar[bool]

    # A property, not a class variable: a built-in metric names its class, a rubric
    # (`vera.metrics.Rubric`) names each instance.
    @property
    def name(self) -> str: ...

    @property
    def threshold(self) -> float: ...

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        """Score one sample."""
        ...


def passes(metric: Metric, score: float) -> bool:
    """Whether `score` meets `metric`'s threshold, in the metric's direction."""
    return score >= metric.threshold if metric.higher_is_better else score <= metric.threshold


def scored(
    metric: Metric,
    score: float,
    reason: str,
    *,
    status: MetricStatus = MetricStatus.OK,
    claim_weights: dict[str, float] | None = None,
    sub_scores: dict[str, float] | None = None,
    details: dict[str, Any] | None = None,
    veto: str | None = None,
) -> MetricResult:
    """A result with a score, passed or failed by the metric's threshold and direction.
    `veto` fails it whatever its score, and is added to the reason: a probability metric
    vetoes a sample with a claim the judge itself found unsupported (`unsupported_veto`)."""
    if veto is not None:
        reason = f"{reason}; fails: {veto}"
    return MetricResult(
        name=metric.name,
        score=score,
        passed=passes(metric, score) and veto is None,
        status=status,
        reason=reason,
        threshold=metric.threshold,
        claim_weights=claim_weights or {},
        sub_scores=sub_scores or {},
        details=details or {},
    )


def unsupported_veto(analysis: ClaimAnalysis) -> str | None:
    """Why a sample fails a probability metric whatever its probability: a claim the judge
    gave NO_EVIDENCE or CONTRADICTED, which no probability of support overrides (a P of 0.50
    on a contradicted claim would otherwise pass "at least 0.50"). None when there is none."""
    found = [v.verdict.value for v in analysis.verdicts if v.verdict.unsupported]
    if not found:
        return None
    claims = "claim is" if len(found) == 1 else "claims are"
    return f"{len(found)} {claims} {' or '.join(sorted(set(found)))}"


def not_applicable(
    metric: Metric,
    reason: str,
    *,
    fields: tuple[str, ...] = (),
    details: dict[str, Any] | None = None,
) -> MetricResult:
    """A result without a score: the sample lacks what the metric measures (a reference…).
    `fields` name the sample fields that would make it apply, so the reason says what to add:
    "no reference answer to compare with (needs the sample field `reference`)"."""
    if fields:
        named = " and ".join(f"`{field}`" for field in fields)
        reason += f" (needs the sample field{'s' if len(fields) > 1 else ''} {named})"
    return MetricResult(
        name=metric.name,
        score=None,
        passed=None,
        status=MetricStatus.NOT_APPLICABLE,
        reason=reason,
        threshold=metric.threshold,
        details=details or {},
    )
