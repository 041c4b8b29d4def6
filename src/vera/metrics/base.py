"""What every metric shares: the claim analysis it reads and the result it returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera.types import Claim, ClaimVerdict, Sample

__all__ = ["ClaimAnalysis", "Metric", "MetricResult", "MetricStatus"]


class ClaimAnalysis(BaseModel):
    """A sample's claims and their verdicts, computed once and read by every claim metric.

    `verdicts[i]` is the verdict on `claims[i]`; the runner enforces that pairing.
    """

    model_config = ConfigDict(frozen=True)

    claims: tuple[Claim, ...]
    verdicts: tuple[ClaimVerdict, ...]


class MetricStatus(StrEnum):
    """Why a metric has the score it has. Only OK and NO_CLAIMS carry a score."""

    OK = "ok"
    NO_CLAIMS = "no_claims"
    NOT_APPLICABLE = "not_applicable"


class MetricResult(BaseModel):
    """One metric's score on one sample, with the reason a person can read.

    `claim_weights` maps each claim id to what it contributed to the score, so a score can be
    explained claim by claim. A NaN or infinite score is refused here, so a metric that
    produces one fails on its sample instead of poisoning the aggregates.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    score: Annotated[float, Field(allow_inf_nan=False)] | None
    passed: bool | None
    status: MetricStatus
    reason: str
    threshold: float
    claim_weights: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Metric(Protocol):
    """A pure function of a sample and its claim analysis.

    `needs_claims` tells the runner to compute the analysis; metrics keep nothing on `self`, so
    one instance serves any number of concurrent samples.
    """

    name: ClassVar[str]
    needs_claims: ClassVar[bool]

    @property
    def threshold(self) -> float: ...

    def score(self, sample: Sample, analysis: ClaimAnalysis | None) -> MetricResult:
        """Score one sample."""
        ...
