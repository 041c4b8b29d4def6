"""Metrics by name, for the CLI and config files."""

from __future__ import annotations

from typing import Any

from vera.errors import ConfigError
from vera.metrics.base import Metric
from vera.metrics.faithfulness import Faithfulness

__all__ = ["METRICS", "create_metric"]

METRICS: dict[str, type[Any]] = {
    Faithfulness.name: Faithfulness,
}


def create_metric(name: str, **options: Any) -> Metric:
    """Build a metric from its registry name and options (`create_metric("faithfulness")`)."""
    key = name.strip().lower().replace("-", "_")
    cls = METRICS.get(key)
    if cls is None:
        known = ", ".join(sorted(METRICS))
        raise ConfigError(f"unknown metric {name!r}; available: {known}")
    metric: Metric = cls(**options)
    return metric
