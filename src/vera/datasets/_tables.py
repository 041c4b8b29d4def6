"""Rows of a table held in Python: a pandas DataFrame or a Hugging Face dataset, as plain rows.

pandas and `datasets` are never imported here: their objects are recognised by the module their
type comes from, so supporting them costs nothing to users who have neither installed. Both
`InMemoryDataset` (samples) and `read_conversations` (a column of message lists) read them here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from vera._types._errors import DatasetError

DATAFRAME_LABEL = "<DataFrame>"
HF_LABEL = "<Hugging Face dataset>"
# Scalar types, by name, that pandas uses for a missing cell besides None and NaN.
_MISSING_TYPES = frozenset({"NAType", "NaTType"})


def is_dataframe(data: object) -> bool:
    """Whether `data` is a pandas DataFrame (or a subclass, such as GeoPandas'), without
    importing pandas."""
    return any(
        kind.__module__.startswith("pandas") and kind.__name__ == "DataFrame"
        for kind in type(data).__mro__
    )


def is_hf_dataset(data: object) -> bool:
    """Whether `data` is a Hugging Face `datasets` dataset, without importing `datasets`."""
    module = type(data).__module__
    return module == "datasets" or module.startswith("datasets.")


def dataframe_rows(frame: Any) -> Iterator[dict[str, Any]]:
    """Each row of a pandas DataFrame as a plain row (`plain_row`)."""
    columns = [str(c) for c in frame.columns]
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise DatasetError(f"{DATAFRAME_LABEL}: duplicate column names {duplicates}")
    # itertuples reads one row at a time, so no copy of the whole frame is made.
    for cells in frame.itertuples(index=False, name=None):
        yield plain_row(dict(zip(columns, cells, strict=True)))


def plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table row as plain Python: a missing cell is left out, as an empty CSV cell is (an
    absent reference says nothing; an explicit null would mark the question unanswerable)."""
    plain = {str(key): _plain(value) for key, value in row.items()}
    return {key: value for key, value in plain.items() if not _missing(value)}


def _plain(value: Any) -> Any:
    """numpy arrays and tuples as lists, numpy scalars as Python numbers, recursively."""
    if type(value).__module__ == "numpy":
        value = value.tolist()  # ndarray -> nested list; numpy scalar -> Python scalar
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _missing(value: Any) -> bool:
    if value is None:
        return True
    kind = type(value)
    if kind.__module__.startswith("pandas") and kind.__name__ in _MISSING_TYPES:
        return True
    return isinstance(value, float) and math.isnan(value)
