"""VERA: claim-level faithfulness evaluation for RAG systems.

    import vera
    report = vera.evaluate("data.jsonl", metrics=["faithfulness", "hallucination_rate"])
    print(report.metrics["faithfulness"])

Importing VERA has no side effects: no network, no telemetry, no environment files read.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vera import judges as judges
    from vera import metrics as metrics
    from vera._analysis import rubric_checklist
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
    from vera._baselines import BASELINES, build_baseline
    from vera._conversations import (
        ConversationReport,
        estimate_conversations,
        estimate_simulation,
        evaluate_conversations,
        load_assistant,
        pipeline_assistant,
        read_scenarios,
        simulate_conversations,
        write_conversations,
    )
    from vera._generate import (
        GenerationResult,
        estimate_testset,
        generate_testset,
        write_dataset,
    )
    from vera._monitor import (
        MonitorConfig,
        create_monitor,
        parse_alert,
        read_windows,
        running_monitor,
        serve_monitor,
    )
    from vera._plan import (
        RetrievalOptions,
        RunPlan,
        Settings,
        load_settings,
    )
    from vera._results import (
        ClaimRecord,
        MetricSummary,
        Report,
        SampleResult,
        SampleStatus,
    )
    from vera._review import ReviewError, add_label, export_labels, review_calibration, review_state
    from vera._run import (
        Bindings,
        ExitCode,
        JudgeBenchmark,
        RunEstimate,
        RunObserver,
        RunResult,
        abenchmark_judge,
        arun_plan,
        benchmark_judge,
        estimate_plan,
        run_plan,
        stored_plan,
    )
    from vera._sqlite_file import MissingStoreError, StoreError
    from vera._store import DamagedRunError, RunStore, compare_runs
    from vera._types import (
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
        ToolCall,
        ToolResult,
        Turn,
        VeraError,
        Verdict,
    )
    from vera._version import __version__
    from vera._viewer import create_app, serve
    from vera.datasets._loader import Dataset, load_dataset

# `import vera` loads nothing but this table: each name is imported from its home the first
# time it is used, so `import vera` and `vera --help` stay fast (docs/architecture.md).
_HOMES: dict[str, str] = {
    "__version__": "vera._version",  # read from the installed metadata: 40 ms
    "BASELINES": "vera._baselines",
    "Bindings": "vera._run",
    "Citation": "vera._types",
    "Claim": "vera._types",
    "ClaimRecord": "vera._results",
    "ClaimVerdict": "vera._types",
    "ConfigError": "vera._types",
    "Context": "vera._types",
    "Conversation": "vera._types",
    "ConversationReport": "vera._conversations",
    "DamagedRunError": "vera._store",
    "Dataset": "vera.datasets._loader",
    "DatasetError": "vera._types",
    "DatasetRowError": "vera._types",
    "ExitCode": "vera._run",
    "EvaluateOptions": "vera._api",
    "GateWarning": "vera._api",
    "GenerationResult": "vera._generate",
    "JudgeBenchmark": "vera._run",
    "JudgeError": "vera._types",
    "JudgeResponseError": "vera._types",
    "MetricSummary": "vera._results",
    "MissingStoreError": "vera._sqlite_file",
    "MonitorConfig": "vera._monitor",
    "Report": "vera._results",
    "RetrievalOptions": "vera._plan",
    "ReviewError": "vera._review",
    "RunEstimate": "vera._run",
    "RunObserver": "vera._run",
    "RunPlan": "vera._plan",
    "RunResult": "vera._run",
    "RunStopError": "vera._types",
    "RunStore": "vera._store",
    "Sample": "vera._types",
    "SampleResult": "vera._results",
    "SampleStatus": "vera._results",
    "Settings": "vera._plan",
    "StoreError": "vera._sqlite_file",
    "ToolCall": "vera._types",
    "ToolResult": "vera._types",
    "Turn": "vera._types",
    "VeraError": "vera._types",
    "Verdict": "vera._types",
    "abenchmark_judge": "vera._run",
    "add_label": "vera._review",
    "aevaluate": "vera._api",
    "arun_evaluation": "vera._api",
    "arun_plan": "vera._run",
    "benchmark_judge": "vera._run",
    "build_baseline": "vera._baselines",
    "calibrate": "vera._api",
    "compare_runs": "vera._store",
    "create_app": "vera._viewer",
    "create_monitor": "vera._monitor",
    "estimate_conversations": "vera._conversations",
    "estimate_plan": "vera._run",
    "estimate_simulation": "vera._conversations",
    "estimate_testset": "vera._generate",
    "evaluate": "vera._api",
    "evaluate_conversations": "vera._conversations",
    "export_labels": "vera._review",
    "generate_testset": "vera._generate",
    "load_assistant": "vera._conversations",
    "load_dataset": "vera.datasets._loader",
    "load_settings": "vera._plan",
    "parse_alert": "vera._monitor",
    "pipeline_assistant": "vera._conversations",
    "plan_evaluation": "vera._api",
    "read_scenarios": "vera._conversations",
    "read_windows": "vera._monitor",
    "review_calibration": "vera._review",
    "review_state": "vera._review",
    "rubric_checklist": "vera._analysis",
    "run_evaluation": "vera._api",
    "run_plan": "vera._run",
    "running_monitor": "vera._monitor",
    "serve": "vera._viewer",
    "serve_monitor": "vera._monitor",
    "simulate_conversations": "vera._conversations",
    "stored_plan": "vera._run",
    "write_conversations": "vera._conversations",
    "write_dataset": "vera._generate",
}
_SUBPACKAGES = frozenset({"judges", "metrics"})


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"vera.{name}")
    else:
        raise AttributeError(f"module 'vera' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BASELINES",
    "Bindings",
    "Citation",
    "Claim",
    "ClaimRecord",
    "ClaimVerdict",
    "ConfigError",
    "Context",
    "Conversation",
    "ConversationReport",
    "DamagedRunError",
    "Dataset",
    "DatasetError",
    "DatasetRowError",
    "EvaluateOptions",
    "ExitCode",
    "GateWarning",
    "GenerationResult",
    "JudgeBenchmark",
    "JudgeError",
    "JudgeResponseError",
    "MetricSummary",
    "MissingStoreError",
    "MonitorConfig",
    "Report",
    "RetrievalOptions",
    "ReviewError",
    "RunEstimate",
    "RunObserver",
    "RunPlan",
    "RunResult",
    "RunStopError",
    "RunStore",
    "Sample",
    "SampleResult",
    "SampleStatus",
    "Settings",
    "StoreError",
    "ToolCall",
    "ToolResult",
    "Turn",
    "VeraError",
    "Verdict",
    "__version__",
    "abenchmark_judge",
    "add_label",
    "aevaluate",
    "arun_evaluation",
    "arun_plan",
    "benchmark_judge",
    "build_baseline",
    "calibrate",
    "compare_runs",
    "create_app",
    "create_monitor",
    "estimate_conversations",
    "estimate_plan",
    "estimate_simulation",
    "estimate_testset",
    "evaluate",
    "evaluate_conversations",
    "export_labels",
    "generate_testset",
    "load_assistant",
    "load_dataset",
    "load_settings",
    "parse_alert",
    "pipeline_assistant",
    "plan_evaluation",
    "read_scenarios",
    "read_windows",
    "review_calibration",
    "review_state",
    "rubric_checklist",
    "run_evaluation",
    "run_plan",
    "running_monitor",
    "serve",
    "serve_monitor",
    "simulate_conversations",
    "stored_plan",
    "write_conversations",
    "write_dataset",
]
