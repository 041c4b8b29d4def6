"""Datasets: loading, validation and the bundled examples."""

from vera.datasets.bundled import BUNDLED, bundled_path
from vera.datasets.conversations import (
    consistency_samples,
    conversation_from_row,
    read_conversations,
    turn_samples,
)
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
    "consistency_samples",
    "conversation_from_row",
    "load_dataset",
    "open_dataset",
    "read_conversations",
    "turn_samples",
]
