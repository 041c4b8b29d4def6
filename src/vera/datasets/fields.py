"""Field names users bring from other tools, mapped onto VERA's `Sample` fields.

One row is normalised into the keyword arguments of `Sample`; every key the row used is
remembered, so an error names the field as the user spelled it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["NormalisedRow", "RowProblem", "normalise_row"]

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
}
# DeepEval's `context` is the ideal context, not what was retrieved; it only stands in for
# the contexts when no retrieval field is present.
FALLBACK_CONTEXT_KEY = "context"
# Axion records latency in seconds.
LATENCY_SECONDS_KEY = "latency"


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


def normalise_row(row: Mapping[str, Any], *, from_csv: bool = False) -> NormalisedRow:
    """Map one raw row onto `Sample` fields; unknown keys are kept in `metadata`.

    CSV cells are always strings, so with `from_csv` an empty cell is null and list or object
    fields are read from JSON (or a Python literal, as pandas writes lists).
    """
    values: dict[str, Any] = {}
    source_keys: dict[str, str] = {}
    used: set[str] = set()
    for canonical, names in ALIASES.items():
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
    if "contexts" not in values and FALLBACK_CONTEXT_KEY in row:
        used.add(FALLBACK_CONTEXT_KEY)
        source_keys["contexts"] = FALLBACK_CONTEXT_KEY
        values["contexts"] = _cell(row[FALLBACK_CONTEXT_KEY], "contexts", "context", from_csv)
    if LATENCY_SECONDS_KEY in row and "latency_ms" not in values:
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
    extra = {k: v for k, v in row.items() if k not in used}
    if extra:
        metadata = values.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise RowProblem(source_keys.get("metadata", "metadata"), "expected an object")
        values["metadata"] = {**extra, **metadata}
    if values.get("id") is not None and isinstance(values["id"], int | float):
        values["id"] = str(values["id"])
    return NormalisedRow(
        values={k: v for k, v in values.items() if v is not None}, source_keys=source_keys
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
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise RowProblem(key, "expected a JSON list or object in this cell") from None
