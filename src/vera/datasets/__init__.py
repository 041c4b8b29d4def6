"""Datasets: loading, validation and the bundled examples."""

from vera._json import JsonRefused, loads_bounded
from vera._types._report import InvalidRow
from vera.datasets._bundled import BUNDLED, bundled_path
from vera.datasets._formats import FORMAT_REGISTRY, DatasetFormat
from vera.datasets._readers import RawRow, invalid_data
from vera.datasets._source import open_dataset

__all__ = [
    "BUNDLED",
    "FORMAT_REGISTRY",
    "DatasetFormat",
    "InvalidRow",
    "JsonRefused",
    "RawRow",
    "bundled_path",
    "invalid_data",
    "loads_bounded",
    "open_dataset",
]
