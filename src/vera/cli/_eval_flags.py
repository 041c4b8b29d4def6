"""The flags of `vera eval`: `EvalFlags`, one typed field per flag, each with its `--help`
panel; `typed_command` gives a command taking an `EvalFlags` the signature typer reads, so
the command sees typed fields, not a dict (docs/architecture.md, "From a flag to the plan").
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer

from vera._plan import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_CONTEXT_CHARS,
    DEFAULT_MAX_RESPONSE_CHARS,
    DEFAULT_SAMPLE_TIMEOUT,
    QUICK_SAMPLES,
)
from vera.cli._app import _help_hint
from vera.datasets._formats import format_help

COMMON = "Options"
"""The first panel of `vera eval --help`: what most runs name (typer's own --help joins it)."""


def _flag(*names: str, help: str, metavar: str = "", **kwargs: Any) -> Any:
    """A `typer.Option` with a short metavar (a switch shows none)."""
    return typer.Option(*names, help=help, metavar=metavar, show_default=False, **kwargs)


_Text = str | None
_Number = float | None
_Count = int | None
_Paths = list[str] | None

_JudgeFlag = Annotated[
    str | None,
    _flag(
        "--judge",
        help="offline (default), offline:learned, nli:MODEL, cascade or PROVIDER:MODEL, e.g. "
        "openai:gpt-4o-mini.",
        metavar="SPEC",
    ),
]

_CachePathFlag = Annotated[
    Path | None, _flag("--cache-path", metavar="PATH", help="Response cache file (SQLite).")
]
_ConcurrencyFlag = Annotated[
    _Count,
    _flag("--concurrency", min=1, help=f"Samples at once ({DEFAULT_CONCURRENCY})."),
]
_DryRunFlag = Annotated[
    bool, _flag("--dry-run", help="Estimate judge calls, tokens and cost; call nothing.")
]
_GeneratorBaseUrlFlag = Annotated[
    _Text,
    _flag("--generator-base-url", metavar="URL", help="The generator's server (the judge's)."),
]
_JudgeBaseUrlFlag = Annotated[
    _Text,
    _flag("--judge-base-url", metavar="URL", help="An OpenAI-compatible server (vLLM, Ollama)."),
]
_MaxCostFlag = Annotated[
    _Number,
    _flag("--max-cost", min=0.0, help="Start no judge call past this spend."),
]
_NoCacheFlag = Annotated[
    bool, _flag("--no-cache", help="Call the provider even for cached requests.")
]
_PromptsDirFlag = Annotated[
    Path | None,
    _flag("--prompts-dir", metavar="PATH", help="Prompt files replacing the bundled ones."),
]
_OfflineMinSupportFlag = Annotated[
    _Number,
    _flag(
        "--offline-min-support",
        min=0.0,
        max=1.0,
        help="offline:learned: full support (0.97).",
    ),
]


@dataclass(frozen=True)
class EvalFlags:
    """`vera eval`'s flags as typer parsed them, in the order `--help` lists each panel's.
    `vera.cli._eval._options` turns them into `vera.EvaluateOptions`."""

    dataset: Annotated[
        _Text, _flag("--dataset", "-d", metavar="PATH", help="Dataset file or bundled name.")
    ] = None
    quick: Annotated[
        bool,
        _flag(
            "--quick",
            help=f"Only the first {QUICK_SAMPLES} samples (without -d: example).",
        ),
    ] = False
    judge: _JudgeFlag = None
    metric: Annotated[
        _Paths,
        _flag(
            "--metric",
            "-m",
            metavar="NAME",
            help="Metric, repeatable (default: faithfulness).",
        ),
    ] = None
    threshold: Annotated[
        _Number,
        _flag(
            "--threshold",
            min=0.0,
            max=1.0,
            help="Pass mark of each metric; exit 1 below it.",
        ),
    ] = None
    max_unfaithful: Annotated[
        _Text,
        _flag(
            "--max-unfaithful",
            metavar="N",
            help="Unfaithful answers allowed (N or 5%; default 0).",
        ),
    ] = None
    regression: Annotated[
        bool,
        _flag(
            "--regression",
            help="Also fail on a significant drop from the last run.",
        ),
    ] = False
    output: Annotated[
        Path | None,
        _flag(
            "--output",
            "-o",
            metavar="PATH",
            help="Write the report; .html, .md, .xml (JUnit) or JSON.",
        ),
    ] = None
    # Dataset
    dataset_name: Annotated[
        _Text,
        _flag("--dataset-name", metavar="NAME", help="Its name in the history, not the file's."),
    ] = None
    format: Annotated[_Text, _flag("--format", metavar="FORMAT", help=format_help())] = None
    field: Annotated[
        _Paths,
        _flag(
            "--field",
            metavar="F=COL",
            help="Read column COL as field F (repeatable).",
        ),
    ] = None
    skip_invalid: Annotated[
        bool, _flag("--skip-invalid", help="Record invalid rows in the report and go on.")
    ] = False
    group_by: Annotated[
        _Paths,
        _flag("--group-by", metavar="KEY", help="Metadata key to break aggregates down by."),
    ] = None
    # Judge
    judge_base_url: _JudgeBaseUrlFlag = None
    judge_mode: Annotated[
        _Text,
        _flag(
            "--judge-mode",
            metavar="MODE",
            help="batched (default), single_call, per_claim, truths.",
        ),
    ] = None
    judge_output: Annotated[
        _Text,
        _flag(
            "--judge-output",
            metavar="HOW",
            help="JSON by schema, json or prompt (default: learnt).",
        ),
    ] = None
    judge_replies: Annotated[
        _Text,
        _flag(
            "--judge-replies",
            metavar="SET",
            help="compact or reasoned (default: reasoned if local).",
        ),
    ] = None
    judge_samples: Annotated[
        _Count,
        _flag("--judge-samples", min=1, help="Verify each claim K times; majority."),
    ] = None
    judge_temperature: Annotated[
        _Number,
        _flag("--judge-temperature", min=0.0, max=2.0, help="Default 0."),
    ] = None
    max_tokens: Annotated[
        _Count,
        _flag("--max-tokens", min=16, help="Reply budget of a judge call (2048)."),
    ] = None
    prompts_dir: _PromptsDirFlag = None
    cascade_judge: Annotated[
        _Text,
        _flag(
            "--cascade-judge", metavar="SPEC", help="--judge cascade: the judge of unsure claims."
        ),
    ] = None
    cascade_low: Annotated[
        _Number,
        _flag("--cascade-low", min=0.0, max=1.0, help="Offline at most this (0.2)."),
    ] = None
    cascade_high: Annotated[
        _Number,
        _flag("--cascade-high", min=0.0, max=1.0, help="Offline at least this (0.9)."),
    ] = None
    offline_min_support: _OfflineMinSupportFlag = None
    language: Annotated[
        _Text,
        _flag("--language", metavar="CODE", help="Read every sample in this language (en, de, …)."),
    ] = None
    # Gates
    max_errors: Annotated[
        _Text,
        _flag(
            "--max-errors",
            metavar="N",
            help="Errors allowed before exit 3 (N or 2%, default 0).",
        ),
    ] = None
    baseline_run: Annotated[
        _Text,
        _flag("--baseline-run", metavar="RUN", help="Fail on a significant drop against this run."),
    ] = None
    any_plan: Annotated[bool, _flag("--any-plan", help="Compare with another plan's run too.")] = (
        False
    )
    min_faithful_turns: Annotated[
        _Number,
        _flag(
            "--min-faithful-turns",
            min=0.0,
            max=1.0,
            help="Exit 1 below this share of faithful turns.",
        ),
    ] = None
    min_consistency: Annotated[
        _Number,
        _flag(
            "--min-consistency",
            min=0.0,
            max=1.0,
            help="Exit 1 when a conversation is less consistent.",
        ),
    ] = None
    # Reports
    html: Annotated[Path | None, _flag("--html", metavar="PATH", help="Write the HTML report.")] = (
        None
    )
    markdown: Annotated[
        Path | None, _flag("--markdown", metavar="PATH", help="Write a Markdown summary.")
    ] = None
    junit: Annotated[Path | None, _flag("--junit", metavar="PATH", help="Write JUnit XML.")] = None
    report: Annotated[
        _Paths,
        _flag(
            "--report",
            metavar="FMT=PATH",
            help="Also write this format (json, html, md, junit, …).",
        ),
    ] = None
    otel_endpoint: Annotated[
        _Text,
        _flag(
            "--otel-endpoint",
            metavar="URL",
            help=f"Spans to this OTLP URL; {_help_hint('otel')}.",
        ),
    ] = None
    phoenix: Annotated[
        _Text,
        _flag(
            "--phoenix",
            metavar="URL",
            help="Verdicts onto the Phoenix trace spans (phoenix extra).",
        ),
    ] = None
    mlflow: Annotated[
        _Text,
        _flag(
            "--mlflow",
            metavar="EXPERIMENT",
            help="Log the run to this MLflow experiment (the mlflow extra).",
        ),
    ] = None
    # Pipelines and baselines
    pipeline: Annotated[
        _Text,
        _flag(
            "--pipeline",
            metavar="SPEC",
            help="Answer with this: a baseline, module:object or URL.",
        ),
    ] = None
    baseline: Annotated[
        _Paths,
        _flag(
            "--baseline", metavar="NAME", help="Also run this baseline and compare (repeatable)."
        ),
    ] = None
    generator: Annotated[
        _Text,
        _flag(
            "--generator",
            metavar="SPEC",
            help="Baselines' generator: extractive or PROVIDER:MODEL.",
        ),
    ] = None
    generator_base_url: _GeneratorBaseUrlFlag = None
    documents: Annotated[
        Path | None,
        _flag("--documents", metavar="PATH", help="Folder of .txt/.md files to retrieve from."),
    ] = None
    top_k: Annotated[int, _flag("--top-k", min=1, help="Chunks a query (3).")] = 3
    chunk_size: Annotated[int, _flag("--chunk-size", min=1, help="Characters a chunk (800).")] = 800
    chunk_overlap: Annotated[
        int, _flag("--chunk-overlap", min=0, help="Characters chunks share (100).")
    ] = 100
    check_laws: Annotated[
        bool, _flag("--check-laws", help="Check seed 001's pipeline laws on the pipeline.")
    ] = False
    # Conversations and agent traces
    user_facts: Annotated[
        bool | None,
        _flag("--user-facts/--no-user-facts", help="The user's words are evidence."),
    ] = None
    agent_steps: Annotated[
        bool | None,
        _flag(
            "--agent-steps/--final-answers",
            help="Verify intermediate messages too.",
        ),
    ] = None
    # The run
    resume: Annotated[
        _Text,
        _flag("--resume", metavar="RUN", help="Finish an interrupted run, with its options."),
    ] = None
    dry_run: _DryRunFlag = False
    no_history: Annotated[bool, _flag("--no-history", help="Do not store this run.")] = False
    history_path: Annotated[
        Path | None,
        _flag("--history", metavar="PATH", help="The run store (.vera/runs.sqlite)."),
    ] = None
    concurrency: _ConcurrencyFlag = None
    sample_timeout: Annotated[
        _Number,
        _flag(
            "--sample-timeout",
            min=0.001,
            help=f"Seconds of judge work a sample may take ({DEFAULT_SAMPLE_TIMEOUT:g}).",
        ),
    ] = None
    max_response_chars: Annotated[
        _Count,
        _flag(
            "--max-response-chars",
            min=1,
            help=f"A longer response is an error ({DEFAULT_MAX_RESPONSE_CHARS:,}).",
        ),
    ] = None
    max_context_chars: Annotated[
        _Count,
        _flag(
            "--max-context-chars",
            min=1,
            help=f"A longer context is an error ({DEFAULT_MAX_CONTEXT_CHARS:,}).",
        ),
    ] = None
    executor: Annotated[
        _Text,
        _flag(
            "--executor",
            metavar="NAME",
            help=f"local, a plugin's, or ray: {_help_hint('ray')}.",
        ),
    ] = None
    ray_address: Annotated[
        _Text, _flag("--ray-address", metavar="URL", help="The Ray cluster (default: local).")
    ] = None
    ray_workers: Annotated[
        _Count,
        _flag("--ray-workers", min=1, help="Ray workers (default: one a CPU)."),
    ] = None
    # Provider calls
    timeout: Annotated[
        _Number,
        _flag("--timeout", min=0.001, help="Seconds a provider call may take (60)."),
    ] = None
    retries: Annotated[_Count, _flag("--retries", min=0, help="Retries of a failed call (5).")] = (
        None
    )
    fail_fast: Annotated[
        _Count,
        _flag("--fail-fast", min=0, help="Stop after N first calls fail alike (8)."),
    ] = None
    no_cache: _NoCacheFlag = False
    cache_path: _CachePathFlag = None
    max_cost: _MaxCostFlag = None
    batch: Annotated[
        bool | None,
        _flag("--batch/--no-batch", help="The batch API: half price, slower."),
    ] = None
    batch_retry: Annotated[
        _Text,
        _flag("--batch-retry", metavar="HOW", help="Unanswered requests: batch (default), direct."),
    ] = None
    batch_poll: Annotated[
        _Number,
        _flag("--batch-poll", min=0.001, help="Seconds between polls (30)."),
    ] = None


PANELS: dict[str, str] = {
    "dataset_name": "Dataset",
    "judge_base_url": "Judge",
    "max_errors": "Gates",
    "html": "Reports",
    "pipeline": "Pipelines and baselines",
    "user_facts": "Conversations and agent traces",
    "resume": "Run and history",
    "timeout": "Provider calls",
}
"""The field that opens each `--help` panel after the first; the fields after it join it."""


def panels() -> dict[str, str]:
    """Each `EvalFlags` field and its panel."""
    panel, found = COMMON, {}
    for field in fields(EvalFlags):
        panel = PANELS.get(field.name, panel)
        found[field.name] = panel
    return found


def typed_command(command: Callable[[EvalFlags], None]) -> Callable[..., None]:
    """`command` as typer calls it: with one keyword per `EvalFlags` field (typer reads the
    signature built here, each option in its panel), gathered into an `EvalFlags`."""
    hints = get_type_hints(EvalFlags, include_extras=True)
    in_panel = panels()
    parameters = []
    for field in fields(EvalFlags):
        kind, option = hints[field.name].__origin__, copy.copy(hints[field.name].__metadata__[0])
        option.rich_help_panel = in_panel[field.name]
        parameters.append(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=field.default,
                annotation=Annotated[kind, option],
            )
        )

    def parsed(**given: Any) -> None:
        command(EvalFlags(**given))

    parsed.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    parsed.__doc__, parsed.__name__ = command.__doc__, command.__name__
    return parsed
