"""Datasets: loading, validation and the bundled examples."""

from vera.datasets.bundled import BUNDLED, bundled_path
from vera.datasets.inmemory import InMemoryDataset
from vera.datasets.loader import Dataset, load_dataset
from vera.datasets.source import SampleSource, open_dataset
from vera.datasets.validate import InvalidRow

__all__ = [
    "BUNDLED",
    "Dataset",
    "InMemoryDataset",
    "InvalidRow",
    "SampleSource",
    "bundled_path",
    "load_dataset",
    "open_dataset",
]
