"""Datasets that ship inside the package, reachable by name."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["BUNDLED", "bundled_path"]

BUNDLED: dict[str, str] = {
    "conversations": "conversations.jsonl",
    "example": "example.jsonl",
    "legal": "legal.json",
    "research": "research.json",
    "technical": "technical.json",
    "multilingual": "multilingual.jsonl",
}


def bundled_path(name: str) -> Path | None:
    """The file behind a bundled dataset name, or None if no such dataset ships."""
    filename = BUNDLED.get(name)
    if filename is None:
        return None
    return Path(str(files("vera.datasets") / "examples" / filename))
