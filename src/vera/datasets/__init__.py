"""Datasets: loading, validation and the bundled examples."""

from vera._json import MAX_NESTING, JsonRefused, loads_bounded
from vera._types._report import InvalidRow
from vera.datasets._bundled import BUNDLED, bundled_path
from vera.datasets._conversations import consistency_checks, read_conversations, turn_samples
from vera.datasets._fields import parse_field_option
from vera.datasets._formats import FORMAT_REGISTRY, DatasetFormat, dataset_format, format_help
from vera.datasets._inmemory import InMemoryDataset
from vera.datasets._loader import Dataset, load_dataset
from vera.datasets._readers import RawRow, invalid_data
from vera.datasets._source import SampleSource, open_dataset

__all__ = [
    "BUNDLED",
    "FORMAT_REGISTRY",
    "MAX_NESTING",
    "Dataset",
    "DatasetFormat",
    "InMemoryDataset",
    "InvalidRow",
    "JsonRefused",
    "RawRow",
    "SampleSource",
    "bundled_path",
    "consistency_checks",
    "dataset_format",
    "format_help",
    "invalid_data",
    "load_dataset",
    "loads_bounded",
    "open_dataset",
    "parse_field_option",
    "read_conversations",
    "turn_samples",
]
