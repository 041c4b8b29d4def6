"""The `vera` command line. Errors become a message and an exit code here, and nowhere else.

Exit codes (docs/reliability.md): 0 every sample scored and every gate holds; 1 a gate failed;
2 bad usage or input, nothing evaluated (or a failure every sample would hit, such as a rejected
key); 3 the run is incomplete (samples errored or were skipped beyond --max-errors, or none
could be scored).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vera._version import __version__
from vera.api import calibrate
from vera.cli_monitor import MONITOR_HELP, monitor_command
from vera.comparison import compare_reports, most_changed, run_differences, verdict_changes
from vera.datasets import load_dataset
from vera.datasets.bundled import BUNDLED
from vera.datasets.fields import parse_field_option
from vera.errors import ConfigError, JudgeError, VeraError
from vera.estimate import RunEstimate, estimate_plan
from vera.history import DEFAULT_HISTORY_PATH, PAGE_SIZE, RunStore
from vera.judge_benchmark import JudgeBenchmark, Rule, benchmark_judge
from vera.metrics.registry import metric_classes
from vera.outputs import (
    atomic_text,
    check_output_paths,
    check_report_targets,
    open_run_view,
    parse_report_option,
    write_reports,
    write_stored_report,
)
from vera.plan import (
    DEFAULT_METRICS,
    QUICK_SAMPLES,
    DatasetRef,
    GeneratorSpec,
    RetrievalOptions,
    RunPlan,
    build_plan,
    resume_command,
)
from vera.report import Report
from vera.reports.calibration import calibration_lines
from vera.reports.console import (
    SHOWN_FAILURES,
    Cell,
    Column,
    change_cell,
    format_interval,
    format_score,
    plain_cells,
    print_summary,
    print_table,
)
from vera.reports.progress import RunProgress
from vera.reports.run_view import RunView
from vera.run import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_USAGE,
    Bindings,
    RunObserver,
    RunResult,
    run_plan,
    stored_plan,
)
from vera.sample_limits import (
    DEFAULT_MAX_CONTEXT_CHARS,
    DEFAULT_MAX_RESPONSE_CHARS,
    DEFAULT_SAMPLE_TIMEOUT,
)
from vera.settings import DEFAULT_CONCURRENCY, load_settings
from vera.sqlite_file import MissingStoreError
from vera.types.extras import install_hint
from vera.types.secrets import redact

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    from vera.generate import GenerationResult

__all__ = ["app", "main"]


app = typer.Typer(
    name="vera",
    help="VERA: claim-level faithfulness evaluation for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class _Console(Console):
    """A console whose text passes through `redact`: a key in a URL that reached a message
    (an option echoed back, a server's error) is never printed."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(redact(o) if isinstance(o, str) else o for o in objects), **kwargs)


out = _Console()
err = _Console(stderr=True)


def _help_hint(extra: str) -> str:
    """`install_hint` for a help text, which Typer reads as console markup: escaped, so the
    `[view]` of `vera-eval[view]` is shown, not taken for a style."""
    return escape(install_hint(extra))


def _version(value: bool) -> None:
    if value:
        out.print(f"vera {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """VERA: claim-level faithfulness evaluation for RAG systems."""


# `vera eval` options, one alias each, so the command reads as the list of what it takes.
_DatasetFlag = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        "-d",
        help="Dataset file (.json, .jsonl, .csv) or bundled name. Default: the bundled "
        "example (with --quick).",
    ),
]
_MetricFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        "-m",
        help="Metric to compute (repeatable; `vera metrics` lists them, `all` takes every "
        "one). Default: faithfulness.",
    ),
]
_OutputFlag = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the JSON report here.")
]
_RegressionFlag = Annotated[
    bool,
    typer.Option(
        "--regression",
        help="CI mode: apply every gate, and fail on a significant drop against the last "
        "finished run with the same plan (dataset content, judge, metrics, pipeline, "
        "thresholds), or --baseline-run. Needs the run history.",
    ),
]
_BaselineRunFlag = Annotated[
    str | None,
    typer.Option(
        "--baseline-run",
        help="A stored run to guard against: fail only on a significant drop (paired). It "
        "must have the same plan as this run, unless --any-plan.",
    ),
]
_AnyPlanFlag = Annotated[
    bool,
    typer.Option(
        "--any-plan",
        help="Let --baseline-run / --regression compare with a run of another plan (judge, "
        "metrics, pipeline, thresholds or dataset content); what differs is printed.",
    ),
]
_FieldFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        help="FIELD=COLUMN: read the dataset's COLUMN as VERA's FIELD, e.g. --field "
        "contexts=docs (repeatable; also the fields table of vera.toml, or tool.vera.fields "
        "in pyproject.toml).",
    ),
]
_HtmlFlag = Annotated[
    Path | None,
    typer.Option("--html", help="Write the HTML report here (one offline file)."),
]
_MarkdownFlag = Annotated[
    Path | None,
    typer.Option("--markdown", help="Write a Markdown summary (for a pull-request comment)."),
]
_JunitFlag = Annotated[
    Path | None,
    typer.Option("--junit", help="Write JUnit XML: each sample and metric a test case."),
]
_ReportFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--report",
        help="FORMAT=PATH: also write the report in this format: json, html, md, junit or an "
        "installed plugin's, e.g. --report csv=out.csv (repeatable).",
    ),
]
_QuickFlag = Annotated[
    bool, typer.Option("--quick", help=f"Evaluate only the first {QUICK_SAMPLES} samples.")
]
_ThresholdFlag = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        min=0.0,
        max=1.0,
        help="Pass mark of each higher-is-better metric, and a gate: exit 1 when a metric's "
        "mean misses its threshold (rates such as hallucination_rate keep their own).",
    ),
]
_JudgeFlag = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="offline (default); nli:PATH_OR_HUB_ID, a local NLI model (the nli extra); "
        "cascade, offline with --cascade-judge for unsure claims; or PROVIDER:MODEL such "
        "as openai:gpt-4o-mini or anthropic:claude-sonnet-4-5, or litellm:MODEL for any "
        "model LiteLLM reaches (the litellm extra). Also VERA_JUDGE or vera.toml.",
    ),
]
_CascadeJudgeFlag = Annotated[
    str | None,
    typer.Option(
        "--cascade-judge",
        help="With --judge cascade: the PROVIDER:MODEL judge that verifies the claims the "
        "offline judge is unsure of.",
    ),
]
_CascadeLowFlag = Annotated[
    float | None,
    typer.Option(
        "--cascade-low",
        min=0.0,
        max=1.0,
        help="With --judge cascade: an offline entailment at most this is decided offline "
        "(default 0.2).",
    ),
]
_CascadeHighFlag = Annotated[
    float | None,
    typer.Option(
        "--cascade-high",
        min=0.0,
        max=1.0,
        help="With --judge cascade: an offline entailment at least this is decided offline "
        "(default 0.9).",
    ),
]
_OfflineMinSupportFlag = Annotated[
    float | None,
    typer.Option(
        "--offline-min-support",
        min=0.0,
        max=1.0,
        help="With --judge offline:learned: the least probability of support that counts "
        "as fully supported (default 0.97, chosen on RAGTruth dev data); lower flags fewer "
        "claims.",
    ),
]
_JudgeBaseUrlFlag = Annotated[
    str | None,
    typer.Option(
        "--judge-base-url",
        help="Base URL of an OpenAI-compatible server (vLLM, Ollama, LM Studio, Azure).",
    ),
]
_JudgeModeFlag = Annotated[
    str | None,
    typer.Option(
        "--judge-mode",
        help="LLM judge calls per sample: batched (2, default), single_call (1), "
        "per_claim (1 + claims), truths (3, 2 when contexts repeat).",
    ),
]
_JudgeSamplesFlag = Annotated[
    int | None,
    typer.Option(
        "--judge-samples",
        min=1,
        help="Verify each claim K times and keep the majority verdict; reports agreement.",
    ),
]
_JudgeTemperatureFlag = Annotated[
    float | None,
    typer.Option("--judge-temperature", min=0.0, max=2.0, help="Default 0."),
]
_MaxTokensFlag = Annotated[
    int | None,
    typer.Option("--max-tokens", min=16, help="Reply budget of one judge call (default 2048)."),
]
_TimeoutFlag = Annotated[
    float | None,
    typer.Option("--timeout", min=0.001, help="Seconds one provider call may take (default 60)."),
]
_RetriesFlag = Annotated[
    int | None,
    typer.Option("--retries", min=0, help="Retries of a provider call that may pass (default 5)."),
]
_FailFastFlag = Annotated[
    int | None,
    typer.Option(
        "--fail-fast",
        min=0,
        help="Stop when this many first provider calls all fail alike (default 8; 0: never).",
    ),
]
_PromptsDirFlag = Annotated[
    Path | None,
    typer.Option("--prompts-dir", help="Folder of prompt files replacing the bundled ones."),
]
_PipelineFlag = Annotated[
    str | None,
    typer.Option(
        "--pipeline",
        help="Answer each query with this pipeline first: a baseline name (naive-rag, "
        "simple-verification, vera), module:object (a function, a LangChain Runnable or a "
        "LlamaIndex query engine), or an http(s) URL.",
    ),
]
_BaselineFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--baseline",
        help="Also run this baseline on the same samples and compare (repeatable).",
    ),
]
_GeneratorFlag = Annotated[
    str | None,
    typer.Option(
        "--generator",
        help="The baselines' generator: extractive (offline, default) or PROVIDER:MODEL.",
    ),
]
_GeneratorBaseUrlFlag = Annotated[
    str | None,
    typer.Option("--generator-base-url", help="Base URL for the generator (default: the judge's)."),
]
_TopKFlag = Annotated[
    int, typer.Option("--top-k", min=1, help="Chunks the baselines retrieve per query.")
]
_DocumentsFlag = Annotated[
    Path | None,
    typer.Option("--documents", help="Folder of .txt/.md files the baselines retrieve from."),
]
_ChunkSizeFlag = Annotated[
    int, typer.Option("--chunk-size", min=1, help="Characters per retrieved chunk.")
]
_ChunkOverlapFlag = Annotated[
    int, typer.Option("--chunk-overlap", min=0, help="Characters chunks share.")
]
_CheckLawsFlag = Annotated[
    bool,
    typer.Option("--check-laws", help="Check seed 001's pipeline laws on the pipeline."),
]
_ResumeFlag = Annotated[
    str | None,
    typer.Option(
        "--resume",
        help="Finish an interrupted run (its id from `vera runs list`): only the samples "
        "it had not finished are evaluated, with its original options.",
    ),
]
_NoHistoryFlag = Annotated[
    bool, typer.Option("--no-history", help="Do not store this run in the run history.")
]
_HistoryPathFlag = Annotated[
    Path | None,
    typer.Option("--history", help="The run store (default .vera/runs.sqlite)."),
]
_NoCacheFlag = Annotated[
    bool, typer.Option("--no-cache", help="Call the provider even for cached requests.")
]
_CachePathFlag = Annotated[
    Path | None, typer.Option("--cache-path", help="Response cache file (SQLite).")
]
_MaxCostFlag = Annotated[
    float | None,
    typer.Option("--max-cost", min=0.0, help="US dollars; stop starting judge calls after."),
]
_MaxErrorsFlag = Annotated[
    str | None,
    typer.Option(
        "--max-errors",
        help="Samples that may error or be skipped (a count, or a share such as 2%) before "
        "the run counts as incomplete and exits 3. Default 0.",
    ),
]
_SkipInvalidFlag = Annotated[
    bool,
    typer.Option("--skip-invalid", help="Record invalid rows in the report and go on."),
]
_FormatFlag = Annotated[
    str | None,
    typer.Option(
        "--format",
        help=(
            "Dataset format when the extension does not say: json, jsonl, csv, parquet, or "
            "otlp (OpenTelemetry traces; found by content in .json/.jsonl files)."
        ),
    ),
]
_DryRunFlag = Annotated[
    bool,
    typer.Option("--dry-run", help="Estimate judge calls, tokens and cost; call nothing."),
]
_GroupByFlag = Annotated[
    list[str] | None,
    typer.Option("--group-by", help="Metadata key to break the aggregates down by (repeatable)."),
]
_ConcurrencyFlag = Annotated[
    int | None,
    typer.Option("--concurrency", min=1, help=f"Samples at once (default {DEFAULT_CONCURRENCY})."),
]
_MaxResponseCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-response-chars",
        min=1,
        help="A longer response makes its sample an error, unjudged "
        f"(default {DEFAULT_MAX_RESPONSE_CHARS:,}).",
    ),
]
_MaxContextCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-context-chars",
        min=1,
        help="A longer context makes its sample an error, unjudged "
        f"(default {DEFAULT_MAX_CONTEXT_CHARS:,}).",
    ),
]
_OtelEndpointFlag = Annotated[
    str | None,
    typer.Option(
        "--otel-endpoint",
        help="Also send the run as OpenTelemetry spans (one per sample, scores as attributes) "
        f"to this OTLP/HTTP collector URL; needs the otel extra: {_help_hint('otel')}.",
    ),
]
_SampleTimeoutFlag = Annotated[
    float | None,
    typer.Option(
        "--sample-timeout",
        min=0.001,
        help="Seconds the judge work of one sample may take, with any judge; past it the "
        f"sample is an error (default {DEFAULT_SAMPLE_TIMEOUT:g}).",
    ),
]


_ExecutorFlag = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="local (default), or ray: the samples run on the workers of a Ray cluster "
        f"(needs the ray extra: {_help_hint('ray')}).",
    ),
]
_RayAddressFlag = Annotated[
    str | None,
    typer.Option("--ray-address", help="With --executor ray: the cluster to join (else local)."),
]
_RayWorkersFlag = Annotated[
    int | None,
    typer.Option(
        "--ray-workers", min=1, help="With --executor ray: workers (default one per CPU)."
    ),
]

_EVAL_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("dataset", _DatasetFlag, None),
    ("metric", _MetricFlag, None),
    ("output", _OutputFlag, None),
    ("regression", _RegressionFlag, False),
    ("baseline_run", _BaselineRunFlag, None),
    ("any_plan", _AnyPlanFlag, False),
    ("html", _HtmlFlag, None),
    ("markdown", _MarkdownFlag, None),
    ("junit", _JunitFlag, None),
    ("report", _ReportFlag, None),
    ("quick", _QuickFlag, False),
    ("threshold", _ThresholdFlag, None),
    ("judge", _JudgeFlag, None),
    ("cascade_judge", _CascadeJudgeFlag, None),
    ("cascade_low", _CascadeLowFlag, None),
    ("cascade_high", _CascadeHighFlag, None),
    ("offline_min_support", _OfflineMinSupportFlag, None),
    ("judge_base_url", _JudgeBaseUrlFlag, None),
    ("judge_mode", _JudgeModeFlag, None),
    ("judge_samples", _JudgeSamplesFlag, None),
    ("judge_temperature", _JudgeTemperatureFlag, None),
    ("max_tokens", _MaxTokensFlag, None),
    ("timeout", _TimeoutFlag, None),
    ("retries", _RetriesFlag, None),
    ("fail_fast", _FailFastFlag, None),
    ("prompts_dir", _PromptsDirFlag, None),
    ("pipeline", _PipelineFlag, None),
    ("baseline", _BaselineFlag, None),
    ("generator", _GeneratorFlag, None),
    ("generator_base_url", _GeneratorBaseUrlFlag, None),
    ("top_k", _TopKFlag, 3),
    ("documents", _DocumentsFlag, None),
    ("chunk_size", _ChunkSizeFlag, 800),
    ("chunk_overlap", _ChunkOverlapFlag, 100),
    ("check_laws", _CheckLawsFlag, False),
    ("resume", _ResumeFlag, None),
    ("no_history", _NoHistoryFlag, False),
    ("history_path", _HistoryPathFlag, None),
    ("no_cache", _NoCacheFlag, False),
    ("cache_path", _CachePathFlag, None),
    ("max_cost", _MaxCostFlag, None),
    ("max_errors", _MaxErrorsFlag, None),
    ("skip_invalid", _SkipInvalidFlag, False),
    ("format", _FormatFlag, None),
    ("field", _FieldFlag, None),
    ("dry_run", _DryRunFlag, False),
    ("group_by", _GroupByFlag, None),
    ("concurrency", _ConcurrencyFlag, None),
    ("executor", _ExecutorFlag, None),
    ("ray_address", _RayAddressFlag, None),
    ("ray_workers", _RayWorkersFlag, None),
    ("max_response_chars", _MaxResponseCharsFlag, None),
    ("max_context_chars", _MaxContextCharsFlag, None),
    ("sample_timeout", _SampleTimeoutFlag, None),
    ("otel_endpoint", _OtelEndpointFlag, None),
)
"""`vera eval`'s options, in the order `--help` lists them: name, type with its typer.Option,
default. A table rather than a signature of some fifty parameters; `_takes` turns it into one."""

CommandT = TypeVar("CommandT", bound=Callable[..., Any])


def _takes(options: Sequence[tuple[str, Any, Any]]) -> Callable[[CommandT], CommandT]:
    """Give a `**flags` command the signature `options` describe, which typer reads."""

    def attach(command: CommandT) -> CommandT:
        parameters = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind
            )
            for name, kind, default in options
        ]
        command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
        return command

    return attach


@app.command("eval")
@_takes(_EVAL_OPTIONS)
def eval_command(**flags: Any) -> None:
    """Evaluate a dataset and print a summary: vera eval -d answers.jsonl --threshold 0.8"""
    try:
        plan, resume_id = _plan(flags)
        if flags["dry_run"]:
            return _print_estimate(estimate_plan(plan))
        result = _run(plan, resume_id)
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish(result, flags)


EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a process ended by SIGINT (128 + 2)."""


class _Progress(RunProgress, RunObserver):
    """`RunProgress` as the observer `run_plan` takes."""


def _run(plan: RunPlan, resume_id: str | None) -> RunResult:
    """Run `plan` showing its progress on stderr; Ctrl-C ends it saying how to finish it."""
    with _Progress(err) as progress:
        try:
            # Streamed: each result goes to the history and leaves memory (see Bindings).
            return run_plan(plan, Bindings(keep_samples=False), resume=resume_id, observer=progress)
        except KeyboardInterrupt:
            progress.pass_finished()
            if progress.run_id is None:
                kept = "nothing was stored (the history is off)"
            else:
                kept = (
                    f"{progress.finished} finished sample(s) are stored in run "
                    f"{progress.run_id}; finish it with: {resume_command(plan, progress.run_id)}"
                )
            err.print(f"Interrupted: {kept}", highlight=False, markup=False)
            raise typer.Exit(EXIT_INTERRUPTED) from None


def _fail(exc: Exception) -> NoReturn:
    """Bad usage or input: the message, and exit 2 (nothing was evaluated)."""
    # Not wrapped: a message is one line to read, grep and paste, whatever the width.
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE) from None


def _finish(result: RunResult, flags: dict[str, Any]) -> NoReturn:
    """Render the run, write every report asked for, and exit with the run's code."""
    try:
        # One view for the summary and every report: the history is opened once to read a
        # streamed run's results back, which can fail (damaged).
        with open_run_view(result) as view:
            print_summary(result.report, out, err, view.sample_results())
            _write_outputs(view, _outputs(flags))
            if flags["otel_endpoint"]:
                _export_spans(view, flags["otel_endpoint"])
    except VeraError as exc:
        _fail(exc)
    raise typer.Exit(_exit_code(result))


def _export_spans(view: RunView, endpoint: str) -> None:
    """The run as OpenTelemetry spans, one per sample of the view (a streamed run's too)."""
    from vera.otel_export import export_report  # the SDK only when asked for

    sent = export_report(view.report, endpoint, results=view.sample_results())
    out.print(f"{sent} spans sent to {escape(endpoint)}", highlight=False)


_OUTPUT_FLAGS = {"json": "output", "html": "html", "md": "markdown", "junit": "junit"}
"""Each built-in report format and the `eval` flag that asks for it (`--report` names any)."""


def _outputs(flags: dict[str, Any]) -> list[tuple[str, Path]]:
    """The reports the flags ask for, as (format, path): the format flags, then `--report`."""
    named = [(fmt, flags[key]) for fmt, key in _OUTPUT_FLAGS.items() if flags[key]]
    return named + parse_report_option(flags["report"] or ())


def _plan(flags: dict[str, Any]) -> tuple[RunPlan, str | None]:
    """The run the flags ask for; with --resume, the stored run's own plan (only where its
    reports go is new)."""
    check_report_targets(_outputs(flags))
    if flags["resume"]:
        named = {key: flags[flag] for key, flag in _NAMED_AGAIN.items()}
        plan, run_id = stored_plan(flags["resume"], flags["history_path"], named=named)
        history = {"history": True, "history_path": flags["history_path"]}
        if flags["history_path"] is None:
            history.pop("history_path")
        settings = plan.settings.model_copy(update=history)
        return plan.model_copy(update={"settings": settings}), run_id
    if flags["dataset"] is None and not flags["quick"]:
        raise typer.BadParameter("give --dataset PATH, or --quick to try the bundled example")
    documents = flags["documents"]
    return build_plan(
        dataset=DatasetRef(
            source=flags["dataset"] or "example",
            format=flags["format"],
            skip_invalid=flags["skip_invalid"],
        ),
        metrics=flags["metric"] or DEFAULT_METRICS,
        threshold=flags["threshold"],
        overrides={key: flags[flag] for key, flag in _SETTING_FLAGS.items()}
        | {"cache": False if flags["no_cache"] else None}
        | {"history": False if flags["no_history"] else None}
        | {"fields": parse_field_option(flags["field"]) if flags["field"] else None},
        quick=flags["quick"],
        pipeline=flags["pipeline"],
        baselines=tuple(flags["baseline"] or ()),
        generator=GeneratorSpec(
            spec=flags["generator"] or "extractive", base_url=flags["generator_base_url"]
        ),
        retrieval=RetrievalOptions(
            top_k=flags["top_k"],
            chunk_size=flags["chunk_size"],
            chunk_overlap=flags["chunk_overlap"],
            documents=str(documents) if documents else None,
        ),
        group_by=tuple(flags["group_by"] or ()),
        check_laws=flags["check_laws"],
        regression=flags["regression"],
        baseline_run=flags["baseline_run"],
        any_plan=flags["any_plan"],
    ), None


_NAMED_AGAIN = {
    "pipeline": "pipeline",
    "baselines": "baseline",
    "prompts_dir": "prompts_dir",
    "judge": "judge",
    "cascade_judge": "cascade_judge",
    "metrics": "metric",
    "generator": "generator",
    "ray_address": "ray_address",
    "judge_base_url": "judge_base_url",
    "generator_base_url": "generator_base_url",
}
"""`vera.plan.NAMED_AGAIN_FLAGS` keys and the `eval` flag that gives each again on --resume."""

_SETTING_FLAGS = {
    "judge": "judge",
    "judge_base_url": "judge_base_url",
    "judge_mode": "judge_mode",
    "judge_samples": "judge_samples",
    "judge_temperature": "judge_temperature",
    "judge_max_tokens": "max_tokens",
    "timeout": "timeout",
    "retries": "retries",
    "fail_fast": "fail_fast",
    "executor": "executor",
    "ray_address": "ray_address",
    "ray_workers": "ray_workers",
    "judge_prompts_dir": "prompts_dir",
    "cascade_judge": "cascade_judge",
    "cascade_low": "cascade_low",
    "cascade_high": "cascade_high",
    "offline_min_support": "offline_min_support",
    "cache_path": "cache_path",
    "max_cost": "max_cost",
    "max_errors": "max_errors",
    "concurrency": "concurrency",
    "history_path": "history_path",
    "max_response_chars": "max_response_chars",
    "max_context_chars": "max_context_chars",
    "sample_timeout": "sample_timeout",
}
"""Settings as `vera.toml` names them, and the `eval` flag that overrides each."""


def _write_outputs(view: RunView, outputs: list[tuple[str, Path]]) -> None:
    """Every report the user asked for, whatever the run's outcome, from the run's one view."""
    write_reports(view, outputs)
    for _, path in outputs:
        out.print(f"Report written to {escape(str(path))}", highlight=False)


def _exit_code(result: RunResult) -> int:
    """The run's exit code (`RunResult.exit_code`), with what decided it said plainly."""
    report = result.report
    if report.stopped is not None:
        err.print(
            f"[bold red]Run stopped:[/] {escape(report.stopped.reason)}; "
            f"{report.counts.skipped} sample(s) not evaluated, finished ones kept.",
            highlight=False,
        )
    if result.incomplete is not None:
        # A failure that stopped the run has its fix in the "Run stopped" line already.
        stopped_by_failure = report.stopped is not None and not report.stopped.planned
        remedy = "" if stopped_by_failure else f": {result.remedy}"
        err.print(
            f"[bold red]Run incomplete:[/] {escape(result.incomplete)}; the scores cover only "
            f"what was measured{escape(remedy)}.",
            highlight=False,
        )
    regression = report.regression
    if regression is not None:
        out.print(regression.describe(), highlight=False, markup=False, soft_wrap=True)
    if result.gated and result.gate_failures:
        err.print("[bold red]Gate failed:[/]")
        for line in result.gate_failures:
            err.print(f"  - {line}", highlight=False, markup=False)
    elif result.gated and result.exit_code == EXIT_OK:
        out.print("Gate passed: every gate holds" + _against(result), highlight=False)
    return result.exit_code


def _against(result: RunResult) -> str:
    """What a passed gate says of its regression check: the run compared with, or none."""
    if result.report.regression is None:
        return ""
    if result.compared_with is None:
        return " (no regression check: no earlier run with this plan)"
    return f" (no significant drop against run {result.compared_with})"


def _print_estimate(estimate: RunEstimate) -> None:
    if estimate.cost_usd is None:
        cost = "unknown (no price for this model)"
    else:
        cost = f"${estimate.cost_usd:.4f}"
    out.print(
        f"Dry run · judge {estimate.judge} · {estimate.samples} samples · "
        f"{estimate.calls} calls · about {estimate.prompt_tokens} prompt and "
        f"{estimate.completion_tokens} completion tokens · about {cost} "
        "(an upper bound: cached replies cost nothing). No call was made.",
        highlight=False,
        markup=False,
    )
    if len(estimate.passes) > 1 or any(p.generator_calls for p in estimate.passes):
        for figures in estimate.passes:
            line = (
                f"  {figures.name}: {figures.samples} samples · {figures.generator_calls} "
                f"generator and {figures.judge_calls} judge calls"
            )
            if figures.uncounted_steps:
                line += f" (not counted: calls inside {', '.join(figures.uncounted_steps)})"
            out.print(line, highlight=False, markup=False)


runs_app = typer.Typer(help="The run history (.vera/runs.sqlite).", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
HistoryOption = Annotated[
    Path | None, typer.Option("--history", help="The run store (default .vera/runs.sqlite).")
]


def _store(path: Path | None) -> RunStore:
    """The run history for commands that only read it: never created or changed by them."""
    return RunStore(path or DEFAULT_HISTORY_PATH, read_only=True)


_RUNS_COLUMNS = (
    Column("Run"),
    Column("Status", "status", "left"),
    Column("Dataset", "dataset", "left"),
    Column("Samples", "samples", "left"),
    Column("Metrics", "metrics", "left"),
)


@runs_app.command("list")
def runs_list(
    history: HistoryOption = None,
    limit: Annotated[
        int,
        typer.Option("--limit", min=0, help="List the newest N runs (0: every run)."),
    ] = PAGE_SIZE,
) -> None:
    """List stored runs, newest first (the newest 50 unless --limit says otherwise)."""
    try:
        store = _store(history)
        if limit:
            page = store.page(1, limit)
            records, total = page.records, page.total
            for run in page.damaged:
                warnings.warn(f"{run}; skipped it, the other runs are listed", stacklevel=1)
        else:
            records = store.list()
            total = len(records)
    except MissingStoreError as exc:
        err.print(f"No runs recorded: {escape(str(exc))}", highlight=False, soft_wrap=True)
        return
    except VeraError as exc:
        _fail(exc)
    rows: list[list[Cell]] = []
    for record in records:
        means = ", ".join(f"{k} {format_score(v)}" for k, v in record.metrics.items())
        rows.append([record.id, record.status, record.dataset, str(record.finished_samples), means])
    print_table(out, "Runs", _RUNS_COLUMNS, rows)
    if limit and total > limit:
        out.print(f"The newest {limit} of {total} runs; --limit 0 lists every one.")


@runs_app.command("show")
def runs_show(
    run_id: str,
    history: HistoryOption = None,
    plan: Annotated[
        bool,
        typer.Option("--plan", help="Also print the run's stored plan (JSON), after the summary."),
    ] = False,
) -> None:
    """Show one run: its summary if it finished, then (with --plan) the plan it ran."""
    try:
        store = _store(history)
        record = store.get(run_id)
        pipeline = record.options.get("pipeline")
        out.print(
            f"Run {record.id} · {record.status} · {record.finished_samples} samples done · "
            f"dataset {record.dataset}" + (f" · pipeline {pipeline}" if pipeline else ""),
            markup=False,
            highlight=False,
        )
        if record.status == "finished":
            print_summary(store.report(record.id), out, err)
        else:
            out.print(
                f"No summary yet: the run has not finished (vera eval --resume {record.id} "
                "finishes it).",
                markup=False,
                highlight=False,
            )
    except VeraError as exc:
        _fail(exc)
    if plan:
        out.print("Plan:", highlight=False)
        out.print_json(data=record.options)
    else:
        out.print(f"Its plan: vera runs show {record.id} --plan", markup=False, highlight=False)


_COMPARE_COLUMNS = (
    Column("Metric"),
    Column("A"),
    Column("B"),
    Column("B - A"),
    Column("95% CI"),
    Column("p"),
    Column("Change", "change"),
    Column("Paired", "paired"),
)
"""`vera compare`'s table: A is the first run given, B the second."""


@app.command("compare")
def compare_command(
    run_a: str,
    run_b: str,
    history: HistoryOption = None,
    top: int = SHOWN_FAILURES,
    any_dataset: Annotated[
        bool,
        typer.Option("--any-dataset", help="Compare runs of different datasets all the same."),
    ] = False,
) -> None:
    """Compare run B against run A: per-metric change with a paired 95 % interval and p-value,
    how many samples changed a verdict or a score, and those whose scores changed most. Warns
    when the two runs' judges, metrics or thresholds differ.

    Example: vera compare 20261122-101500 20261123-090000
    """
    try:
        store = _store(history)
        before, after = store.report(run_a), store.report(run_b)
        first, second = store.get(run_a).id, store.get(run_b).id
        if before.dataset != after.dataset and not any_dataset:
            raise ConfigError(
                f"run {first} is of dataset {before.dataset!r} and run {second} of "
                f"{after.dataset!r}: their samples do not pair; pass --any-dataset to compare "
                "them all the same"
            )
    except VeraError as exc:
        _fail(exc)
    changes = compare_reports(after, before)
    paired = max((c.paired_samples for c in changes.values()), default=0)
    rows: list[list[Cell]] = []
    for metric, c in changes.items():
        change = change_cell(c, after.metric_summary[metric].higher_is_better)
        rows.append(
            [
                metric,
                format_score(c.baseline_mean),
                format_score(c.system_mean),
                "—" if c.difference is None else f"{c.difference:+.3f}",
                format_interval(c.ci_low, c.ci_high),
                "—" if c.p_value is None else f"{c.p_value:.3f}",
                change if c.paired_samples else "— (nothing paired)",
                str(c.paired_samples),
            ]
        )
    title = f"{second} against {first} · {paired} paired samples"
    for line in run_differences(before, after):
        err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    print_table(out, title, _COMPARE_COLUMNS, rows)
    if paired == 0:
        err.print("[yellow]No sample id is in both runs: there is no change to measure.[/]")
    _print_changed(before, after, top)


def _print_changed(before: Report, after: Report, top: int) -> None:
    """How many samples changed a verdict or a score (never a threshold alone), then the
    `top` largest score changes."""
    changed = verdict_changes(before.samples, after.samples)
    worse = sum(1 for c in changed if c.direction == "worse")
    better = sum(1 for c in changed if c.direction == "better")
    out.print(
        f"{len(changed)} samples changed a claim's verdict or a score: {worse} worse, "
        f"{better} better (a threshold alone changes none)",
        highlight=False,
        markup=False,
    )
    for line in most_changed(before, after, top):
        out.print(line, highlight=False, markup=False)


@app.command("report")
def report_command(
    run_id: str,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write it.")],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="json, html, md, junit or a plugin's format; default from the extension.",
        ),
    ] = None,
    history: HistoryOption = None,
) -> None:
    """Write a stored run's report again, from the run history.

    Example: vera report 20260101-120000-ab12cd -o report.html
    """
    try:
        write_stored_report(_store(history), run_id, output, format)
    except VeraError as exc:
        _fail(exc)
    out.print(f"Report written to {escape(str(output))}", highlight=False)


_VIEW_HELP = (
    "Browse the run history in a web browser: its runs 50 a page, newest first, with a trend "
    "per dataset, one run's report (claims, verdicts, evidence), and two runs compared. "
    "Read-only; Ctrl-C stops it.\n\n"
    "Example: vera view --port 8765; off this machine: vera view --host 0.0.0.0 "
    "--allow-host myhost.example"
)


@app.command("view", help=_VIEW_HELP)
def view_command(
    history: HistoryOption = None,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The port to serve on (0: any free).")
    ] = 8765,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="The address to listen on; 127.0.0.1 keeps it to this machine."
        ),
    ] = "127.0.0.1",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the address; do not open a browser.")
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="A Host name the view answers besides the address it listens on "
            "(repeatable); needed with --host 0.0.0.0 or ::.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="VERA_VIEW_TOKEN",
            show_default=False,
            help="The access token every request must carry; off loopback one is generated "
            "when not given, and printed in the address.",
        ),
    ] = None,
) -> None:
    """Browse the run history in a web browser (the help is `_VIEW_HELP`)."""
    from vera.viewer import serve

    def ready(url: str) -> None:
        # Not through `out`, which masks every token in a URL: this address's token is the
        # one the user must see to open it.
        typer.echo(f"Serving the run history at {url} (Ctrl-C stops)")

    try:
        serve(
            history or DEFAULT_HISTORY_PATH,
            host=host,
            port=port,
            open_browser=not no_browser,
            on_ready=ready,
            token=token,
            allow_hosts=allow_host or (),
        )
    except VeraError as exc:
        _fail(exc)


class BenchmarkRule(StrEnum):
    """`vera benchmark --rule`: how an answer is flagged (`vera.judge_benchmark.Rule`)."""

    FAITHFULNESS = "faithfulness"
    ANY_CLAIM = "any-claim"


_BENCHMARK_RULES: dict[BenchmarkRule, Rule] = {
    BenchmarkRule.FAITHFULNESS: "faithfulness",
    BenchmarkRule.ANY_CLAIM: "any_claim",
}


app.command("monitor", help=MONITOR_HELP)(monitor_command)


@app.command("benchmark")
def benchmark_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL of labelled answers: response, contexts, label (1 = unfaithful, "
            "0 = faithful); optional id, query, task_type, hallucinated_spans.",
            show_default=False,
        ),
    ],
    judge: _JudgeFlag = None,
    offline_min_support: _OfflineMinSupportFlag = None,
    concurrency: _ConcurrencyFlag = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Judge only the first N rows.")
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
    rule: Annotated[
        BenchmarkRule,
        typer.Option(
            "--rule",
            help="The rule listed first and written as `groups` in --json (both are measured): "
            "faithfulness flags an answer whose faithfulness fails its threshold, as vera eval "
            "does; any-claim one with any claim not fully supported.",
        ),
    ] = BenchmarkRule.FAITHFULNESS,
) -> None:
    """Measure a judge on your own labels: how well it finds the unfaithful answers
    (precision, recall, F1, balanced accuracy, AUROC; per task type and rule; span overlap).

    Example: vera benchmark labelled.jsonl --judge offline:learned --json figures.json
    """
    try:
        check_output_paths([json_path] if json_path is not None else [])
        settings = load_settings(
            {"judge": judge, "offline_min_support": offline_min_support, "concurrency": concurrency}
        )
        result = benchmark_judge(
            file,
            settings.judge,
            settings=settings,
            concurrency=settings.concurrency,
            limit=limit,
            rule=_BENCHMARK_RULES[rule],
        )
    except JudgeError as exc:
        # The file was fine but the judge failed on a row: figures from part of the file would
        # pass for the whole, so there are none, and the exit is that of an incomplete run.
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INCOMPLETE) from None
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _print_benchmark(result)
    if json_path is not None:
        _write_json(json_path, result.model_dump_json(indent=2), "the figures")
        out.print(f"Figures written to {escape(str(json_path))}", highlight=False)


def _write_json(path: Path, text: str, what: str) -> None:
    """`text` to `path`, whole or not at all (`atomic_text`); a failure is exit 2."""
    try:
        with atomic_text(path, what=what) as file:
            file.write(text + "\n")
    except VeraError as exc:
        _fail(exc)


_BENCHMARK_COLUMNS = (
    Column("Group"),
    Column("n"),
    Column("Unfaithful", "unfaithful"),
    Column("Prec.", "precision"),
    Column("Recall", "recall"),
    Column("F1"),
    Column("BAcc", "balanced accuracy"),
    Column("κ"),
    Column("AUROC"),
)


def _benchmark_rule_title(result: JudgeBenchmark, rule: Rule) -> str:
    """What `rule` flags and what its AUROC ranks by."""
    if rule == "any_claim":
        return (
            "Rule any-claim: flagged when a claim is not fully supported; "
            "AUROC by the least supported claim"
        )
    ranked = result.ranked_by
    if result.rows_without_probability:
        count = result.rows_without_probability
        ranked += f" ({count} row{'s' if count != 1 else ''} without probabilities by faithfulness)"
    return (
        "Rule faithfulness: flagged when faithfulness is below its threshold, as vera eval "
        f"decides; AUROC by {ranked}"
    )


def _print_benchmark(result: JudgeBenchmark) -> None:
    """A table per rule (the chosen rule first), one row per group, the unfaithful class
    counted as positive; then the span figures."""
    out.print(
        f"Judge {result.judge} · {result.path} · {result.rows} rows", highlight=False, markup=False
    )
    for rule, groups in result.rules.items():
        rows = [
            [name, str(g.n), str(g.positives)]
            + [
                format_score(v)
                for v in (g.precision, g.recall, g.f1, g.balanced_accuracy, g.kappa, g.auroc)
            ]
            for name, g in groups.items()
        ]
        print_table(out, _benchmark_rule_title(result, rule), _BENCHMARK_COLUMNS, rows)
    span = result.span
    if span is not None:
        out.print(
            f"Spans, by character ({span.rows} rows): precision "
            f"{format_score(span.precision)}, recall {format_score(span.recall)}, "
            f"F1 {format_score(span.f1)}",
            highlight=False,
            markup=False,
        )
    out.print(
        f"{result.samples_per_s:.1f} samples/s ({result.wall_seconds:.2f} s judging)",
        highlight=False,
    )


@app.command("calibrate")
def calibrate_command(
    source: Annotated[
        str,
        typer.Argument(
            help="A JSON report, a dataset file whose samples carry human_faithful, or a "
            "stored run's id (or a unique prefix).",
            show_default=False,
        ),
    ],
    judge: _JudgeFlag = None,
    history: HistoryOption = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the calibration block as JSON here.")
    ] = None,
) -> None:
    """How far to trust the judge: its agreement with human labels (human_faithful) and the
    run's figures corrected by them, with 95 % intervals.

    Example: vera calibrate labelled.jsonl --judge offline:learned
    """
    try:
        check_output_paths([json_path] if json_path is not None else [])
        settings = load_settings({"judge": judge, "history_path": history})
        found = calibrate(source, settings.judge, settings=settings)
    except VeraError as exc:
        _fail(exc)
    for line in calibration_lines(found):
        out.print(line, highlight=False, markup=False)
    if json_path is not None:
        _write_json(json_path, found.model_dump_json(indent=2), "the calibration")
        out.print(f"Calibration written to {escape(str(json_path))}", highlight=False)


_MaxAnswerCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=1,
        help="Reject items whose answer is longer, as too_long (default 2,000).",
    ),
]
_MaxQuoteCharsFlag = Annotated[
    int | None,
    typer.Option(
        "--max-quote-chars",
        min=1,
        help="Reject items with a longer quote, as too_long (default 1,000).",
    ),
]


@app.command("generate")
def generate_command(
    documents: Annotated[
        Path, typer.Option("--documents", help="Folder of .txt/.md files to write items from.")
    ],
    generator: Annotated[
        str, typer.Option("--generator", help="PROVIDER:MODEL that writes the items.")
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the dataset (JSON) here.")
    ] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Items to generate.")] = 100,
    mix: Annotated[
        str | None,
        typer.Option("--mix", help="Category shares, e.g. fact_single=0.5,unanswerable=0.1."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the chunks drawn.")] = 0,
    max_answer_chars: _MaxAnswerCharsFlag = None,
    max_quote_chars: _MaxQuoteCharsFlag = None,
    judge: _JudgeFlag = None,
    judge_base_url: _JudgeBaseUrlFlag = None,
    generator_base_url: _GeneratorBaseUrlFlag = None,
    prompts_dir: _PromptsDirFlag = None,
    no_cache: _NoCacheFlag = False,
    cache_path: _CachePathFlag = None,
    max_cost: _MaxCostFlag = None,
    concurrency: _ConcurrencyFlag = None,
    dry_run: _DryRunFlag = False,
) -> None:
    """Write a test set from your documents; every item is checked before it is kept.

    Example: vera generate --documents docs/ --generator openai:gpt-4o-mini -o generated.json
    """
    # Imported here: the chunker and BM25 index load only for the command that needs them.
    from vera.generate import estimate_line, estimate_testset, generate_testset

    cli: dict[str, Any] = {"judge": judge, "judge_base_url": judge_base_url}
    cli |= {"judge_prompts_dir": prompts_dir, "cache_path": cache_path, "max_cost": max_cost}
    cli |= {"cache": False if no_cache else None, "concurrency": concurrency}
    try:
        if output is None and not dry_run:
            raise ConfigError("give -o PATH for the generated dataset")
        check_output_paths([output] if output is not None else [])
        options: dict[str, Any] = {"n": n, "mix": mix, "seed": seed}
        options["settings"] = load_settings(cli)
        if dry_run:
            estimate = estimate_testset(documents, generator, **options)
            out.print(estimate_line(estimate), highlight=False, markup=False)
            raise typer.Exit(EXIT_OK)
        given = {"max_answer_chars": max_answer_chars, "max_quote_chars": max_quote_chars}
        options |= {name: value for name, value in given.items() if value is not None}
        result = generate_testset(
            documents, generator, generator_base_url=generator_base_url, **options
        )
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish_generate(result, output)


def _finish_generate(result: GenerationResult, output: Path | None) -> NoReturn:
    """Print what `vera generate` kept and turned away, write the dataset, and exit: 0 when
    something was kept, 3 when nothing was or the budget stopped it."""
    from vera.generate import summary_lines
    from vera.generate.summary import write_dataset

    for line in summary_lines(result):
        out.print(line, highlight=False, markup=False)
    if result.kept_total and output is not None:
        _save_dataset(write_dataset, result, output)
    raise typer.Exit(EXIT_OK if result.kept_total and not result.stopped else EXIT_INCOMPLETE)


def _save_dataset(write: Callable[[Any, Path], None], result: Any, output: Path) -> None:
    """`vera generate`'s dataset written (whole, or the old file kept); a failure is exit 2."""
    try:
        write(result, output)
    except VeraError as exc:
        _fail(exc)
    out.print(f"Dataset written to {escape(str(output))}", highlight=False)


datasets_app = typer.Typer(help="The datasets bundled with VERA.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("list")
def datasets_list() -> None:
    """List the bundled datasets: `vera eval --dataset NAME` runs one."""
    table = Table(title="Bundled datasets")
    for column in ("Name", "Dataset", "Samples", "Documents", "Categories"):
        table.add_column(column)
    for name in BUNDLED:
        data = load_dataset(name)
        samples = list(data)
        categories = sorted({s.category or "uncategorized" for s in samples})
        table.add_row(
            *plain_cells(name, data.name, len(samples), len(data.documents), ", ".join(categories))
        )
    out.print(table)


_METRICS_COLUMNS = (
    Column("Name"),
    Column("Measures", "measures", "left"),
    Column("Better", "better", "left"),
    Column("Judge work", "judge work", "left"),
)


@app.command("metrics")
def metrics_command() -> None:
    """List the metrics `--metric` accepts, with what each measures and costs."""
    rows: list[list[Cell]] = []
    for name, cls in metric_classes().items():
        needs = ", ".join(sorted(need.value for need in cls.needs)) or "none"
        better = "higher" if cls.higher_is_better else "lower"
        rows.append([name, cls.description, better, needs])
    # A grid where it fits whole, else each metric stacked: a name is never cut.
    print_table(out, "VERA metrics", _METRICS_COLUMNS, rows)
    out.print("Metrics that share judge work share its calls: see docs/metrics.md.")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    err.print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False)


def main() -> None:
    """Entry point of the `vera` console script."""
    # The library says what it skipped through `warnings`; a user reads it as one plain line.
    warnings.showwarning = _show_warning
    app()
