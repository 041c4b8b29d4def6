"""Raw rows out of a Parquet file, streamed one row group (in batches) at a time.

pyarrow is imported only here and only when a Parquet file is opened, so users who never read
Parquet need not install it. Its objects stay behind `Any`: pyarrow ships no type stubs.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vera._types._errors import DatasetError
from vera._types._extras import install_hint
from vera.datasets._formats import DatasetFormat
from vera.datasets._readers import RawRow

INSTALL_HINT = install_hint("parquet")
# Rows converted to Python at a time: bounds memory within a large row group.
BATCH_ROWS = 1024


def _parquet_module(path: Path) -> Any:
    try:
        return importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise DatasetError(
            f"{path}: reading Parquet needs pyarrow; install it with {INSTALL_HINT}"
        ) from None


def _open(path: Path) -> Any:
    pq = _parquet_module(path)
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow: ArrowIOError, ArrowInvalid
        raise DatasetError(f"{path}: not a readable Parquet file ({exc})") from None


def parquet_row_count(path: Path) -> int:
    """The file's row count, from its footer: no row is read."""
    return int(_open(path).metadata.num_rows)


def read_parquet_rows(path: Path) -> Iterator[RawRow]:
    """Each row as a `RawRow` located "row N (row group G)"; N counts from 1 like every other
    row location, G is the row group's index as pyarrow and parquet tools number it (from 0).

    List columns come back as lists and struct columns as dicts, so contexts written as a list
    of strings or of `{"id", "text"}` structs need no parsing.
    """
    parquet = _open(path)
    number = 0
    for group in range(parquet.metadata.num_row_groups):
        batches = parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group])
        for batch in batches:
            for row in batch.to_pylist(maps_as_pydicts="lossy"):
                number += 1
                yield RawRow(f"row {number} (row group {group})", _plain(row))


def _plain(value: Any) -> Any:
    """Parquet values as JSON-ready ones, so a row's extra columns can be written to a report's
    metadata: timestamps and dates as ISO text, decimals as floats, bytes as text or base64."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    return value


PARQUET = DatasetFormat(
    read_parquet_rows,
    (".parquet",),
    # Reads only the footer, so a missing pyarrow or a broken file fails at load time.
    check=parquet_row_count,
    count_rows=parquet_row_count,
)
