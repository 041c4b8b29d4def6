"""VERA: claim-level faithfulness evaluation for RAG systems.

    import vera
    report = vera.evaluate(vera.load_dataset("data.jsonl"))
    print(report.metrics["faithfulness"])

Importing VERA has no side effects: no network, no telemetry, no environment files read.
"""

from vera import judges, metrics
from vera._version import __version__
from vera.datasets import Dataset, InvalidRow, load_dataset
from vera.errors import (
    ConfigError,
    DatasetError,
    DatasetRowError,
    JudgeError,
    JudgeResponseError,
    VeraError,
)
from vera.report import ClaimRecord, MetricSummary, Report, SampleResult, SampleStatus
from vera.runner import aevaluate, evaluate
from vera.types import Citation, Claim, ClaimVerdict, Context, Sample, Verdict

__all__ = [
    "Citation",
    "Claim",
    "ClaimRecord",
    "ClaimVerdict",
    "ConfigError",
    "Context",
    "Dataset",
    "DatasetError",
    "DatasetRowError",
    "InvalidRow",
    "JudgeError",
    "JudgeResponseError",
    "MetricSummary",
    "Report",
    "Sample",
    "SampleResult",
    "SampleStatus",
    "VeraError",
    "Verdict",
    "__version__",
    "aevaluate",
    "evaluate",
    "judges",
    "load_dataset",
    "metrics",
]
