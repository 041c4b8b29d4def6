"""Metrics: pure functions from a sample and its shared judge analysis to a scored result."""

from vera.metrics.answer import Abstention, AnswerCorrectness, AnswerRelevance
from vera.metrics.base import (
    ClaimAnalysis,
    Metric,
    MetricResult,
    MetricStatus,
    Need,
    not_applicable,
    scored,
)
from vera.metrics.citation_accuracy import CitationAccuracy
from vera.metrics.context import ContextPrecision, ContextRecall, ContextRelevance
from vera.metrics.diagnostics import (
    ChunkContextPrecision,
    ClaimRecall,
    ContextUtilization,
    NoiseSensitivityIrrelevant,
    NoiseSensitivityRelevant,
    ReferenceHallucination,
    SelfKnowledge,
)
from vera.metrics.faithfulness import Faithfulness
from vera.metrics.faithfulness_probability import FaithfulnessProbability
from vera.metrics.grounding import GroundingF1, GroundingPrecision, GroundingRecall
from vera.metrics.hallucination import HallucinationRate
from vera.metrics.registry import (
    METRIC_REGISTRY,
    METRICS,
    create_metric,
    metric_classes,
    register_metric,
)

__all__ = [
    "METRICS",
    "METRIC_REGISTRY",
    "Abstention",
    "AnswerCorrectness",
    "AnswerRelevance",
    "ChunkContextPrecision",
    "CitationAccuracy",
    "ClaimAnalysis",
    "ClaimRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "ContextUtilization",
    "Faithfulness",
    "FaithfulnessProbability",
    "GroundingF1",
    "GroundingPrecision",
    "GroundingRecall",
    "HallucinationRate",
    "Metric",
    "MetricResult",
    "MetricStatus",
    "Need",
    "NoiseSensitivityIrrelevant",
    "NoiseSensitivityRelevant",
    "ReferenceHallucination",
    "SelfKnowledge",
    "create_metric",
    "metric_classes",
    "not_applicable",
    "register_metric",
    "scored",
]
