"""What a metric reads and what it returns: the claim analysis of a sample, and a result.

These are plain data, shared by the claim analysis that fills a `ClaimAnalysis`
(`vera._analysis`), the metrics that read it and the report that stores each `MetricResult`;
the behaviour around them (the `Metric` protocol, `scored`, `not_applicable`) stays in
`vera.metrics`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from vera._types._claims import Claim, ClaimVerdict, RelevanceVerdict
from vera._types._entailment import EntailmentMatrix
from vera._types._rubric import RubricAnswers

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
    CHUNK_ENTAILMENT = "chunk_entailment"
    """The response's and the reference's claims each verified against every chunk alone, plus
    the REFERENCE_IN_RESPONSE work: RAGChecker's claim-by-chunk matrix (needs a reference)."""
    RUBRIC = "rubric"
    """Each rubric metric's checklist answered item by item (`vera.metrics.Rubric`)."""


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
    chunk_entailment: EntailmentMatrix | None = None
    """The claim-by-chunk entailment matrix (`Need.CHUNK_ENTAILMENT`)."""
    rubrics: tuple[RubricAnswers, ...] | None = None
    """Each rubric's verdicts, by checklist (`Need.RUBRIC`); None where the judge answers no
    rubric (the offline judge)."""
    judge: str | None = None
    """The spec of the judge that did the work, so a metric can say which judge lacks what it
    reads (None where the analysis was built by hand)."""


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
