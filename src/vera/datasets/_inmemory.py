"""`InMemoryDataset`: samples already in Python (a list, a generator, a pandas DataFrame, a
Hugging Face dataset), validated exactly as a dataset file's rows are.

pandas and `datasets` are never imported here (see `vera.datasets._tables`), so supporting them
costs nothing to users who have neither installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from vera._types import Context, Conversation, Sample
from vera._types._errors import ConfigError
from vera.datasets._conversations import is_conversation_row, is_message_list
from vera.datasets._fields import FieldMap, source_field_map
from vera.datasets._readers import RawRow
from vera.datasets._tables import (
    DATAFRAME_LABEL,
    HF_LABEL,
    dataframe_rows,
    is_dataframe,
    is_hf_dataset,
    plain_row,
)
from vera.datasets._validate import LastPassLog, RowRules, SourcePass

ROWS_LABEL = "<rows>"


class InMemoryDataset(LastPassLog):
    """Rows held in memory, iterated as validated `Sample`s, as often as the run needs.

    Rows may be `Sample`s (taken as they are), mappings of sample fields (with the same field
    aliases as files: `answer`, `retrieved_contexts`, ...), or the rows of a DataFrame or a
    Hugging Face dataset. A one-shot iterator is kept in a list as it is read, so a second pass
    gives the same samples. Invalid rows raise `DatasetRowError` naming "row N" (from 1) and the
    field, or with `skip_invalid` are recorded in the log of their pass (`read()`) and skipped.
    `fields` maps VERA fields to the rows' own column names (`{"contexts": "docs"}`).
    """

    def __init__(
        self,
        rows: Iterable[Any] | Sample,
        *,
        name: str | None = None,
        skip_invalid: bool = False,
        fields: FieldMap | None = None,
    ) -> None:
        _refuse_split_dict(rows)
        self.fields = source_field_map(fields)
        if is_message_list(rows):
            rows = [{"messages": list(rows)}]  # one conversation's OpenAI-style messages
        if isinstance(rows, Sample | Conversation | Mapping):
            rows = [rows]  # one sample or conversation, or one row of sample fields
        if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
            raise ConfigError(
                f"an in-memory dataset needs an iterable of rows, got {type(rows).__name__}"
            )
        self.skip_invalid = skip_invalid
        self.user_facts = True  # conversations: the user's words are evidence
        self.agent_steps = False  # agent traces: only each final answer is verified
        self.documents: tuple[Context, ...] = ()
        self._source: Iterable[Any] = rows
        # A generator or iterator can be read once only: its rows are kept as they come.
        self._pending: Iterator[Any] | None = None
        self._seen: list[Any] = []
        if is_dataframe(rows):
            self._label, default = DATAFRAME_LABEL, "dataframe"
        elif is_hf_dataset(rows):
            self._label, default = HF_LABEL, _hf_name(rows)
        else:
            self._label, default = ROWS_LABEL, "samples"
            if iter(rows) is rows:
                self._pending = iter(rows)
        self._one_shot = self._pending is not None
        self.name = name or default

    def read(self) -> SourcePass:
        """A new pass over the rows, with its own invalid-row log (see `SourcePass`)."""
        return SourcePass(
            self,
            self._raw_rows(),
            RowRules(
                label=self._label,
                accepts_samples=True,
                fields=self.fields,
                user_facts=self.user_facts,
                agent_steps=self.agent_steps,
            ),
            skip_invalid=self.skip_invalid,
        )

    def size_hint(self) -> int | None:
        """How many rows there are, where the source knows (an iterator only once fully read)."""
        if self._one_shot:
            return len(self._seen) if self._pending is None else None
        if isinstance(self._source, list) and any(map(is_conversation_row, self._source)):
            return None  # one sample a turn: unknown until read
        try:
            return len(self._source)  # type: ignore[arg-type]
        except TypeError:
            return None

    def __repr__(self) -> str:
        return f"InMemoryDataset(name={self.name!r}, source={self._label!r})"

    def _raw_rows(self) -> Iterator[RawRow]:
        for index, data in enumerate(self._rows(), start=1):
            yield RawRow(f"row {index}", data)

    def _rows(self) -> Iterator[Any]:
        if self._label == DATAFRAME_LABEL:
            yield from dataframe_rows(self._source)
        elif self._label == HF_LABEL:
            yield from (plain_row(row) for row in self._source)
        elif self._one_shot:
            yield from self._seen_then_pending()
        else:
            yield from self._source

    def _seen_then_pending(self) -> Iterator[Any]:
        # Rows are replayed by position, so a pass that stopped early (an invalid row, a
        # consumer that broke off) or two passes read side by side each see every row once.
        index = 0
        while True:
            if index < len(self._seen):
                yield self._seen[index]
                index += 1
                continue
            if self._pending is None:
                return
            try:
                self._seen.append(next(self._pending))
            except StopIteration:
                self._pending = None


def _refuse_split_dict(rows: object) -> None:
    if is_hf_dataset(rows) and type(rows).__name__ in {"DatasetDict", "IterableDatasetDict"}:
        splits = ", ".join(repr(k) for k in rows)  # type: ignore[attr-defined]
        raise ConfigError(
            f"a Hugging Face DatasetDict holds several splits ({splits}); pass one of them, "
            "e.g. data['test']"
        )


def _hf_name(data: Any) -> str:
    info = getattr(data, "info", None)
    name = getattr(info, "dataset_name", None)
    return str(name) if name else "hf_dataset"
