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
    from vera import judges, metrics
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
    from vera._results import (
        ClaimRecord,
        MetricSummary,
        Report,
        RunComparison,
        SampleResult,
        SampleStatus,
    )
    from vera._sqlite_file import MissingStoreError, StoreError
    from vera._store import DamagedRunError, RunStore, StoredComparison, compare_runs
    from vera._version import __version__
    from vera.datasets import Dataset, InvalidRow, load_dataset
    from vera.plan import RunPlan, Settings, build_plan, load_settings
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

# `import vera` loads nothing but this table: each name is imported from its home the first
# time it is used, so `import vera` and `vera --help` stay fast (docs/architecture.md).
_HOMES: dict[str, str] = {
    "__version__": "vera._version",  # read from the installed metadata: 40 ms
    "Bindings": "vera.run",
    "Citation": "vera.types",
    "Claim": "vera.types",
    "ClaimRecord": "vera._results",
    "ClaimVerdict": "vera.types",
    "ConfigError": "vera.types",
    "Context": "vera.types",
    "Conversation": "vera.types",
    "DamagedRunError": "vera._store",
    "Dataset": "vera.datasets",
    "DatasetError": "vera.types",
    "DatasetRowError": "vera.types",
    "EvaluateOptions": "vera._api",
    "GateWarning": "vera._api",
    "InvalidRow": "vera.datasets",
    "JudgeError": "vera.types",
    "JudgeResponseError": "vera.types",
    "MetricSummary": "vera._results",
    "MissingStoreError": "vera._sqlite_file",
    "Report": "vera._results",
    "RunComparison": "vera._results",
    "RunObserver": "vera.run",
    "RunPlan": "vera.plan",
    "RunResult": "vera.run",
    "RunStopError": "vera.types",
    "RunStore": "vera._store",
    "Sample": "vera.types",
    "SampleResult": "vera._results",
    "SampleStatus": "vera._results",
    "Settings": "vera.plan",
    "StoreError": "vera._sqlite_file",
    "StoredComparison": "vera._store",
    "ToolResult": "vera.types",
    "Turn": "vera.types",
    "VeraError": "vera.types",
    "Verdict": "vera.types",
    "aevaluate": "vera._api",
    "arun_evaluation": "vera._api",
    "arun_plan": "vera.run",
    "build_plan": "vera.plan",
    "calibrate": "vera._api",
    "compare_runs": "vera._store",
    "evaluate": "vera._api",
    "load_dataset": "vera.datasets",
    "load_settings": "vera.plan",
    "plan_evaluation": "vera._api",
    "rubric_checklist": "vera._analysis",
    "run_evaluation": "vera._api",
    "run_plan": "vera.run",
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
    "Bindings",
    "Citation",
    "Claim",
    "ClaimRecord",
    "ClaimVerdict",
    "ConfigError",
    "Context",
    "Conversation",
    "DamagedRunError",
    "Dataset",
    "DatasetError",
    "DatasetRowError",
    "EvaluateOptions",
    "GateWarning",
    "InvalidRow",
    "JudgeError",
    "JudgeResponseError",
    "MetricSummary",
    "MissingStoreError",
    "Report",
    "RunComparison",
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
    "StoredComparison",
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
    "compare_runs",
    "evaluate",
    "judges",
    "load_dataset",
    "load_settings",
    "metrics",
    "plan_evaluation",
    "rubric_checklist",
    "run_evaluation",
    "run_plan",
]
