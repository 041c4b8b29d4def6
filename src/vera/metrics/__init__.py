"""Metrics: pure functions from a sample and its shared judge analysis to a scored result."""

from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._base import Metric, not_applicable, scored
from vera.metrics._registry import METRIC_REGISTRY, create_metric, register_metric
from vera.metrics._rubric import Rubric, goal_completion, load_rubrics, write_items_file

__all__ = [
    "METRIC_REGISTRY",
    "ClaimAnalysis",
    "Metric",
    "MetricResult",
    "MetricStatus",
    "Need",
    "Rubric",
    "create_metric",
    "goal_completion",
    "load_rubrics",
    "not_applicable",
    "register_metric",
    "scored",
    "write_items_file",
]
