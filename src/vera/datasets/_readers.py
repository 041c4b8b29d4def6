"""Raw rows out of JSON, JSONL and CSV files, each with the place it came from (`_formats`
registers these readers, Parquet's and OTLP's by name and extension).

JSONL and CSV are streamed line by line, so a file of a million rows is never held in memory.
Bytes are decoded one line at a time so that a bad byte is reported with its line number.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vera._json import (
    MAX_LINE_BYTES,
    JsonRefused,
    bounded_lines,
    decode_at,
    loads_bounded,
    skip_value,
)
from vera._types._errors import DatasetError

ROW_LIST_KEYS = ("samples", "data", "rows", "examples", "test_cases")
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
"""The largest .json file parsed whole (JSON cannot be streamed; its objects take several
times its bytes in memory)."""


@dataclass(frozen=True)
class RawRow:
    """One row as read, before validation. `location` reads "line 7" or "row 3 (line 12)"."""

    location: str
    data: Any


def check_readable(path: Path) -> None:
    if not path.exists():
        raise DatasetError(f"dataset file not found: {path}")
    if not path.is_file():
        raise DatasetError(f"dataset path is not a file: {path}")


def read_rows(path: Path, fmt: str) -> Iterator[RawRow]:
    """Yield the rows of a file in the registered dataset format `fmt` (see `_formats`)."""
    from vera.datasets._formats import dataset_format  # the registry builds on this module

    yield from dataset_format(fmt).read(path)


def _decode(raw: bytes, path: Path, line_no: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"{path}: line {line_no}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
            f"{exc.start + 1}); re-save the file as UTF-8"
        ) from None


def read_jsonl_rows(path: Path) -> Iterator[RawRow]:
    with path.open("rb") as fh:
        for line_no, raw in bounded_lines(fh):
            if raw is None:
                yield RawRow(f"line {line_no}", _InvalidJson(_too_long()))
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                # One bad line is one invalid row: --skip-invalid records it and reads on.
                problem = (
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                    "re-save the file as UTF-8"
                )
                yield RawRow(f"line {line_no}", _InvalidJson(problem))
                continue
            if line_no == 1:
                text = text.removeprefix("\ufeff")
            if not text.strip():
                continue
            yield RawRow(f"line {line_no}", _parsed_line(text))


def _parsed_line(text: str) -> Any:
    """One JSONL line's value, or the `_InvalidJson` that says why it has none."""
    try:
        return loads_bounded(text)
    except JsonRefused as exc:
        return _InvalidJson(exc.problem, exc.field)
    except json.JSONDecodeError as exc:
        _, column, msg = json_error_at(exc)
        return _InvalidJson(f"invalid JSON at column {column} ({msg})")


def json_error_at(exc: json.JSONDecodeError) -> tuple[int, int, str]:
    """(line, column, message) of a JSON error where the mistake is: a parser that stops at
    the start of a line (a '}' missing at the end of the one before) points past the
    whitespace to the end of the text before it, where the missing character belongs."""
    before = exc.doc[: exc.pos]
    end = len(before.rstrip())
    at_end = not exc.doc[exc.pos :].strip()
    if end == 0 or not ("\n" in before[end:] or at_end):
        return exc.lineno, exc.colno, exc.msg
    line = before.count("\n", 0, end) + 1
    column = end - before.rfind("\n", 0, end)
    missing = ": is a closing '}' or ']' missing?" if "delimiter" in exc.msg else ""
    return line, column, f"{exc.msg} at the end of the line{missing}"


def _too_long() -> str:
    return (
        f"a line of more than {MAX_LINE_BYTES // 2**20} MiB, more than VERA reads as one row; "
        "split the row, or keep long texts in files it names"
    )


class _InvalidJson:
    """A row that cannot be read as JSON; validation turns it into a row error (about
    `field`, where one is to blame)."""

    def __init__(self, problem: str, field: str | None = None) -> None:
        self.problem = problem
        self.field = field


def is_invalid_json(data: Any) -> str | None:
    return data.problem if isinstance(data, _InvalidJson) else None


def invalid_field(data: Any) -> str | None:
    """The field an unreadable row's problem is in (see `is_invalid_json`), if one is."""
    return data.field if isinstance(data, _InvalidJson) else None


def invalid_data(problem: str, field: str | None = None) -> Any:
    """A row's data that validation reports as `problem` (for readers in other modules)."""
    return _InvalidJson(problem, field)


class _LineTrackingReader:
    """Feeds `csv` decoded lines while remembering bad bytes' line numbers."""

    def __init__(self, fh: Any, path: Path) -> None:
        self._fh = fh
        self._path = path
        self.line_no = 0

    def __iter__(self) -> Iterator[str]:
        for raw in self._fh:
            self.line_no += 1
            text = _decode(raw, self._path, self.line_no)
            yield text.removeprefix("\ufeff") if self.line_no == 1 else text


def read_csv_rows(path: Path) -> Iterator[RawRow]:
    with path.open("rb") as fh:
        lines = _LineTrackingReader(fh, path)
        reader = csv.reader(lines)
        try:
            header = next(reader)
        except StopIteration:
            return
        header = [h.strip() for h in header]
        duplicates = {h for h in header if header.count(h) > 1}
        if duplicates:
            raise DatasetError(f"{path}: line 1: duplicate column names {sorted(duplicates)}")
        for cells in reader:
            location = f"line {reader.line_num}"
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                yield RawRow(
                    location,
                    _InvalidJson(f"expected {len(header)} columns, found {len(cells)}"),
                )
                continue
            yield RawRow(location, dict(zip(header, cells, strict=True)))


def read_json_document(path: Path) -> Any:
    """Parse a whole JSON file, with a line and column on a syntax error."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise DatasetError(
            f"{path}: {size / 2**20:,.0f} MiB of JSON, more than the "
            f"{MAX_DOCUMENT_BYTES // 2**20} MiB VERA parses at once; write it as JSONL (one "
            "row a line), which is read a row at a time"
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DatasetError(
            f"{path}: line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}); "
            "re-save the file as UTF-8"
        ) from None
    try:
        return _JsonWithLines.parse(text)
    except json.JSONDecodeError as exc:
        line, column, msg = json_error_at(exc)
        raise DatasetError(f"{path}: line {line}, column {column}: invalid JSON ({msg})") from None
    except JsonRefused as exc:
        line = text.count("\n", 0, exc.offset) + 1
        raise DatasetError(f"{path}: line {line}: {exc}") from None


class _JsonWithLines:
    """A top-level JSON array whose elements remember the line they start on."""

    def __init__(self, items: list[tuple[int, Any]]) -> None:
        self.items = items

    @classmethod
    def parse(cls, text: str) -> Any:
        start = len(text) - len(text.lstrip())
        if not text.startswith("[", start):
            return loads_bounded(text)
        # raw_decode element by element gives each row's offset, hence its line, in one pass.
        items: list[tuple[int, Any]] = []
        pos = _skip_ws(text, start + 1)
        if text.startswith("]", pos):
            _expect_end(text, pos + 1)
            return cls(items)
        # Lines are counted from the previous row on, not from the top: once per character.
        line, counted = 1, 0
        while True:
            value, end = _element(text, pos)
            line, counted = line + text.count("\n", counted, pos), pos
            items.append((line, value))
            pos = _skip_ws(text, end)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
                continue
            if text.startswith("]", pos):
                _expect_end(text, pos + 1)
                return cls(items)
            raise json.JSONDecodeError("expected ',' or ']'", text, pos)


def _element(text: str, pos: int) -> tuple[Any, int]:
    """The array element at `pos` and where it ends; one the guarded reader refuses (nested
    too deep, NaN, a key twice) is an `_InvalidJson` row, read past to its end."""
    try:
        return decode_at(text, pos)
    except JsonRefused as exc:
        if text.startswith(("[", "{"), pos):
            end, _ = skip_value(text, pos)
        else:  # a bare number the reader refused (NaN, 1e999)
            end = _LITERAL.match(text, pos).end()  # type: ignore[union-attr]
        return _InvalidJson(exc.problem, exc.field), end


_LITERAL = re.compile(r"-?Infinity|NaN|-?[0-9][0-9.eE+-]*")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _expect_end(text: str, pos: int) -> None:
    pos = _skip_ws(text, pos)
    if pos != len(text):
        raise json.JSONDecodeError("extra data after the JSON array", text, pos)


def json_rows(path: Path, document: Any) -> Iterator[RawRow]:
    """The rows of a JSON document that is an array of rows or an object holding one."""
    if isinstance(document, _JsonWithLines):
        for index, (line, value) in enumerate(document.items, start=1):
            yield RawRow(f"row {index} (line {line})", value)
        return
    if isinstance(document, dict):
        for key in ROW_LIST_KEYS:
            rows = document.get(key)
            if isinstance(rows, list):
                for index, value in enumerate(rows, start=1):
                    yield RawRow(f"row {index} of '{key}'", value)
                return
    raise DatasetError(
        f"{path}: expected a JSON array of samples, an object with a "
        f"{' / '.join(repr(k) for k in ROW_LIST_KEYS)} list, or seed 001's "
        "layout (an object with 'documents' and 'queries')"
    )


def unwrap_json(document: Any) -> Any:
    """The plain JSON value behind a parsed document (for layouts that are not row arrays)."""
    if isinstance(document, _JsonWithLines):
        return [value for _, value in document.items]
    return document
