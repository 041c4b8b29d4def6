"""What an LLM judge must reply: the JSON schemas sent to the provider and the models that
validate the replies. One schema per prompt, each a JSON object so every provider's native
structured-output mechanism can carry it.

Validated with a context (`model_validate(data, context=...)`), a reply is also checked
against the sample: `contexts` (how many were shown) drops the citation of a context that does
not exist, `claims` (the claims asked) reads a claim given by its text as its number, and
`response` (the answer the claims were taken from) makes a claim list made mostly of claims
untraceable to it invalid (`vera.judges._evidence`): the judge is re-asked once with the
reason, then the sample is an error. The compact rows are read as small models write them too:
one row without the list around it, rows run together in one list, a verdict letter in a named
field."""

from __future__ import annotations

import re
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from vera._types import Relevance, RelevanceVerdict, Verdict
from vera._types._errors import JudgeResponseError
from vera.judges._evidence import MOSTLY_UNTRACEABLE, untraceable
from vera.judges._sentence_ids import AnswerSentences

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


def _rows_of(key: str, *, typed: bool = False) -> dict[str, Any]:
    """A compact reply: `key` holds rows, short arrays the prompt describes (a schema spelling
    out their cells costs more tokens than the rows themselves); `typed` says the items are
    arrays, which tells a single-call reply from an extraction's list."""
    rows: dict[str, Any] = {"type": "array"}
    if typed:
        rows["items"] = {"type": "array"}
    return {"type": "object", "properties": {key: rows}, "required": [key]}


# A claim is its text, or (claims by reference) the number of an answer sentence; the items
# are left untyped, as a list of two types costs more tokens than it guides.
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"claims": {"type": "array"}},
    "required": ["claims"],
}
# Compact verdicts (the bundled prompts with reply_format = "compact"): one row per claim,
# [claim, verdict code, sentence id, reason]; a fraction of the named fields' tokens, in the
# reply and in the schema sent with the request.
COMPACT_VERIFICATION_SCHEMA = _rows_of("v")
COMPACT_SINGLE_CALL_SCHEMA = _rows_of("claims", typed=True)
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


def _is_claim(item: Any) -> bool:
    return isinstance(item, str | int) and not isinstance(item, bool)


def _claim_text(item: str | int, info: ValidationInfo) -> str:
    """A claim's text: `item` itself (a copied numbered line without its number), or the
    answer sentence its number refers to."""
    answer = (info.context or {}).get("answer")
    if isinstance(item, str):
        return answer.unnumbered(item) if isinstance(answer, AnswerSentences) else item
    if not isinstance(answer, AnswerSentences):
        raise ValueError(
            f"claim {item} is a number, but the answer's sentences were not numbered; "
            "write each claim out as text"
        )
    return answer.expand(item)


def _expanded(item: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """{"text": the sentence} for a judged claim given by reference; else nothing to change."""
    text = item.get("text")
    if isinstance(text, int) and not isinstance(text, bool):
        return {"text": _claim_text(text, info)}
    return {}


_CODES = {
    "F": Verdict.FULLY_SUPPORTED,
    "P": Verdict.PARTIALLY_SUPPORTED,
    "N": Verdict.NO_EVIDENCE,
    "C": Verdict.CONTRADICTED,
}
# The bundled verify_claims rows end with a word answering "do the sentences say this?": a
# 1.5B model read the letter C as "consistent" and flagged every answer (issue 45), where it
# uses yes and no as meant. Only in rows: a named field's "no" keeps Verdict.parse's meaning.
# "true" is the model's own word for yes beside the asked "false" (measured, verify_claims/7).
_WORDS = {
    "YES": Verdict.FULLY_SUPPORTED,
    "TRUE": Verdict.FULLY_SUPPORTED,
    "PARTLY": Verdict.PARTIALLY_SUPPORTED,
    "NO": Verdict.NO_EVIDENCE,
    "FALSE": Verdict.CONTRADICTED,
}


def _row_verdict(cell: Any) -> Verdict | None:
    """The verdict a row's cell gives as a letter or a word; None when it gives none."""
    if not isinstance(cell, str):
        return None
    key = cell.strip().strip(".!").upper()
    return _CODES.get(key) or _WORDS.get(key)


def _compact_row(row: Any, first: str) -> dict[str, Any]:
    """A compact row as the named fields; `first` names its first cell ("claim": a number;
    "text": a claim's text or an answer sentence's number). Two layouts: single_call's
    [first, verdict, sentence id, reason] and verify_claims's [first, sentence id, verdict,
    reason], the reason also read before the verdict (the verdict cell tells which). Too
    short or not a row at all is a ValueError that tells the judge the shape; cells after the
    reason (a second quote) are left out."""
    if not isinstance(row, list) or len(row) < 2:
        # In the words of the prompt that asked: verify_claims puts the sentence first.
        cells = (
            "sentence number, verdict, reason"
            if first == "claim"
            else "verdict, sentence id, reason"
        )
        raise ValueError(f"each entry must be a row [{first}, {cells}], got {row!r}")
    last = next((i for i in range(len(row) - 1, 1, -1) if _row_verdict(row[i])), None)
    if _row_verdict(row[1]) is None and last is not None:
        # The reason is the other text cell, before the verdict as asked or after it.
        reasons = [c for i, c in enumerate(row[2:], start=2) if i != last and isinstance(c, str)]
        fields = {first: row[0], "verdict": _row_verdict(row[last]), "sentence": row[1]}
        return {**fields, "reason": reasons[0]} if reasons else fields
    code = row[1]
    verdict = _row_verdict(code)
    if verdict is None:
        try:
            verdict = Verdict.parse(code)
        except JudgeResponseError:
            raise ValueError(
                f"unknown verdict {code!r} in {row!r}; a verdict is one of yes, partly, no, "
                "false, or the letter F, P, N or C the prompt names"
            ) from None
    fields = {first: row[0], "verdict": verdict}
    if len(row) > 2:
        fields["sentence"] = row[2]
    if len(row) > 3:
        fields["reason"] = row[3] if row[3] is not None else ""
    return fields


def _from_rows(data: Any, key: str, rows_key: str, first: str) -> Any:
    """`data` with a compact reply's rows under `rows_key` turned into `key`'s objects;
    any other reply (the named fields an override prompt asks for) as it came."""
    if not isinstance(data, dict) or rows_key not in data or (key in data and key != rows_key):
        return data
    rows = data[rows_key]
    if not isinstance(rows, list):
        return data
    if rows and not isinstance(rows[0], list | dict):
        # Rows not wrapped in the list of rows, one after another (a small model's habit).
        rows = _split_flat(rows)
        if first == "claim":  # a row whose claim is no number answers no claim asked
            rows = [row for row in rows if _is_number(row[0])]
    read: list[Any] = []
    problems: list[ValueError] = []
    for row in rows:
        try:
            read.append(_compact_row(row, first) if isinstance(row, list) else row)
        except ValueError as problem:
            if first != "claim":  # a single-call row is a claim: dropping it would hide one
                raise
            problems.append(problem)
    if problems and not read:
        raise problems[0]
    # A verification row that cannot be read costs its claim, not the sample: the claim
    # gets no verdict from this reply, and is asked again alone.
    return {**data, key: read}


def _is_code(cell: Any) -> bool:
    return _row_verdict(cell) is not None


def _is_number(cell: Any) -> bool:
    return (isinstance(cell, int) and not isinstance(cell, bool)) or (
        isinstance(cell, str) and cell.strip().isdigit()
    )


def _split_flat(cells: list[Any]) -> list[list[Any]]:
    """Rows written one after another in one list: with the verdict second, a row starts at
    each cell followed by a verdict; with it third (verify_claims), at each claim number two
    cells before one; with the reason before a last verdict, a row ends at each verdict that
    a claim number or the list's end follows. One row when none fits."""
    for offset in (1, 2):
        starts = [
            i
            for i in range(len(cells) - offset)
            if _is_code(cells[i + offset])
            and not any(_is_code(cell) for cell in cells[i : i + offset])
            and (offset == 1 or _is_number(cells[i]))
        ]
        if starts and starts[0] == 0:
            return [cells[a:b] for a, b in zip(starts, [*starts[1:], len(cells)], strict=True)]
    ends = [
        i + 1
        for i in range(2, len(cells))
        if _is_code(cells[i]) and (i + 1 == len(cells) or _is_number(cells[i + 1]))
    ]
    if len(ends) < 2 or ends[-1] != len(cells):
        return [cells]
    return [cells[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


class _ExtractedClaim(BaseModel):
    number: int
    text: str


class Extraction(BaseModel):
    claims: list[_ExtractedClaim]

    @field_validator("claims", mode="before")
    @classmethod
    def _numbered_in_order(cls, value: Any, info: ValidationInfo) -> Any:
        # The lean reply lists texts and sentence numbers (claims by reference), numbered by
        # their order; an override prompt may still ask for {"number", "text"} objects.
        if not isinstance(value, list):
            return value
        return [
            {"number": i, "text": _claim_text(item, info)} if _is_claim(item) else item
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
    def _blank_is_none(cls, value: str | None) -> str | None:
        # A sentence that does not exist is no reason to ask again: it costs the verdict its
        # citation (`vera.judges._asking.evidence`), not the sample.
        return value if value and value.strip() else None

    @field_validator("verdict", mode="before")
    @classmethod
    def _parse_verdict(cls, value: Any) -> Verdict:
        if isinstance(value, str) and value.strip().upper() in _CODES:
            return _CODES[value.strip().upper()]  # the compact rows' letter, in a named field
        try:
            return Verdict.parse(value)
        except JudgeResponseError as exc:  # pydantic turns ValueError into a validation error
            raise ValueError(str(exc)) from None

    @field_validator("context")
    @classmethod
    def _cited_context_exists(cls, value: int | None, info: ValidationInfo) -> int | None:
        # Context 99 of 3 costs the citation, not the sample; the quote is then looked for in
        # every context, and found only where it is verbatim.
        shown = (info.context or {}).get("contexts")
        if value is not None and isinstance(shown, int) and not 1 <= value <= shown:
            return None
        return value


VerdictFields = _VerdictFields
"""A verdict as a reply gives it: the verdict, its evidence (a cited sentence, or a context
and quote) and a reason."""


class RawVerdict(_VerdictFields):
    claim: int


class Verification(BaseModel):
    verdicts: list[RawVerdict]

    @model_validator(mode="before")
    @classmethod
    def _compact(cls, data: Any, info: ValidationInfo) -> Any:
        # The bundled prompt's compact reply {"v": [[1, "F", "2.3"], ...]}; an override
        # prompt's {"verdicts": [{...}]} is read as it is.
        if isinstance(data, dict) and "verdict" in data and "v" not in data:
            data = {"verdicts": [data]}  # one verdict, not wrapped in the list asked for
        data = _without_unjudged(_from_rows(data, "verdicts", "v", "claim"))
        return _claims_by_text(data, info)


def _without_unjudged(data: Any) -> Any:
    """`data` without the named-fields entries that give no verdict (a small model's reason
    with the verdict left out, measured on issue 45's 1.5B model): like an unreadable row, such
    an entry costs its claim, asked again alone, not the sample. A reply where no entry gives
    one is left whole, for validation to refuse and the judge to be re-asked."""
    verdicts = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(verdicts, list):
        return data
    judged = [v for v in verdicts if not isinstance(v, dict) or v.get("verdict") is not None]
    return {**data, "verdicts": judged} if judged else data


def _plain(text: str) -> str:
    return " ".join(re.sub(r"^\s*\d+[.)]?\s+", "", text).strip(" .\"'").split()).lower()


def _claims_by_text(data: Any, info: ValidationInfo) -> Any:
    """`data` with each verdict's claim given by its text (as a small model writes it, with
    or without the number it was listed under) as the claim's number; a text that matches no
    claim asked (the `claims` of the context) is left, for validation to refuse."""
    asked = (info.context or {}).get("claims")
    verdicts = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(asked, list) or not isinstance(verdicts, list):
        return data
    plain = [_plain(text) for text in asked]
    fixed = []
    for item in verdicts:
        claim = item.get("claim") if isinstance(item, dict) else None
        if isinstance(claim, str) and not claim.strip().isdigit() and _plain(claim) in plain:
            item = {**item, "claim": plain.index(_plain(claim)) + 1}
        fixed.append(item)
    return {**data, "verdicts": fixed}


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

    @model_validator(mode="before")
    @classmethod
    def _compact(cls, data: Any) -> Any:
        # The bundled prompt's compact rows {"claims": [[1, "F", "2.3"], ["text", "N"]]}.
        return _from_rows(data, "claims", "claims", "text")

    @field_validator("claims", mode="before")
    @classmethod
    def _numbered_in_order(cls, value: Any, info: ValidationInfo) -> Any:
        # The lean reply numbers claims by their order, each a text or an answer sentence's
        # number (a claim by reference); an override prompt may still number.
        if not isinstance(value, list):
            return value
        return [
            {**item, "number": item.get("number") or i, **_expanded(item, info)}
            if isinstance(item, dict)
            else item
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


# What small models put in a claim list besides claims (issue 45: on 169 RAGTruth claims of a
# 1.5B model, 14 preambles or remarks on sources and 34 list numbers).
_LIST_MARK = re.compile(r"^\s*(?:(?:claim\s*)?\d+\s*[.):]|[-*\u2022])\s+", re.IGNORECASE)
_PLEASANTRY = re.compile(
    r"^\s*(?:sure|certainly|of course|okay|ok|absolutely|great)\b[\s!.,:]*", re.IGNORECASE
)
_ON_SOURCES = re.compile(
    r"^\s*(?:based on|according to|as (?:stated|mentioned|described) in|from)\s+(?:the\s+)?"
    r"(?:given\s+|provided\s+|above\s+|following\s+)?(?:passages?|contexts?|information|"
    r"documents?|sources?|texts?|answer)\b[\s,:]*",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"^\s*(?:here\s+(?:is|are)|the following|below\s+(?:is|are)|the (?:atomic |factual )?"
    r"claims\b)",
    re.IGNORECASE,
)


def cleaned_claim(text: str) -> str:
    """`text` without what is no claim: a list number, a pleasantry ("Sure!"), a remark on the
    sources ("Based on the given passages,"); "" when nothing else is left, or when what is
    left only leads in to a list ("Here are the claims:")."""
    text = _LIST_MARK.sub("", text, count=1)
    text = _PLEASANTRY.sub("", text, count=1)
    text = _ON_SOURCES.sub("", text, count=1).strip()
    if not any(char.isalnum() for char in text) or _LEAD_IN.match(text) or text.endswith(":"):
        return ""
    return text


def claim_texts(texts: list[str]) -> list[str]:
    """An extraction's claims, each `cleaned_claim`, and one that holds several sentences (an
    answer returned whole, as one claim) split into its sentences."""
    found: list[str] = []
    for text in texts:
        cleaned = cleaned_claim(text)
        if not cleaned:
            continue
        parts = AnswerSentences.of(cleaned).sentences
        found.extend(part for part in (cleaned_claim(p) for p in parts) if part)
    return found
