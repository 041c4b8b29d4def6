"""Datasets: loading, validation and the bundled examples."""

from vera.datasets.bundled import BUNDLED, bundled_path
from vera.datasets.loader import Dataset, InvalidRow, load_dataset

__all__ = ["BUNDLED", "Dataset", "InvalidRow", "bundled_path", "load_dataset"]
