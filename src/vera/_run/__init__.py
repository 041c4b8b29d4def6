"""Running a plan: the engine (resume, skips, recording, gates), the per-sample runner, the
executors (in-process, Ray), the dry-run estimate, and the judge benchmark.
"""

from vera._run._engine import (
    Bindings,
    ExitCode,
    RunObserver,
    RunResult,
    arun_plan,
    build_components,
    run_plan,
    stored_plan,
)
from vera._run._estimate import RunEstimate, estimate_plan
from vera._run._executors import EXECUTORS, ExecutorFactory, create_executor
from vera._run._fingerprint import run_fingerprint
from vera._run._judge_benchmark import (
    GroupFigures,
    JudgeBenchmark,
    LabelledRow,
    RowOutcome,
    Rule,
    SpanFigures,
    abenchmark_judge,
    benchmark_figures,
    benchmark_judge,
    labelled_row,
    read_labelled_rows,
)
from vera._run._local import LocalExecutor
from vera._run._quota import Quota, QuotaClient
from vera._run._runner import Executor, PassSink, PassWork, Rows, Usage, evaluate_sample, run_pass
from vera._sync import run_sync

__all__ = [
    "EXECUTORS",
    "Bindings",
    "Executor",
    "ExecutorFactory",
    "ExitCode",
    "GroupFigures",
    "JudgeBenchmark",
    "LabelledRow",
    "LocalExecutor",
    "PassSink",
    "PassWork",
    "Quota",
    "QuotaClient",
    "RowOutcome",
    "Rows",
    "Rule",
    "RunEstimate",
    "RunObserver",
    "RunResult",
    "SpanFigures",
    "Usage",
    "abenchmark_judge",
    "arun_plan",
    "benchmark_figures",
    "benchmark_judge",
    "build_components",
    "create_executor",
    "estimate_plan",
    "evaluate_sample",
    "labelled_row",
    "read_labelled_rows",
    "run_fingerprint",
    "run_pass",
    "run_plan",
    "run_sync",
    "stored_plan",
]
