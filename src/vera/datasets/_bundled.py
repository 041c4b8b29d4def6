"""Datasets that ship inside the package, reachable by name."""

from __future__ import annotations

import difflib
from importlib.resources import files
from pathlib import Path

BUNDLED: dict[str, str] = {
    "conversations": "conversations.jsonl",
    "example": "example.jsonl",
    "legal": "legal.json",
    "research": "research.json",
    "technical": "technical.json",
    "multilingual": "multilingual.jsonl",
    "agents": "agents.jsonl",
}


def bundled_path(name: str) -> Path | None:
    """The file behind a bundled dataset name, or None if no such dataset ships."""
    filename = BUNDLED.get(name)
    if filename is None:
        return None
    return Path(str(files("vera.datasets") / "examples" / filename))


def not_found_message(source: str | Path) -> str:
    """What to say for a dataset that is neither a file nor a bundled name: a name close to
    a bundled one ("legal_mini", "exmaple") gets "did you mean"; any other bare name, the
    bundled names."""
    said = f"dataset file not found: {source}"
    name = str(source)
    if "/" in name or "\\" in name:
        return said
    close = difflib.get_close_matches(Path(name).stem.lower(), list(BUNDLED), n=1, cutoff=0.6)
    if close:
        return f"{said}; did you mean the bundled dataset {close[0]!r}? (--dataset {close[0]})"
    if Path(name).suffix:
        return said
    return f"{said}: no such file, and no bundled dataset of that name ({', '.join(BUNDLED)})"
