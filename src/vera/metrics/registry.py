"""Metrics by name, for the CLI and config files."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from vera.errors import ConfigError
from vera.metrics.answer import Abstention, AnswerCorrectness, AnswerRelevance
from vera.metrics.base import Metric
from vera.metrics.citation_accuracy import CitationAccuracy
from vera.metrics.context import ContextPrecision, ContextRecall, ContextRelevance
from vera.metrics.faithfulness import Faithfulness
from vera.metrics.grounding import GroundingF1, GroundingPrecision, GroundingRecall
from vera.metrics.hallucination import HallucinationRate

__all__ = ["ENTRY_POINT_GROUP", "METRICS", "create_metric", "register_metric"]

METRICS: dict[str, type[Any]] = {
    cls.name: cls
    for cls in (
        Faithfulness,
        HallucinationRate,
        GroundingPrecision,
        GroundingRecall,
        GroundingF1,
        CitationAccuracy,
        ContextRelevance,
        ContextPrecision,
        ContextRecall,
        AnswerRelevance,
        AnswerCorrectness,
        Abstention,
    )
}


def register_metric(cls: type[Any]) -> type[Any]:
    """Make a metric class available by its `name` to `--metric` and `create_metric`.

    Usable as a class decorator. A name already taken by another class is refused.
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{cls.__name__} has no `name` to register it under")
    existing = METRICS.get(name)
    if existing is not None and existing is not cls:
        raise ConfigError(f"a metric named {name!r} is already registered")
    METRICS[name] = cls
    return cls


ENTRY_POINT_GROUP = "vera.metrics"
"""Packages can offer metrics to the CLI under this entry-point group (name = metric class)."""


def _load_plugins() -> None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        cls = entry.load()
        METRICS.setdefault(getattr(cls, "name", entry.name), cls)


def create_metric(name: str, **options: Any) -> Metric:
    """Build a metric from its registry name and options (`create_metric("faithfulness")`).

    Names not built in are looked up among installed packages' `vera.metrics` entry points.
    """
    key = name.strip().lower().replace("-", "_")
    if key not in METRICS:
        _load_plugins()
    cls = METRICS.get(key)
    if cls is None:
        known = ", ".join(sorted(METRICS))
        raise ConfigError(f"unknown metric {name!r}; available: {known}")
    metric: Metric = cls(**options)
    return metric
