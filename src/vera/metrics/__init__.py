"""Metrics: pure functions from a sample and its claim analysis to a scored result."""

from vera.metrics.base import ClaimAnalysis, Metric, MetricResult, MetricStatus
from vera.metrics.faithfulness import Faithfulness
from vera.metrics.registry import METRICS, create_metric

__all__ = [
    "METRICS",
    "ClaimAnalysis",
    "Faithfulness",
    "Metric",
    "MetricResult",
    "MetricStatus",
    "create_metric",
]
