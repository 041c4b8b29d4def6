"""Turning raw rows into `Sample`s: the one validation path every sample source goes through.

A dataset file and an in-memory collection (a list, a DataFrame, a Hugging Face dataset) differ
only in where their rows come from. Field aliases, type checks, default ids, duplicate ids and
`skip_invalid` are decided here, so a row error reads the same whichever source it came from:
it names the source, the row and the field as the user spelled it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from pydantic import ValidationError

from vera._types import Sample
from vera._types._errors import DatasetRowError

# A report lists skipped rows, so the type is plain data in the types layer; re-exported here.
from vera._types._report import InvalidRow
from vera.datasets._conversations import (
    ConversationProblem,
    conversation_from_row,
    in_column,
    is_conversation_row,
    mapped_messages,
    message_column,
    turn_samples,
)
from vera.datasets._fields import (
    ALIASES,
    MESSAGES_FIELD,
    FieldMap,
    NormalisedRow,
    RowProblem,
    normalise_row,
)
from vera.datasets._readers import RawRow, invalid_field, is_invalid_json
from vera.datasets._seen_ids import SeenIds


@dataclass(frozen=True)
class RowRules:
    """How one source's rows are read.

    `label` names the source in errors (a file's path, or "<DataFrame>"). CSV cells are all
    strings, so `from_csv` parses numbers and lists out of them. `accepts_samples` lets a row
    already be a `Sample` (in-memory sources), which is then taken as it is. `fields` maps
    VERA fields to the source's own column names (`--field contexts=docs`).
    """

    label: str
    from_csv: bool = False
    accepts_samples: bool = False
    fields: FieldMap | None = None
    user_facts: bool = True
    agent_steps: bool = False
    """Agent traces: whether intermediate assistant messages are verified too."""
    """Conversations: whether the user's words are evidence for an assistant turn."""


def validate_row(raw: RawRow, index: int, rules: RowRules) -> Sample:
    """One raw row as a `Sample`, or a `DatasetRowError` naming its place and field.

    `index` counts rows from 1; a row without an id gets "row-<index>".
    """
    return _validated(raw, index, rules)[0]


def _validated(raw: RawRow, index: int, rules: RowRules) -> tuple[Sample, tuple[str, ...]]:
    """`validate_row`, plus the row's keys that went into metadata unrecognised."""
    problem = is_invalid_json(raw.data)
    if problem is not None:
        raise DatasetRowError(rules.label, raw.location, invalid_field(raw.data), problem)
    if rules.accepts_samples and isinstance(raw.data, Sample):
        return raw.data, ()
    if not isinstance(raw.data, Mapping):
        expected = (
            "a Sample or a mapping of sample fields"
            if rules.accepts_samples
            else "an object with sample fields"
        )
        raise DatasetRowError(
            rules.label, raw.location, None, f"expected {expected}, got {type(raw.data).__name__}"
        )
    try:
        row = normalise_row(raw.data, from_csv=rules.from_csv, fields=rules.fields)
    except RowProblem as exc:
        raise DatasetRowError(rules.label, raw.location, exc.field, exc.problem) from None
    row.values.setdefault("id", f"row-{index}")
    try:
        return Sample.model_validate(row.values), row.unrecognised
    except ValidationError as exc:
        raise _row_error(exc, row, raw, rules) from None


def _row_error(
    exc: ValidationError, row: NormalisedRow, raw: RawRow, rules: RowRules
) -> DatasetRowError:
    # Only the first problem is reported: fixing rows one message at a time is the common case,
    # and a list of every nested pydantic error buries the one that matters.
    error = exc.errors()[0]
    loc = [str(p) for p in error["loc"]]
    canonical = loc[0] if loc else None
    field = row.source_keys.get(canonical, canonical) if canonical else None
    if field and len(loc) > 1:
        field += "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:])
    got = repr(error.get("input"))
    got = got if len(got) <= 60 else got[:57] + "..."
    return DatasetRowError(rules.label, raw.location, field, f"{error['msg'].lower()}; got {got}")


def validate_rows(
    rows: Iterable[RawRow],
    rules: RowRules,
    *,
    skip_invalid: bool,
    invalid: list[InvalidRow],
    unrecognised: set[str] | None = None,
) -> Iterator[Sample]:
    """Validated samples from `rows`, each id used once.

    An invalid row raises `DatasetRowError`, or with `skip_invalid` is appended to `invalid`
    (the log of this pass, see `SourcePass`) and skipped. Row keys
    that went into metadata unrecognised are added to `unrecognised`, so a run can say so.
    """
    with SeenIds() as seen:
        for index, raw in enumerate(rows, start=1):
            try:
                samples = _checked_rows(raw, index, rules, seen, unrecognised)
            except DatasetRowError as exc:
                if not skip_invalid:
                    raise
                invalid.append(
                    InvalidRow(
                        location=exc.location,
                        field=exc.field,
                        problem=exc.problem,
                        message=str(exc),
                    )
                )
                continue
            yield from samples


def _checked_rows(
    raw: RawRow, index: int, rules: RowRules, seen: SeenIds, unrecognised: set[str] | None
) -> list[Sample]:
    # A conversation row is one sample per assistant turn (see `datasets.conversations`).
    row, column = mapped_messages(raw.data, rules.fields)
    if not is_conversation_row(row):
        _refuse_unmapped_messages(raw, rules)
        return [_checked(raw, index, rules, seen, unrecognised)]
    try:
        conversation = conversation_from_row(row, f"conversation-{index}")
        turns = turn_samples(
            conversation, user_facts=rules.user_facts, agent_steps=rules.agent_steps
        )
    except ConversationProblem as exc:
        where = in_column(exc.field, column)
        raise DatasetRowError(rules.label, raw.location, where, exc.problem) from None
    for sample in turns:
        _first_use(sample, raw, rules, seen)
    return turns


_ASKED = (*ALIASES["query"], *ALIASES["response"])


def _refuse_unmapped_messages(raw: RawRow, rules: RowRules) -> None:
    """A row with no question or answer whose messages sit under a column VERA does not read
    as a conversation's: read as a sample, it would only "need a pipeline"."""
    column = message_column(raw.data)
    if column is None or not isinstance(raw.data, Mapping) or any(k in raw.data for k in _ASKED):
        return
    raise DatasetRowError(
        rules.label,
        raw.location,
        column,
        f"holds a list of messages, but VERA reads a conversation's messages from "
        f"'messages', 'turns' or 'user_input': map it with --field {MESSAGES_FIELD}={column} "
        f"(fields={{'{MESSAGES_FIELD}': '{column}'}} in Python), or rename the column",
    )


def _first_use(sample: Sample, raw: RawRow, rules: RowRules, seen: SeenIds) -> None:
    first = seen.first_use(sample.id, raw.location)
    if first is not None:
        raise DatasetRowError(
            rules.label, raw.location, "id", f"duplicate id {sample.id!r} (first used at {first})"
        )


def _checked(
    raw: RawRow, index: int, rules: RowRules, seen: SeenIds, unrecognised: set[str] | None
) -> Sample:
    sample, extra = _validated(raw, index, rules)
    if unrecognised is not None:
        unrecognised.update(extra)
    _first_use(sample, raw, rules, seen)
    return sample


class SourcePass:
    """One pass over a source's rows, with its own log: iterating it validates the rows once,
    filling `invalid_rows` (skipped under `skip_invalid`) and `unrecognised_fields` (row keys
    put into metadata). Two passes over one source (the system's and a baseline's) so never
    mix their logs. `name` and `size_hint` are the source's, for the report and progress.
    """

    def __init__(
        self, source: _Named, rows: Iterable[RawRow], rules: RowRules, *, skip_invalid: bool
    ) -> None:
        self.name = source.name
        self._source = source
        self._rows = rows
        self._rules = rules
        self._skip_invalid = skip_invalid
        self.invalid_rows: list[InvalidRow] = []
        self.unrecognised_fields: set[str] = set()

    def __iter__(self) -> Iterator[Sample]:
        yield from validate_rows(
            self._rows,
            self._rules,
            skip_invalid=self._skip_invalid,
            invalid=self.invalid_rows,
            unrecognised=self.unrecognised_fields,
        )

    def size_hint(self) -> int | None:
        """The source's row count, where that is cheap to know."""
        return self._source.size_hint()


class _Named(Protocol):
    name: str

    def size_hint(self) -> int | None: ...


class LastPassLog(ABC):
    """A source whose plain iteration is a pass of its own (`read()`), the last one's log kept
    readable as `invalid_rows` and `unrecognised_fields` for callers that iterate it directly;
    a run reads each pass's own log instead."""

    _last: SourcePass | None = None

    @abstractmethod
    def read(self) -> SourcePass:
        """A new pass over the rows, with its own invalid-row log."""

    def __iter__(self) -> Iterator[Sample]:
        rows = self.read()
        self._last = rows
        yield from rows

    @property
    def invalid_rows(self) -> list[InvalidRow]:
        """The rows the last plain iteration skipped (a run reads each pass's own log)."""
        return self._last.invalid_rows if self._last else []

    @property
    def unrecognised_fields(self) -> set[str]:
        """The row keys the last plain iteration put into metadata."""
        return self._last.unrecognised_fields if self._last else set()
