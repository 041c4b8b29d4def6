"""Metrics: pure functions from a sample and its shared judge analysis to a scored result."""

from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._agent_calls import ToolCallOptions
from vera.metrics._agent_tools import ToolArgumentCorrectness, ToolCallAccuracy
from vera.metrics._answer import Abstention, AnswerCorrectness, AnswerRelevance
from vera.metrics._base import Metric, not_applicable, scored
from vera.metrics._citation_accuracy import CitationAccuracy
from vera.metrics._context import ContextPrecision, ContextRecall, ContextRelevance
from vera.metrics._diagnostics import (
    ChunkContextPrecision,
    ClaimRecall,
    ContextUtilization,
    NoiseSensitivityIrrelevant,
    NoiseSensitivityRelevant,
    ReferenceHallucination,
    SelfKnowledge,
)
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._faithfulness_probability import FaithfulnessProbability
from vera.metrics._grounding import GroundingF1, GroundingPrecision, GroundingRecall
from vera.metrics._hallucination import HallucinationRate
from vera.metrics._registry import METRIC_REGISTRY, create_metric, register_metric
from vera.metrics._rubric import Rubric, goal_completion, load_rubrics, write_items_file
from vera.metrics._trajectory import TrajectoryMatch, TrajectoryOptions

__all__ = [
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
    "Rubric",
    "SelfKnowledge",
    "ToolArgumentCorrectness",
    "ToolCallAccuracy",
    "ToolCallOptions",
    "TrajectoryMatch",
    "TrajectoryOptions",
    "create_metric",
    "goal_completion",
    "load_rubrics",
    "not_applicable",
    "register_metric",
    "scored",
    "write_items_file",
]
