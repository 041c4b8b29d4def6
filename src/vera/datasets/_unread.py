"""Columns that were probably meant to be read: a field under a name VERA does not know.

Renamed `retrieved_contexts` to `docs`, a dataset gives every sample no contexts; every
claim is then NO_EVIDENCE and every score 0, which looks like a result. Renamed `response`
to `reply`, every sample "needs a pipeline". Before a run judges anything, `unread_columns`
finds those cases and names, for each field no sample has, the column that holds it, chosen
by what it holds: a list of texts is the contexts, the longest text the response, and a
shorter text the query (`prompt`, `instruction`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vera.datasets._source import SampleSource


def _is_text(value: Any) -> bool:
    """A string, or a list of strings or of `{"text": ...}` objects: what contexts look like."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | tuple) and value:
        return all(
            isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("text"), str))
            for item in value
        )
    return False


def _length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return sum(len(item if isinstance(item, str) else item["text"]) for item in value)


@dataclass
class UnreadColumns:
    """For each of contexts, response and query that no sample read: the unread column that
    probably holds it (None when none does). `missing` names the fields no sample had."""

    contexts: str | None = None
    response: str | None = None
    query: str | None = None
    missing: frozenset[str] = frozenset()
    contexts_listed: bool = False
    """The contexts' column holds lists of texts (not one text a row)."""

    def flags(self) -> str:
        """The `--field` flags that map every column found, e.g. `--field contexts=docs`."""
        found = {"contexts": self.contexts, "response": self.response, "query": self.query}
        return " ".join(f"--field {f}={c}" for f, c in found.items() if c is not None)

    def python(self) -> str:
        """The same mapping as `fields=` takes it in Python."""
        found = {"contexts": self.contexts, "response": self.response, "query": self.query}
        return repr({f: c for f, c in found.items() if c is not None})


@dataclass
class _Seen:
    lists: dict[str, int] = field(default_factory=dict)
    texts: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, value: Any) -> None:
        kind = self.texts if isinstance(value, str) else self.lists
        kind[key] = kind.get(key, 0) + _length(value)


def unread_columns(source: SampleSource, limit: int | None = None) -> UnreadColumns:
    """What the (first `limit`) samples lack of contexts, response and query, and for each the
    unread column (one of the source's `unrecognised_fields`) that probably holds it.

    A column of lists of texts is taken for the contexts before any text column; the longest
    text column for the response, the next for the query (so `prompt` next to `output` is
    the question, not the contexts). No contexts column is named for a dataset without
    responses: it needs a pipeline, which brings its own contexts. Stops at the first sample
    with both contexts and a response, so a dataset that has them costs one row."""
    has = {"contexts": False, "response": False, "query": False}
    seen = _Seen()
    for sample in itertools.islice(source, limit):
        has["contexts"] |= bool(sample.contexts)
        has["response"] |= sample.response is not None
        has["query"] |= bool(sample.query)
        if has["contexts"] and has["response"]:
            return UnreadColumns()
        # Read after each sample: every pass starts the source's set afresh and fills it.
        unread = source.unrecognised_fields
        for key, value in sample.metadata.items():
            if key in unread and _is_text(value):
                seen.add(key, value)
    return _assign(seen, frozenset(f for f, found in has.items() if not found))


def _assign(seen: _Seen, missing: frozenset[str]) -> UnreadColumns:
    texts = sorted(seen.texts, key=lambda k: -seen.texts[k])
    lists = sorted(seen.lists, key=lambda k: -seen.lists[k])
    found = UnreadColumns(missing=missing)
    if "response" in missing and texts:
        found.response = texts.pop(0)
    answered = "response" not in missing or found.response is not None
    if "contexts" in missing and answered and (lists or texts):
        # A list of texts is what contexts look like; else the longest text left.
        found.contexts_listed = bool(lists)
        found.contexts = lists.pop(0) if lists else texts.pop(0)
    if "query" in missing and texts:
        found.query = texts.pop(0)
    return found


def unread_contexts_column(source: SampleSource, limit: int | None = None) -> str | None:
    """The unread column that probably holds the contexts, when no sample (of the first
    `limit`) that has a response has contexts (`unread_columns`); else None."""
    return unread_columns(source, limit).contexts
