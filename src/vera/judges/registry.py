"""Judges by name, for the CLI and config files."""

from __future__ import annotations

from collections.abc import Callable

from vera.errors import ConfigError
from vera.judges.base import Judge
from vera.judges.offline import OfflineJudge

__all__ = ["JUDGES", "create_judge"]

JUDGES: dict[str, Callable[[], Judge]] = {
    "offline": OfflineJudge,
}


def create_judge(spec: str) -> Judge:
    """Build a judge from its name, e.g. `create_judge("offline")`."""
    factory = JUDGES.get(spec.strip().lower())
    if factory is None:
        known = ", ".join(sorted(JUDGES))
        raise ConfigError(f"unknown judge {spec!r}; available: {known}")
    return factory()
