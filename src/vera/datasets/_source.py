"""What a run reads samples from, and `open_dataset`: one entry point for every kind of data.

A file, a bundled name, a list of samples or dicts, a generator, a pandas DataFrame or a
Hugging Face dataset all become a `SampleSource`, whose rows are validated the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeGuard, runtime_checkable

from vera._types import Context, Sample
from vera._types._errors import ConfigError
from vera._types._report import InvalidRow
from vera.datasets._fields import FieldMap
from vera.datasets._inmemory import InMemoryDataset
from vera.datasets._loader import Dataset, load_dataset
from vera.datasets._validate import SourcePass

ACCEPTED = (
    "a dataset file path or bundled name, a Sample, a mapping of sample fields, an iterable of "
    "those, a pandas DataFrame or a Hugging Face dataset"
)


@runtime_checkable
class SampleSource(Protocol):
    """What a run needs from its data, whether a file (`Dataset`) or not (`InMemoryDataset`).

    `read()` starts a pass over the rows, and may be called more than once (once for the
    system and once per baseline): the pass yields validated samples and keeps its own log,
    the rows it skipped under `skip_invalid` and the row keys it put into metadata because they
    are no known field (`SourcePass`). Iterating the source itself is a pass too, whose log
    `invalid_rows` and `unrecognised_fields` show until the next; a run reads each pass's own.
    `documents` is the corpus the dataset ships with, if any.
    """

    name: str
    documents: tuple[Context, ...]
    skip_invalid: bool

    def read(self) -> SourcePass:
        """A new pass over the rows, with its own log."""
        ...

    def __iter__(self) -> Iterator[Sample]: ...

    @property
    def invalid_rows(self) -> list[InvalidRow]:
        """The rows the last plain iteration skipped."""
        ...

    @property
    def unrecognised_fields(self) -> set[str]:
        """The row keys the last plain iteration put into metadata."""
        ...

    def size_hint(self) -> int | None:
        """How many rows there are, where that is cheap to know; else None."""
        ...


@runtime_checkable
class PassLog(Protocol):
    """What a pass's report reads of its data: the source's name, size, and the pass's log.
    A `SourcePass` is one; so is a source, for the log of its last plain iteration."""

    @property
    def name(self) -> str: ...

    @property
    def invalid_rows(self) -> list[InvalidRow]: ...

    @property
    def unrecognised_fields(self) -> set[str]: ...

    def size_hint(self) -> int | None: ...


def open_dataset(
    data: object,
    *,
    format: str | None = None,
    skip_invalid: bool = False,
    name: str | None = None,
    fields: FieldMap | None = None,
    user_facts: bool = True,
    agent_steps: bool = False,
) -> Dataset | InMemoryDataset:
    """Any supported data as a source of validated samples.

    A `str` or `Path` is a dataset file or a bundled name ("example"); `format` applies to it
    only. A `Dataset` or `InMemoryDataset` is returned as it is (`name`, and `skip_invalid`
    when True, are set on it). A single `Sample` or mapping is one row; a DataFrame, a Hugging
    Face dataset or any other iterable of rows becomes an `InMemoryDataset`. Anything else
    raises `ConfigError`. `fields` maps VERA fields to the data's own column names
    (`{"contexts": "docs"}`), for every kind of data; a source already built keeps its own.
    """
    if isinstance(data, str | Path):
        found = load_dataset(data, format=format, skip_invalid=skip_invalid, fields=fields)
        found.user_facts = user_facts
        found.agent_steps = agent_steps
        if name:
            found.name = name
        return found
    if format is not None:
        raise ConfigError(
            f"format={format!r} applies to dataset files only, not to {type(data).__name__}"
        )
    if isinstance(data, Dataset | InMemoryDataset):
        if name:
            data.name = name
        # False is also the default, so only an explicit True can be told apart and applied.
        if skip_invalid:
            data.skip_invalid = True
        if not user_facts:
            data.user_facts = False
        if agent_steps:
            data.agent_steps = True
        return data
    if _is_rows(data):
        found_rows = InMemoryDataset(data, name=name, skip_invalid=skip_invalid, fields=fields)
        found_rows.user_facts = user_facts
        found_rows.agent_steps = agent_steps
        return found_rows
    raise ConfigError(f"cannot read samples from {type(data).__name__}; expected {ACCEPTED}")


def _is_rows(data: object) -> TypeGuard[Iterable[Any]]:
    # DataFrames, Hugging Face datasets, mappings and even a `Sample` (a pydantic model) are
    # all iterable; bytes are too, but are never rows.
    return isinstance(data, Iterable) and not isinstance(data, bytes | bytearray)
