"""Samples: the query, the response and the retrieved contexts a run evaluates.

Every type here is a frozen pydantic model, so a value can be shared between concurrent tasks
and metrics without copies.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vera._types._claims import Verdict
from vera._types._errors import JudgeResponseError

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Context(BaseModel):
    """One retrieved passage. A bare string in a dataset becomes `Context(text=...)`."""

    model_config = _FROZEN

    text: str
    id: str | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    """What the retriever said of the passage beside its text (its score, its document's
    metadata): kept with it into the report, so a verdict can be traced to its document."""


class Citation(BaseModel):
    """A ground-truth citation: the document (or context) an answer should cite."""

    model_config = _FROZEN

    document_id: str
    quote: str | None = None


class LabelledClaim(BaseModel):
    """A claim of the response and the verdict a person gave it against the contexts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1)
    verdict: Verdict

    @field_validator("verdict", mode="before")
    @classmethod
    def _any_spelling(cls, value: Any) -> Any:
        try:
            return Verdict.parse(value)
        except JudgeResponseError:  # a dataset's field error, not a judge's
            names = ", ".join(v.value for v in Verdict)
            raise ValueError(f"expected one of {names}") from None


class Sample(BaseModel):
    """One evaluation case: a query, the system's response and what it retrieved.

    `response` is None when a pipeline has yet to produce it; `reference` is the grounded
    answer. `answerable` is False for a question the sources cannot answer (a dataset says so
    with `answerable: false`, an explicit null reference, or the category "unanswerable").
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    query: str = ""
    response: str | None = None
    contexts: tuple[Context, ...] = ()
    reference: str | None = None
    citations: tuple[Citation, ...] = ()
    category: str | None = None
    latency_ms: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    metadata: dict[str, Any] = Field(default_factory=dict)
    answerable: bool | None = None
    """None when the dataset does not say."""
    human_faithful: bool | None = None
    """A human's label of the whole response (None: unlabelled); labelled samples calibrate
    the judge (see `vera._stats._calibration`)."""
    human_claims: tuple[LabelledClaim, ...] = ()
    """Claims of the response with a person's verdict each: the judge's verdicts on the same
    claims are compared with them."""

    @field_validator("contexts", mode="before")
    @classmethod
    def _contexts_from_strings(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (Context(text=value),)
        if isinstance(value, list | tuple):
            return tuple(Context(text=v) if isinstance(v, str) else v for v in value)
        return value

    @field_validator("citations", mode="before")
    @classmethod
    def _citations_from_strings(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (Citation(document_id=value),)
        if isinstance(value, list | tuple):
            return tuple(Citation(document_id=v) if isinstance(v, str) else v for v in value)
        return value

    @property
    def unanswerable(self) -> bool:
        """Whether the sources cannot answer the query, so abstaining is the right response."""
        return self.answerable is False or (self.category or "").lower() == "unanswerable"

    @property
    def context_texts(self) -> list[str]:
        """The contexts' texts, in order: what a judge verifies against."""
        return [c.text for c in self.contexts]
