"""`load_dataset`: a validated, streaming view of a dataset file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vera._json import first_line, loads_bounded
from vera._types import Context
from vera._types._errors import DatasetError
from vera.datasets._bundled import bundled_path, not_found_message
from vera.datasets._conversations import is_conversation_row
from vera.datasets._fields import FieldMap, source_field_map
from vera.datasets._formats import dataset_format, detect_format
from vera.datasets._readers import (
    RawRow,
    check_readable,
    json_rows,
    read_json_document,
    unwrap_json,
)
from vera.datasets._seed_layout import is_seed_layout, seed_documents, seed_query_rows
from vera.datasets._validate import LastPassLog, RowRules, SourcePass


class Dataset(LastPassLog):
    """A dataset file, read lazily: iterating it streams validated `Sample`s.

    Each pass re-reads the file, so a JSONL file of any size is never held in memory. Rows that
    fail validation raise `DatasetRowError`, or with `skip_invalid` are recorded in
    the log of their pass (`read()`) and skipped. `fields` maps VERA fields to
    the file's own column names (`{"contexts": "docs"}`).
    """

    def __init__(
        self,
        path: Path,
        *,
        format: str | None = None,
        skip_invalid: bool = False,
        fields: FieldMap | None = None,
    ):
        self.path = path
        self.format = detect_format(path, format)
        self.skip_invalid = skip_invalid
        self.fields = source_field_map(fields)
        self.user_facts = True  # conversations: the user's words are evidence
        self.agent_steps = False  # agent traces: only each final answer is verified
        check_readable(path)
        self._document: Any = None
        self.documents: tuple[Context, ...] = ()
        self.name = path.stem
        if self.format == "json":
            # JSON cannot be streamed; parse it once here so errors surface at load time.
            self._document = read_json_document(path)
            plain = unwrap_json(self._document)
            if is_seed_layout(plain):
                self.name = str(plain.get("name") or self.name)
                self._document = plain
                self.documents = seed_documents(path, plain)
        self._reader = dataset_format(self.format)
        if self._reader.check is not None:
            self._reader.check(path)

    def read(self) -> SourcePass:
        """A new pass over the rows, with its own invalid-row log (see `SourcePass`)."""
        return SourcePass(
            self,
            self._raw_rows(),
            RowRules(
                label=str(self.path),
                from_csv=self._reader.text_cells,
                fields=self.fields,
                user_facts=self.user_facts,
                agent_steps=self.agent_steps,
            ),
            skip_invalid=self.skip_invalid,
        )

    def size_hint(self) -> int | None:
        """How many samples the file holds, where that is cheap to know (for a progress bar):
        its rows, or None where a row is a conversation (one sample a turn, unknown unread)."""
        if self.format == "json":
            if is_seed_layout(self._document):
                return len(self._document["queries"])
            try:
                rows = [raw.data for raw in json_rows(self.path, self._document)]
            except DatasetError:
                return None
            return None if any(is_conversation_row(row) for row in rows) else len(rows)
        if self.format == "jsonl":
            with self.path.open("rb") as fh:
                first = first_line(fh)
            if first and _conversation_line(first):
                return None
        count = self._reader.count_rows
        return None if count is None else count(self.path)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, path={str(self.path)!r}, format={self.format!r})"

    def _raw_rows(self) -> Iterator[RawRow]:
        if self.format != "json":
            yield from self._reader.read(self.path)
        elif isinstance(self._document, dict) and is_seed_layout(self._document):
            yield from seed_query_rows(self._document, self.documents)
        else:
            yield from json_rows(self.path, self._document)


def load_dataset(
    source: str | Path,
    *,
    format: str | None = None,
    skip_invalid: bool = False,
    fields: FieldMap | None = None,
) -> Dataset:
    """Open a dataset file, or a bundled dataset by name ("example").

    Accepts VERA's field names and those of RAGAS, DeepEval and Axion, in JSON, JSONL or CSV,
    and seed 001's layout (documents plus queries); `fields` names columns of other names
    (`{"contexts": "docs"}`). Raises `DatasetError` for a missing file,
    an unknown format or undecodable bytes; rows are validated as they are read.
    """
    path = Path(source)
    if not path.exists():
        bundled = bundled_path(str(source))
        if bundled is not None:
            path = bundled
    if not path.exists():
        raise DatasetError(not_found_message(source))
    return Dataset(path, format=format, skip_invalid=skip_invalid, fields=fields)


def _conversation_line(line: bytes) -> bool:
    """Whether a JSONL line is a conversation row (a line that is no JSON, or that the guarded
    reader refuses, is left to the read, which reports it)."""
    try:
        return is_conversation_row(loads_bounded(line.decode("utf-8").removeprefix("\ufeff")))
    except ValueError:  # UnicodeDecodeError, JSONDecodeError and JsonRefused among them
        return False
