"""What an LLM judge must reply: the JSON schemas sent to the provider and the models that
validate the replies. One schema per prompt, each a JSON object so every provider's native
structured-output mechanism can carry it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from vera.errors import JudgeResponseError
from vera.types import Relevance, RelevanceVerdict, Verdict

__all__ = [
    "EXTRACTION_SCHEMA",
    "MATRIX_SCHEMA",
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
    "Verification",
]

_VERDICT_NAMES = [v.value for v in Verdict]
_VERDICT_FIELDS: dict[str, Any] = {
    "verdict": {"type": "string", "enum": _VERDICT_NAMES},
    "context": {"type": ["integer", "null"]},
    "quote": {"type": "string"},
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


EXTRACTION_SCHEMA = _list_of(
    "claims", {"number": {"type": "integer"}, "text": {"type": "string"}}, ["number", "text"]
)
VERIFICATION_SCHEMA = _list_of(
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
    {"number": {"type": "integer"}, "text": {"type": "string"}, **_VERDICT_FIELDS},
    ["number", "text", "verdict"],
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


class _ExtractedClaim(BaseModel):
    number: int
    text: str


class Extraction(BaseModel):
    claims: list[_ExtractedClaim]


class _VerdictFields(BaseModel):
    verdict: Verdict
    context: int | None = None
    quote: str = ""
    reason: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _parse_verdict(cls, value: Any) -> Verdict:
        try:
            return Verdict.parse(value)
        except JudgeResponseError as exc:  # pydantic turns ValueError into a validation error
            raise ValueError(str(exc)) from None


class RawVerdict(_VerdictFields):
    claim: int


class Verification(BaseModel):
    verdicts: list[RawVerdict]


class _Truth(BaseModel):
    context: int
    text: str


class Truths(BaseModel):
    truths: list[_Truth]


class _JudgedClaim(_VerdictFields):
    number: int
    text: str


class SingleCall(BaseModel):
    claims: list[_JudgedClaim]


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
