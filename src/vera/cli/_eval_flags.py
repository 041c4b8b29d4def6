"""The flags of `vera eval`: one table, turned into the command's signature, and how
each flag maps onto a setting.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from vera.cli._app import _help_hint
from vera.datasets import format_help
from vera.plan import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_CONTEXT_CHARS,
    DEFAULT_MAX_RESPONSE_CHARS,
    DEFAULT_SAMPLE_TIMEOUT,
    QUICK_SAMPLES,
)

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    pass


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
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the report here, in the format its extension names (.html, .md, .xml "
        "JUnit; JSON for .json or any other).",
    ),
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
_LanguageFlag = Annotated[
    str | None,
    typer.Option(
        "--language",
        help="The offline judge reads every sample in this language (en, de, fr, es, pt, it, "
        "nl, ja, zh, ko) instead of identifying each one's; see docs/languages.md.",
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
_JudgeOutputFlag = Annotated[
    str | None,
    typer.Option(
        "--judge-output",
        help="How JSON is asked of an OpenAI-compatible server: schema (response_format "
        "json_schema), json (json_object), prompt (the prompt alone); default: the best the "
        "server accepts, learnt from its first refusal.",
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
_BatchFlag = Annotated[
    bool | None,
    typer.Option(
        "--batch/--no-batch",
        help="Send judge and generator calls through the provider's batch API (openai, "
        "anthropic): half the price, replies within hours; --resume picks up pending batches.",
    ),
]
_BatchRetryFlag = Annotated[
    str | None,
    typer.Option(
        "--batch-retry",
        help="With --batch: send what a batch left unanswered in a later batch (batch, the "
        "default) or directly (direct).",
    ),
]
_BatchPollFlag = Annotated[
    float | None,
    typer.Option("--batch-poll", min=0.001, help="With --batch: seconds between polls (30)."),
]
_MaxErrorsFlag = Annotated[
    str | None,
    typer.Option(
        "--max-errors",
        help="Samples that may error or be skipped (a count, or a share such as 2%) before "
        "the run counts as incomplete and exits 3. Default 0.",
    ),
]
_MaxUnfaithfulFlag = Annotated[
    str | None,
    typer.Option(
        "--max-unfaithful",
        help="Answers that may be unfaithful (a claim with no evidence or contradicted; a "
        "count, or a share such as 5%) before the gate fails and the run exits 1. Default 0.",
    ),
]
_UserFactsFlag = Annotated[
    bool | None,
    typer.Option(
        "--user-facts/--no-user-facts",
        help="Conversations: whether what the user said counts as evidence (default yes).",
        show_default=False,
    ),
]
_AgentStepsFlag = Annotated[
    bool | None,
    typer.Option(
        "--agent-steps/--final-answers",
        help="Agent traces: verify the assistant's intermediate messages (an LLM span's text "
        "between tool calls) too (default: each trace's final answer only).",
        show_default=False,
    ),
]
_MinFaithfulTurnsFlag = Annotated[
    float | None,
    typer.Option(
        "--min-faithful-turns",
        min=0.0,
        max=1.0,
        help="Conversations: exit 1 when the share of faithful assistant turns is lower "
        "(a run with no turn scored on faithfulness fails too).",
    ),
]
_MinConsistencyFlag = Annotated[
    float | None,
    typer.Option(
        "--min-consistency",
        min=0.0,
        max=1.0,
        help="Conversations: exit 1 when a conversation's consistency (its claims that "
        "contradict no earlier assistant turn) is lower (a run that checked none fails too).",
    ),
]
_DatasetNameFlag = Annotated[
    str | None,
    typer.Option(
        "--dataset-name",
        help="The dataset's name in the run history, instead of the file's: versions of one "
        "test set (answers_v1.jsonl, answers_v2.jsonl) given one name trend and compare "
        "together.",
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
        help=format_help(),
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
        help="local (default), ray: the samples run on the workers of a Ray cluster "
        f"(needs the ray extra: {_help_hint('ray')}), or an executor a plugin registers.",
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
    ("dataset_name", _DatasetNameFlag, None),
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
    ("language", _LanguageFlag, None),
    ("judge_base_url", _JudgeBaseUrlFlag, None),
    ("judge_mode", _JudgeModeFlag, None),
    ("judge_output", _JudgeOutputFlag, None),
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
    ("batch", _BatchFlag, None),
    ("batch_retry", _BatchRetryFlag, None),
    ("batch_poll", _BatchPollFlag, None),
    ("max_errors", _MaxErrorsFlag, None),
    ("max_unfaithful", _MaxUnfaithfulFlag, None),
    ("skip_invalid", _SkipInvalidFlag, False),
    ("user_facts", _UserFactsFlag, None),
    ("agent_steps", _AgentStepsFlag, None),
    ("min_faithful_turns", _MinFaithfulTurnsFlag, None),
    ("min_consistency", _MinConsistencyFlag, None),
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
"""`NAMED_AGAIN_FLAGS` keys (vera.plan) and the `eval` flag that gives each again on --resume."""

_SETTING_FLAGS = {
    "judge": "judge",
    "judge_base_url": "judge_base_url",
    "judge_mode": "judge_mode",
    "judge_output": "judge_output",
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
    "language": "language",
    "cache_path": "cache_path",
    "max_cost": "max_cost",
    "batch": "batch",
    "batch_retry": "batch_retry",
    "batch_poll": "batch_poll",
    "max_errors": "max_errors",
    "max_unfaithful": "max_unfaithful",
    "concurrency": "concurrency",
    "history_path": "history_path",
    "max_response_chars": "max_response_chars",
    "max_context_chars": "max_context_chars",
    "sample_timeout": "sample_timeout",
    "user_facts": "user_facts",
    "agent_steps": "agent_steps",
    "min_faithful_turns": "min_faithful_turns",
    "min_consistency": "min_consistency",
}
"""Settings as `vera.toml` names them, and the `eval` flag that overrides each."""
