"""A run's results: the report builder, the answer verdict, outcomes, paired comparisons and CI
gates."""

from vera._results._answers import answer_verdict, claims_verdict
from vera._results._builder import ReportBuilder, build_report
from vera._results._comparison import (
    ClaimChange,
    RunComparison,
    SampleChange,
    ScoreChange,
    ScoreMove,
    baseline_comparison,
    compare_paired,
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
from vera._results._gates import GateConfig, gate_failures, regression_failures
from vera._results._outcome import Outcome, sample_outcome
from vera._results._turns import faithful_turn, inconsistent_claims
from vera._types import MetricComparison
from vera._types._report import (
    CLAIM_COLUMNS,
    REPORT_SCHEMA_VERSION,
    ClaimRecord,
    Counts,
    InvalidRow,
    MetricSummary,
    Report,
    SampleResult,
    SampleStatus,
)

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
    "RunComparison",
    "SampleChange",
    "SampleResult",
    "SampleStatus",
    "ScoreChange",
    "ScoreMove",
    "answer_verdict",
    "baseline_comparison",
    "build_report",
    "claims_verdict",
    "compare_paired",
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
