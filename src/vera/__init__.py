"""VERA: claim-level faithfulness evaluation for RAG systems.

    import vera
    report = vera.evaluate("data.jsonl", metrics=["faithfulness", "hallucination_rate"])
    print(report.metrics["faithfulness"])

Importing VERA has no side effects: no network, no telemetry, no environment files read.
"""

from vera import judges, metrics
from vera._api import (
    EvaluateOptions,
    GateWarning,
    aevaluate,
    arun_evaluation,
    calibrate,
    evaluate,
    plan_evaluation,
    run_evaluation,
)
from vera._version import __version__
from vera.datasets import Dataset, InvalidRow, load_dataset
from vera.plan import RunPlan, Settings, build_plan, load_settings
from vera.results import ClaimRecord, MetricSummary, Report, SampleResult, SampleStatus
from vera.run import Bindings, RunObserver, RunResult, arun_plan, run_plan
from vera.types import (
    Citation,
    Claim,
    ClaimVerdict,
    ConfigError,
    Context,
    Conversation,
    DatasetError,
    DatasetRowError,
    JudgeError,
    JudgeResponseError,
    RunStopError,
    Sample,
    ToolResult,
    Turn,
    VeraError,
    Verdict,
)

__all__ = [
    "Bindings",
    "Citation",
    "Claim",
    "ClaimRecord",
    "ClaimVerdict",
    "ConfigError",
    "Context",
    "Conversation",
    "Dataset",
    "DatasetError",
    "DatasetRowError",
    "EvaluateOptions",
    "GateWarning",
    "InvalidRow",
    "JudgeError",
    "JudgeResponseError",
    "MetricSummary",
    "Report",
    "RunObserver",
    "RunPlan",
    "RunResult",
    "RunStopError",
    "Sample",
    "SampleResult",
    "SampleStatus",
    "Settings",
    "ToolResult",
    "Turn",
    "VeraError",
    "Verdict",
    "__version__",
    "aevaluate",
    "arun_evaluation",
    "arun_plan",
    "build_plan",
    "calibrate",
    "evaluate",
    "judges",
    "load_dataset",
    "load_settings",
    "metrics",
    "plan_evaluation",
    "run_evaluation",
    "run_plan",
]
