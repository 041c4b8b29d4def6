"""Field names users bring from other tools, mapped onto VERA's `Sample` fields.

One row is normalised into the keyword arguments of `Sample`; every key the row used is
remembered, so an error names the field as the user spelled it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from vera._json import JsonRefused, loads_bounded
from vera._types._errors import DatasetError
from vera.datasets._agent_fields import (
    AGENT_FIELDS,
    AGENT_NAMES,
    AgentFieldProblem,
    agent_values,
)

# Canonical field -> accepted names, VERA's own first. Sources: RAGAS (user_input, response,
# retrieved_contexts, reference), DeepEval (input, actual_output, retrieval_context,
# expected_output), Axion (query, actual_output, expected_output, retrieved_content, latency)
# and seed 001 (grounded_answer).
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "sample_id", "query_id", "question_id"),
    "query": ("query", "question", "user_input", "input"),
    "response": ("response", "answer", "actual_output", "output"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "retrieved_content"),
    "reference": ("reference", "ground_truth", "expected_output", "grounded_answer"),
    "citations": ("citations",),
    "category": ("category",),
    "latency_ms": ("latency_ms",),
    "metadata": ("metadata",),
    "answerable": ("answerable",),
    "human_faithful": ("human_faithful",),
    "human_claims": ("human_claims",),
}
# Keys of VERA's own layouts that are no `Sample` field: kept in `metadata` like any other
# column, but not reported as unread, since VERA wrote them (seed 001's and `vera generate`'s
# `expected_score`, the score a grounded answer should get).
OWN_METADATA_KEYS = frozenset({"expected_score"})
# DeepEval's `context` is the ideal context, not what was retrieved; it only stands in for
# the contexts when no retrieval field is present.
FALLBACK_CONTEXT_KEY = "context"
# Axion records latency in seconds.
LATENCY_SECONDS_KEY = "latency"


FieldMap = Mapping[str, str]
"""VERA field -> the column that holds it (`--field contexts=docs`, `fields=` in Python,
`[tool.vera.fields]`), as RAGAS's `column_map`: the column is read as that field, before any
of the field's usual names."""

MAPPABLE = tuple(name for name in ALIASES if name != "metadata")
MESSAGES_FIELD = "messages"
"""The field of a conversation row that holds its messages; mapped like a sample field
(`--field messages=chat`) where a column of another name holds them."""


def check_field_map(fields: Mapping[str, object]) -> dict[str, str]:
    """`fields` checked: each key a VERA field, each value a column name, no column given to
    two fields. Raises `ValueError` saying which entry is wrong and what is accepted."""
    checked: dict[str, str] = {}
    for field, column in fields.items():
        if field not in MAPPABLE and field not in (MESSAGES_FIELD, *AGENT_FIELDS):
            raise ValueError(
                f"field mapping {field}={column}: {field!r} is not a VERA field; map one of "
                f"{', '.join((*MAPPABLE, *AGENT_FIELDS))}, or {MESSAGES_FIELD} for a "
                "conversation's messages (e.g. --field contexts=docs)"
            )
        if not isinstance(column, str) or not column.strip():
            raise ValueError(f"field mapping {field}={column!r}: give the column's name")
        checked[field] = column.strip()
    columns = list(checked.values())
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise ValueError(f"field mapping: column {twice[0]!r} is mapped to two fields")
    return checked


def source_field_map(fields: FieldMap | None) -> dict[str, str]:
    """`check_field_map` for a sample source: a wrong entry is a `DatasetError` (exit 2)."""
    try:
        return check_field_map(fields or {})
    except ValueError as exc:
        raise DatasetError(str(exc)) from None


def parse_field_option(values: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--field FIELD=COLUMN` options as a mapping (checked by `check_field_map`)."""
    pairs: dict[str, str] = {}
    for value in values:
        field, sep, column = value.partition("=")
        if not sep:
            raise ValueError(
                f"--field {value!r}: expected FIELD=COLUMN, e.g. --field contexts=docs"
            )
        pairs[field.strip()] = column
    return check_field_map(pairs)


def _accepted_names(fields: FieldMap) -> dict[str, tuple[str, ...]]:
    """Each field's accepted names: its mapped column first, and no column that is mapped
    to another field."""
    mapped = set(fields.values())
    return {
        canonical: (
            *((fields[canonical],) if canonical in fields else ()),
            *(n for n in names if n not in mapped),
        )
        for canonical, names in ALIASES.items()
    }


class RowProblem(Exception):
    """A row's field is invalid; the reader adds the file and line."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class NormalisedRow:
    """`Sample` keyword arguments plus the user's spelling of each field."""

    values: dict[str, Any]
    source_keys: dict[str, str]
    unrecognised: tuple[str, ...] = ()
    """Row keys that are no field or alias and went into `metadata`."""


def normalise_row(
    row: Mapping[str, Any], *, from_csv: bool = False, fields: FieldMap | None = None
) -> NormalisedRow:
    """Map one raw row onto `Sample` fields; unknown keys are kept in `metadata`.

    CSV cells are always strings, so with `from_csv` an empty cell is null and list or object
    fields are read from JSON (or a Python literal, as pandas writes lists). `fields` maps
    VERA fields to the row's own column names (see `FieldMap`).
    """
    values: dict[str, Any] = {}
    source_keys: dict[str, str] = {}
    used: set[str] = set()
    names_of = _accepted_names(fields) if fields else ALIASES
    for canonical, names in names_of.items():
        present = [n for n in names if n in row]
        if len(present) > 1:
            raise RowProblem(
                present[1], f"both '{present[0]}' and '{present[1]}' give the {canonical}"
            )
        if present:
            key = present[0]
            used.add(key)
            source_keys[canonical] = key
            values[canonical] = _cell(row[key], canonical, key, from_csv)
    if "contexts" not in values and FALLBACK_CONTEXT_KEY in row.keys() - used:
        used.add(FALLBACK_CONTEXT_KEY)
        source_keys["contexts"] = FALLBACK_CONTEXT_KEY
        values["contexts"] = _cell(row[FALLBACK_CONTEXT_KEY], "contexts", "context", from_csv)
    if LATENCY_SECONDS_KEY in row.keys() - used and "latency_ms" not in values:
        used.add(LATENCY_SECONDS_KEY)
        source_keys["latency_ms"] = LATENCY_SECONDS_KEY
        seconds = _cell(row[LATENCY_SECONDS_KEY], "latency_ms", "latency", from_csv)
        if seconds is not None:
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise RowProblem("latency", f"expected a number of seconds, got {seconds!r}")
            values["latency_ms"] = float(seconds) * 1000.0

    reference_key = source_keys.get("reference")
    if reference_key is not None and row[reference_key] is None and "answerable" not in values:
        # An explicit null reference (seed 001: "nil if unanswerable") marks an unanswerable
        # question; a missing key only means no reference was written.
        values["answerable"] = False
    agent = _agent_fields(row, fields, used)
    extra = {k: v for k, v in row.items() if k not in used}
    for key in extra:
        _refuse_misspelling(key)
    if extra or agent:
        metadata = values.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise RowProblem(source_keys.get("metadata", "metadata"), "expected an object")
        values["metadata"] = {**extra, **agent, **metadata}
    if values.get("id") is not None and isinstance(values["id"], int | float):
        values["id"] = str(values["id"])
    return NormalisedRow(
        values={k: v for k, v in values.items() if v is not None},
        source_keys=source_keys,
        unrecognised=tuple(k for k in extra if k not in OWN_METADATA_KEYS),
    )


def _agent_fields(
    row: Mapping[str, Any], fields: FieldMap | None, used: set[str]
) -> dict[str, Any]:
    """The row's agent fields (`vera.datasets._agent_fields`), their keys added to `used`."""
    try:
        agent, keys = agent_values(row, fields)
    except AgentFieldProblem as exc:
        raise RowProblem(exc.field, exc.problem) from None
    used |= keys
    return agent


_KNOWN_NAMES: dict[str, str] = {
    name: canonical for canonical, names in ALIASES.items() for name in names
} | {FALLBACK_CONTEXT_KEY: "contexts", LATENCY_SECONDS_KEY: "latency_ms"}
_KNOWN_NAMES |= {name: field for field, names in AGENT_NAMES.items() for name in names}


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, row by row."""
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, start=1):
        current = [i]
        for j, right in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
            )
        previous = current
    return previous[-1]


@lru_cache(maxsize=4096)
def probable_field(key: str) -> str | None:
    """The field name `key` is most likely a misspelling of, or None when it resembles none.

    Cached: every row of a file repeats the same keys, and this runs for each unknown one.

    Close means: the same name in another case, or at most one edit away for names of up to
    five letters and two for longer ones (`respnse`, `retrieved_context`, `Query`).
    """
    lowered = key.strip().lower()
    if not lowered or key in _KNOWN_NAMES:
        return None
    allowed = 1 if len(lowered) <= 5 else 2
    best: tuple[int, str] | None = None
    for name in _KNOWN_NAMES:
        distance = _edit_distance(lowered, name)
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, name)
    return best[1] if best is not None else None


def _refuse_misspelling(key: str) -> None:
    """A field that is nearly a known one is a mistake, not metadata: kept as metadata, its
    column would silently go unread (every row "needs a pipeline", every claim NO_EVIDENCE)."""
    meant = probable_field(key)
    if meant is None:
        return
    canonical = _KNOWN_NAMES[meant]
    alias = "" if meant == canonical else f", read as the {canonical}"
    raise RowProblem(
        key,
        f"unknown field '{key}': did you mean '{meant}'{alias}? Rename it, or put it under "
        "'metadata' to keep it as it is",
    )


_STRUCTURED = {"contexts", "citations", "metadata"}
_NUMERIC = {"latency_ms"}


def _cell(value: Any, canonical: str, key: str, from_csv: bool) -> Any:
    if not from_csv or not isinstance(value, str):
        return value
    text = value.strip()
    if text == "":
        return None
    if canonical in _NUMERIC or key == LATENCY_SECONDS_KEY:
        try:
            return float(text)
        except ValueError:
            raise RowProblem(key, f"expected a number, got {value!r}") from None
    if canonical in _STRUCTURED and text[0] in "[{":
        return _parse_structured(text, key)
    return value


def _parse_structured(text: str, key: str) -> Any:
    try:
        return loads_bounded(text)
    except JsonRefused as exc:
        raise RowProblem(key, exc.problem) from None
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        raise RowProblem(key, "expected a JSON list or object in this cell") from None
