"""What an LLM judge must reply: the JSON schemas sent to the provider and the models that
validate the replies. One schema per prompt, each a JSON object so every provider's native
structured-output mechanism can carry it.

Validated with a context (`model_validate(data, context=...)`), a reply is also checked
against the sample: `contexts` (how many were shown) makes a verdict that cites a context
that does not exist invalid, and `response` (the answer the claims were taken from) makes a
claim list made mostly of claims untraceable to it invalid (`vera.judges._evidence`). Either
way the judge is re-asked once with the reason, then the sample is an error."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from vera.judges._evidence import MOSTLY_UNTRACEABLE, untraceable
from vera.judges._sentence_ids import SentenceIds
from vera.types import Relevance, RelevanceVerdict, Verdict
from vera.types._errors import JudgeResponseError

__all__ = [
    "EXTRACTION_SCHEMA",
    "MATRIX_SCHEMA",
    "QUOTED_VERIFICATION_SCHEMA",
    "RELEVANCE_SCHEMA",
    "SINGLE_CALL_SCHEMA",
    "TRUTHS_SCHEMA",
    "VERIFICATION_SCHEMA",
    "Extraction",
    "Matrix",
    "MatrixCell",
    "Ratings",
    "RawVerdict",
    "SingleCall",
    "Truths",
    "VerdictFields",
    "Verification",
]

_VERDICT_NAMES = [v.value for v in Verdict]
_VERDICT_FIELDS: dict[str, Any] = {
    "verdict": {"type": "string", "enum": _VERDICT_NAMES},
    "context": {"type": ["integer", "null"]},
    "quote": {"type": "string"},
    "reason": {"type": "string"},
}


# Lean verdicts (verify_claims, single_call): the judge cites a numbered sentence and VERA
# quotes it (`vera.judges._sentence_ids`); a reason only where it tells what the citation
# does not (what is missing, what differs).
_CITED_FIELDS: dict[str, Any] = {
    "verdict": {"type": "string", "enum": _VERDICT_NAMES},
    "sentence": {"type": ["string", "null"]},
    "reason": {"type": "string"},
}


def _list_of(key: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {
                "type": "array",
                "items": {"type": "object", "properties": properties, "required": required},
            }
        },
        "required": [key],
    }


EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}
VERIFICATION_SCHEMA = _list_of(
    "verdicts", {"claim": {"type": "integer"}, **_CITED_FIELDS}, ["claim", "verdict"]
)
QUOTED_VERIFICATION_SCHEMA = _list_of(
    "verdicts", {"claim": {"type": "integer"}, **_VERDICT_FIELDS}, ["claim", "verdict"]
)
TRUTHS_SCHEMA = _list_of(
    "truths", {"context": {"type": "integer"}, "text": {"type": "string"}}, ["context", "text"]
)
RELEVANCE_SCHEMA = _list_of(
    "ratings",
    {
        "text": {"type": "integer"},
        "relevance": {"type": "string", "enum": [r.value for r in Relevance]},
        "reason": {"type": "string"},
    },
    ["text", "relevance"],
)
SINGLE_CALL_SCHEMA = _list_of(
    "claims",
    {"text": {"type": "string"}, **_CITED_FIELDS},
    ["text", "verdict"],
)
MATRIX_SCHEMA = _list_of(
    "claims",
    {
        "claim": {"type": "integer"},
        "contexts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {**_VERDICT_FIELDS, "context": {"type": "integer"}},
                "required": ["context", "verdict"],
            },
        },
    },
    ["claim", "contexts"],
)


def _check_traceable(texts: list[str], info: ValidationInfo) -> None:
    """Refuse a claim list made mostly of claims that cannot come from the response."""
    response = (info.context or {}).get("response")
    given = [text for text in texts if text.strip()]
    if not isinstance(response, str) or not given:
        return
    found = len(untraceable(given, response))
    if found > MOSTLY_UNTRACEABLE * len(given):
        raise ValueError(
            f"{found} of the {len(given)} claims share no word with the answer inside the "
            "<answer> tags; list only the claims the answer itself makes"
        )


class _ExtractedClaim(BaseModel):
    number: int
    text: str


class Extraction(BaseModel):
    claims: list[_ExtractedClaim]

    @field_validator("claims", mode="before")
    @classmethod
    def _numbered_in_order(cls, value: Any) -> Any:
        # The lean reply is a list of strings, numbered by their order; an override prompt
        # may still ask for {"number", "text"} objects.
        if not isinstance(value, list):
            return value
        return [
            {"number": i, "text": item} if isinstance(item, str) else item
            for i, item in enumerate(value, start=1)
        ]

    @model_validator(mode="after")
    def _from_the_response(self, info: ValidationInfo) -> Self:
        _check_traceable([claim.text for claim in self.claims], info)
        return self


def _shown_context(value: int | None, info: ValidationInfo) -> int | None:
    """`value` when it is the number of a context the judge was shown (or None); else the
    reason, as a ValueError pydantic reports as the field's."""
    shown = (info.context or {}).get("contexts")
    if value is not None and isinstance(shown, int) and not 1 <= value <= shown:
        raise ValueError(
            f"context {value} does not exist: there are {shown} contexts; cite one of "
            f"1 to {shown}, or null for none"
        )
    return value


def _shown_sentence(value: str | None, info: ValidationInfo) -> str | None:
    """`value` when it is the id of a sentence the judge was shown (or None); else the reason,
    as a ValueError pydantic reports as the field's."""
    shown = (info.context or {}).get("sentences")
    if value is None or not value.strip() or not isinstance(shown, SentenceIds):
        return value or None
    if shown.resolve(value) is None:
        raise ValueError(
            f"sentence {value!r} does not exist; cite one of {shown.describe_ids()}, "
            "or null for none"
        )
    return value


class _VerdictFields(BaseModel):
    verdict: Verdict
    context: int | None = None
    quote: str = ""
    reason: str = ""
    sentence: str | None = None

    @field_validator("sentence", mode="before")
    @classmethod
    def _sentence_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("sentence")
    @classmethod
    def _cited_sentence_exists(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _shown_sentence(value, info)

    @field_validator("verdict", mode="before")
    @classmethod
    def _parse_verdict(cls, value: Any) -> Verdict:
        try:
            return Verdict.parse(value)
        except JudgeResponseError as exc:  # pydantic turns ValueError into a validation error
            raise ValueError(str(exc)) from None

    @field_validator("context")
    @classmethod
    def _cited_context_exists(cls, value: int | None, info: ValidationInfo) -> int | None:
        # Left unchecked, a quote cited from context 99 of 3 is looked for in every context
        # and silently re-cited to the one that has it.
        return _shown_context(value, info)


VerdictFields = _VerdictFields
"""A verdict as a reply gives it: the verdict, its evidence (a cited sentence, or a context
and quote) and a reason."""


class RawVerdict(_VerdictFields):
    claim: int


class Verification(BaseModel):
    verdicts: list[RawVerdict]


class _Truth(BaseModel):
    context: int
    text: str

    @field_validator("context")
    @classmethod
    def _cited_context_exists(cls, value: int, info: ValidationInfo) -> int:
        # A fact credited to a context that was not shown is refused as a cited verdict is,
        # instead of being dropped without a word.
        return _shown_context(value, info) or value


class Truths(BaseModel):
    truths: list[_Truth]


class _JudgedClaim(_VerdictFields):
    number: int = 0
    text: str


class SingleCall(BaseModel):
    claims: list[_JudgedClaim]

    @field_validator("claims", mode="before")
    @classmethod
    def _numbered_in_order(cls, value: Any) -> Any:
        # The lean reply numbers claims by their order; an override prompt may still number.
        if not isinstance(value, list):
            return value
        return [
            {**item, "number": item.get("number") or i} if isinstance(item, dict) else item
            for i, item in enumerate(value, start=1)
        ]

    @model_validator(mode="after")
    def _from_the_response(self, info: ValidationInfo) -> Self:
        _check_traceable([claim.text for claim in self.claims], info)
        return self


class _Rating(RelevanceVerdict):
    model_config = ConfigDict(frozen=True, extra="ignore")

    text: int


class Ratings(BaseModel):
    ratings: list[_Rating]


class MatrixCell(_VerdictFields):
    context: int


class _MatrixRow(BaseModel):
    claim: int
    contexts: list[MatrixCell]


class Matrix(BaseModel):
    claims: list[_MatrixRow]
