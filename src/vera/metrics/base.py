"""What every metric shares: the claim analysis it reads and the result it returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera.types import Claim, ClaimVerdict, RelevanceVerdict, Sample

__all__ = [
    "CitationCheck",
    "ClaimAnalysis",
    "FiniteFloat",
    "Metric",
    "MetricOptions",
    "MetricResult",
    "MetricStatus",
    "Need",
    "not_applicable",
    "passes",
    "scored",
]

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


class Need(StrEnum):
    """A piece of judge work a metric reads. The runner does each piece once per sample, only
    when some selected metric needs it, and every metric that needs it shares the result."""

    CLAIMS = "claims"
    """The response's claims, each verified against the contexts."""
    REFERENCE_IN_RESPONSE = "reference_in_response"
    """The reference's claims verified against the response, and the response's claims
    against the reference (needs a reference)."""
    REFERENCE_IN_CONTEXTS = "reference_in_contexts"
    """The reference's claims verified against the contexts (needs a reference)."""
    RELEVANCE = "relevance"
    """How relevant each context, and the response, is to the query."""
    CITATIONS = "citations"
    """Each claim checked against the contexts its citations name (with CLAIMS)."""


class CitationCheck(BaseModel):
    """One citation attached to one claim, and what the cited context says about the claim.

    `context_index` is None when the label names no context; `verdict` is then None too.
    """

    model_config = ConfigDict(frozen=True)

    claim_id: str
    label: str
    context_index: int | None
    verdict: ClaimVerdict | None


class ClaimAnalysis(BaseModel):
    """A sample's judge work, computed once and read by every metric.

    `verdicts[i]` is the verdict on `claims[i]`; the runner enforces that pairing, and the same
    for the reference's claims. A field is None when no selected metric needed that piece, or
    when the sample has no reference to compare with.
    """

    model_config = ConfigDict(frozen=True)

    claims: tuple[Claim, ...] = ()
    verdicts: tuple[ClaimVerdict, ...] = ()
    reference_claims: tuple[Claim, ...] | None = None
    reference_in_response: tuple[ClaimVerdict, ...] | None = None
    """Verdict on each reference claim, with the response as the only context."""
    response_in_reference: tuple[ClaimVerdict, ...] | None = None
    """Verdict on each response claim, with the reference as the only context."""
    reference_in_contexts: tuple[ClaimVerdict, ...] | None = None
    """Verdict on each reference claim, against the retrieved contexts."""
    context_relevance: tuple[RelevanceVerdict, ...] | None = None
    """One per context, in order."""
    answer_relevance: RelevanceVerdict | None = None
    citations: tuple[CitationCheck, ...] | None = None
    """One per (claim, cited label) pair, in claim order."""


class MetricStatus(StrEnum):
    """Why a metric has the score it has. Only OK and NO_CLAIMS carry a score."""

    OK = "ok"
    NO_CLAIMS = "no_claims"
    NOT_APPLICABLE = "not_applicable"


class MetricResult(BaseModel):
    """One metric's score on one sample, with the reason a person can read.

    `claim_weights` maps each claim id to what it contributed to the score, so a score can be
    explained claim by claim. `sub_scores` are further figures the report aggregates beside the
    score (faithfulness's strict score, the share of samples with a hallucination…). A NaN or
    infinite number is refused here, so a metric that produces one fails on its sample instead
    of poisoning the aggregates.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    score: FiniteFloat | None
    passed: bool | None
    status: MetricStatus
    reason: str
    threshold: float
    claim_weights: dict[str, FiniteFloat] = Field(default_factory=dict)
    sub_scores: dict[str, FiniteFloat] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


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

    name: ClassVar[str]
    description: ClassVar[str]
    needs: ClassVar[frozenset[Need]]
    higher_is_better: ClassVar[bool]

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
) -> MetricResult:
    """A result with a score, passed or failed by the metric's threshold and direction."""
    return MetricResult(
        name=metric.name,
        score=score,
        passed=passes(metric, score),
        status=status,
        reason=reason,
        threshold=metric.threshold,
        claim_weights=claim_weights or {},
        sub_scores=sub_scores or {},
        details=details or {},
    )


def not_applicable(
    metric: Metric, reason: str, *, details: dict[str, Any] | None = None
) -> MetricResult:
    """A result without a score: the sample lacks what the metric measures (a reference…)."""
    return MetricResult(
        name=metric.name,
        score=None,
        passed=None,
        status=MetricStatus.NOT_APPLICABLE,
        reason=reason,
        threshold=metric.threshold,
        details=details or {},
    )
