"""Each package's public surface, pinned: what users (and these tests) may import.

A package shows its surface in its `__init__`; everything else is a private `_name.py` module.
Adding a name here is a decision to support it; removing one breaks users, so it is a decision
too. The CLI is pinned by its commands (test_cli_commands.py).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import vera

ROOT = Path(__file__).parents[2]

SURFACES: dict[str, list[str]] = {
    "vera.executors": [
        "EXECUTORS",
        "Executor",
        "LocalExecutor",
        "PassSink",
        "PassWork",
        "Rows",
        "run_pass",
    ],
    "vera": [
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
    ],
    "vera.datasets": [
        "BUNDLED",
        "DatasetFormat",
        "FORMAT_REGISTRY",
        "InvalidRow",
        "JsonRefused",
        "RawRow",
        "bundled_path",
        "invalid_data",
        "loads_bounded",
        "open_dataset",
    ],
    "vera.integrations": [
        "PhoenixAnnotator",
        "annotate_phoenix",
        "export_report",
    ],
    "vera.integrations.github": [
        "GitHubApiError",
        "post_comment",
        "write_step_outputs",
    ],
    "vera.integrations.mlflow": [
        "faithfulness_scorer",
        "log_run",
        "scorers",
    ],
    "vera.integrations.pytest_plugin": ["vera_judge"],
    "vera.judges": [
        "BaseJudge",
        "Capability",
        "CascadeJudge",
        "Checklist",
        "EntailmentMatrix",
        "ItemVerdict",
        "JUDGE_REGISTRY",
        "Judge",
        "JudgeDescription",
        "JudgeOptions",
        "JudgeWork",
        "LLMJudge",
        "Mode",
        "NLIJudge",
        "OfflineJudge",
        "Relevance",
        "RelevanceVerdict",
        "RubricItem",
        "RubricRequest",
        "UnsupportedLanguageError",
        "create_judge",
    ],
    "vera.metrics": [
        "ClaimAnalysis",
        "METRIC_REGISTRY",
        "Metric",
        "MetricResult",
        "MetricStatus",
        "Need",
        "Rubric",
        "create_metric",
        "goal_completion",
        "load_rubrics",
        "not_applicable",
        "register_metric",
        "scored",
        "write_items_file",
    ],
    "vera.pipelines": [
        "Pipeline",
        "RagState",
        "UserPipelineError",
        "check_laws",
        "identity",
    ],
    "vera.providers": [
        "AuthenticationError",
        "BadRequestError",
        "ChatModel",
        "ChatRequest",
        "ChatResponse",
        "ManagedChatModel",
        "Message",
        "ModelNotFoundError",
        "OutputModeRefusedError",
        "PROVIDER_REGISTRY",
        "Price",
        "PriceTable",
        "ProviderConnectionError",
        "ProviderError",
        "ProviderOptions",
        "ProviderTimeoutError",
        "ProviderUnavailableError",
        "RateLimitError",
        "RetryableProviderError",
        "TruncatedOutputError",
        "Usage",
        "create_chat_model",
    ],
    "vera.render": [
        "REPORTER_REGISTRY",
        "RenderContext",
        "RenderingReporter",
        "Reporter",
        "RunView",
        "atomic_text",
        "check_report_targets",
        "open_run_view",
        "render_html",
        "render_report",
        "write_reports",
        "write_run_reports",
        "write_stored_report",
    ],
    "vera.testing": [
        "FakeChatModel",
        "FakeJudge",
        "assert_faithful",
        "assert_faithful_async",
        "assert_no_hallucination",
    ],
}


def _whitebox(path: Path) -> str | None:
    """The reason a file gives for reaching a private module on purpose: its top-level
    `WHITEBOX = "..."`, beside the code it explains (an internal no user sees, patched or read)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "WHITEBOX"
        ]:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
                return value.value
    return None


def _packages() -> list[str]:
    # Every public module: the packages, and modules such as vera.testing and
    # vera.integrations.github whose name has no private part.
    found = [
        m.name
        for m in pkgutil.walk_packages(vera.__path__, "vera.")
        if not any(part.startswith("_") for part in m.name.split(".")[1:])
    ]
    return sorted({"vera", *found} - {"vera.cli"})


def test_every_package_is_pinned() -> None:
    assert _packages() == sorted(SURFACES)


@pytest.mark.parametrize("package", sorted(SURFACES))
def test_each_package_shows_its_pinned_surface(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == SURFACES[package]
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == [], f"{package}.__all__ names what it does not define: {missing}"


def _private_imports(path: Path, *, typing_too: bool = True) -> list[str]:
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not typing_too:  # leave out `if TYPE_CHECKING:` blocks: a type is not a call
        tree.body = [n for n in tree.body if not _type_checking_block(n)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vera"):
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("vera")]
        else:
            continue
        found += [n for n in names if any(p.startswith("_") for p in n.split(".")[1:])]
    return [f"{path.relative_to(ROOT)}: {name}" for name in found if name != "vera.__version__"]


@pytest.mark.slow
def test_tests_benchmarks_and_training_import_public_paths_only() -> None:
    # Or say why not, in the file: a whitebox test of the engine names what it reaches for.
    files = [
        path
        for folder in ("tests", "benchmarks", "training")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if _whitebox(path) is None
    ]
    assert [line for path in files for line in _private_imports(path)] == []


def test_a_whitebox_file_reaches_a_private_module() -> None:
    # A reason left behind once the private import has gone would excuse the next one.
    files = [
        path
        for folder in ("tests", "benchmarks", "training")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if _whitebox(path) is not None and path.name != "test_public_surfaces.py"
    ]
    assert files and [str(p.relative_to(ROOT)) for p in files if not _private_imports(p)] == []


# What the CLI may take from the engine: the text a command prints (a Python caller gets the
# same facts as data; vera.render's private modules are all this), the guards every printed
# line passes (keys masked, control characters shown), and its own options: their parsing, the
# defaults their help shows, the table that ties each to a setting, and the settings `--resume`
# names again.
_PRESENTATION = re.compile(
    r"(\w+_lines?|\w+_html|\w+_note|printable|redact|install_hint|parse_\w+|check_access"
    r"|describe_\w+|\w+_help|DEFAULT_[A-Z_]+|QUICK_SAMPLES|SETTING_USES|resume_\w+|resumed_with)"
)


def _type_checking_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"


def _presentation(name: str) -> bool:
    """A presentation helper of a private module, or the module of a `from` import (whose
    names are each checked; the CLI has no bare `import` of a private module)."""
    if name.startswith("vera.render._"):  # the presentation package: tables, panels, progress
        return True
    return _is_module(name) or _PRESENTATION.fullmatch(name.rpartition(".")[2]) is not None


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_the_cli_calls_the_library_through_its_public_surface() -> None:
    # The CLI is a shell over the library: what does the work, a Python caller can import too.
    found = [
        line
        for path in sorted((ROOT / "src" / "vera" / "cli").glob("*.py"))
        for line in _private_imports(path, typing_too=False)
        if ": vera.cli." not in line and not _presentation(line.split(": ")[1])
    ]
    assert found == []
