"""A run's results: the report builder, outcomes, paired comparisons and CI gates."""

from vera.results._builder import (
    CLAIM_COLUMNS,
    REPORT_SCHEMA_VERSION,
    ClaimRecord,
    Counts,
    MetricSummary,
    Report,
    ReportBuilder,
    SampleResult,
    SampleStatus,
    build_report,
)
from vera.results._comparison import (
    ClaimChange,
    MetricComparison,
    ScoreChange,
    baseline_comparison,
    compare_reports,
    improvement,
    measured_plan,
    most_changed,
    pairs_in_memory,
    relative_change,
    run_differences,
    significant,
    verdict_changes,
)
from vera.results._gates import GateConfig, gate_failures, regression_failures
from vera.results._outcome import Outcome, sample_outcome
from vera.results._turns import faithful_turn, inconsistent_claims
from vera.types._report import InvalidRow

__all__ = [
    "CLAIM_COLUMNS",
    "REPORT_SCHEMA_VERSION",
    "ClaimChange",
    "ClaimRecord",
    "Counts",
    "GateConfig",
    "InvalidRow",
    "MetricComparison",
    "MetricSummary",
    "Outcome",
    "Report",
    "ReportBuilder",
    "SampleResult",
    "SampleStatus",
    "ScoreChange",
    "baseline_comparison",
    "build_report",
    "compare_reports",
    "faithful_turn",
    "gate_failures",
    "improvement",
    "inconsistent_claims",
    "measured_plan",
    "most_changed",
    "pairs_in_memory",
    "regression_failures",
    "relative_change",
    "run_differences",
    "sample_outcome",
    "significant",
    "verdict_changes",
]
