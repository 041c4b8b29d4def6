"""`load_dataset`: a validated, streaming view of a dataset file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vera.datasets.bundled import bundled_path
from vera.datasets.fields import RowProblem, normalise_row
from vera.datasets.readers import (
    RawRow,
    check_readable,
    detect_format,
    is_invalid_json,
    json_rows,
    read_json_document,
    read_rows,
    unwrap_json,
)
from vera.datasets.seed_layout import is_seed_layout, seed_documents, seed_query_rows
from vera.errors import DatasetError, DatasetRowError
from vera.types import Context, Sample

__all__ = ["Dataset", "InvalidRow", "load_dataset"]


class InvalidRow(BaseModel):
    """A row skipped under `skip_invalid`, kept so the report can show it."""

    model_config = ConfigDict(frozen=True)

    location: str
    field: str | None
    problem: str
    message: str


class Dataset:
    """A dataset file, read lazily: iterating it streams validated `Sample`s.

    Each pass re-reads the file, so a JSONL file of any size is never held in memory. Rows that
    fail validation raise `DatasetRowError`, or with `skip_invalid` are recorded in
    `invalid_rows` (reset at the start of each pass) and skipped.
    """

    def __init__(self, path: Path, *, format: str | None = None, skip_invalid: bool = False):
        self.path = path
        self.format = detect_format(path, format)
        self.skip_invalid = skip_invalid
        self.invalid_rows: list[InvalidRow] = []
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

    def __iter__(self) -> Iterator[Sample]:
        self.invalid_rows = []
        seen: dict[str, str] = {}
        for index, raw in enumerate(self._raw_rows(), start=1):
            try:
                sample = self._validate(raw, index)
                first = seen.get(sample.id)
                if first is not None:
                    raise DatasetRowError(
                        self.path,
                        raw.location,
                        "id",
                        f"duplicate id {sample.id!r} (first used at {first})",
                    )
                seen[sample.id] = raw.location
            except DatasetRowError as exc:
                if not self.skip_invalid:
                    raise
                self.invalid_rows.append(
                    InvalidRow(
                        location=exc.location,
                        field=exc.field,
                        problem=exc.problem,
                        message=str(exc),
                    )
                )
                continue
            yield sample

    def size_hint(self) -> int | None:
        """How many rows the file holds, where that is cheap to know (for a progress bar)."""
        if self.format == "jsonl":
            with self.path.open("rb") as fh:
                return sum(1 for line in fh if line.strip())
        if self.format == "json":
            if is_seed_layout(self._document):
                return len(self._document["queries"])
            try:
                return sum(1 for _ in json_rows(self.path, self._document))
            except DatasetError:
                return None
        return None

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, path={str(self.path)!r}, format={self.format!r})"

    def _raw_rows(self) -> Iterator[RawRow]:
        if self.format != "json":
            yield from read_rows(self.path, self.format)
        elif isinstance(self._document, dict) and is_seed_layout(self._document):
            yield from seed_query_rows(self._document, self.documents)
        else:
            yield from json_rows(self.path, self._document)

    def _validate(self, raw: RawRow, index: int) -> Sample:
        problem = is_invalid_json(raw.data)
        if problem is not None:
            raise DatasetRowError(self.path, raw.location, None, problem)
        if not isinstance(raw.data, dict):
            raise DatasetRowError(
                self.path,
                raw.location,
                None,
                f"expected an object with sample fields, got {type(raw.data).__name__}",
            )
        try:
            row = normalise_row(raw.data, from_csv=self.format == "csv")
        except RowProblem as exc:
            raise DatasetRowError(self.path, raw.location, exc.field, exc.problem) from None
        values = row.values
        values.setdefault("id", f"row-{index}")
        try:
            return Sample.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = [str(p) for p in error["loc"]]
            canonical = loc[0] if loc else None
            field = row.source_keys.get(canonical, canonical) if canonical else None
            if field and len(loc) > 1:
                field += "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:])
            got = repr(error.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            raise DatasetRowError(
                self.path, raw.location, field, f"{error['msg'].lower()}; got {got}"
            ) from None


def load_dataset(
    source: str | Path, *, format: str | None = None, skip_invalid: bool = False
) -> Dataset:
    """Open a dataset file, or a bundled dataset by name ("example").

    Accepts VERA's field names and those of RAGAS, DeepEval and Axion, in JSON, JSONL or CSV,
    and seed 001's layout (documents plus queries). Raises `DatasetError` for a missing file,
    an unknown format or undecodable bytes; rows are validated as they are read.
    """
    path = Path(source)
    if not path.exists():
        bundled = bundled_path(str(source))
        if bundled is not None:
            path = bundled
    if not path.exists():
        raise DatasetError(f"dataset file not found: {source}")
    return Dataset(path, format=format, skip_invalid=skip_invalid)
