"""VERA's exception tree, under its public name.

The classes are defined in `vera.types.errors`, in the bottom layer, so that the types can raise
them without importing anything above; see that module for the tree.
"""

from vera.types.errors import (
    ConfigError,
    DatasetError,
    DatasetRowError,
    JudgeError,
    JudgeResponseError,
    RunStopError,
    VeraError,
)

__all__ = [
    "ConfigError",
    "DatasetError",
    "DatasetRowError",
    "JudgeError",
    "JudgeResponseError",
    "RunStopError",
    "VeraError",
]
