"""The `vera` command line. Errors become a message and an exit code here, and nowhere else.

Exit codes: 0 success, 1 a threshold gate failed, 2 bad usage or input.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vera._version import __version__
from vera.comparison import baseline_comparison, compare_reports, most_changed
from vera.datasets import Dataset, load_dataset
from vera.datasets.bundled import BUNDLED
from vera.errors import VeraError
from vera.estimate import RunEstimate, estimate_run
from vera.experiment import resolve_pipeline
from vera.gates import gate_failures, regression_failures
from vera.history import DEFAULT_HISTORY_PATH, RunStore
from vera.judges import Judge, create_judge
from vera.judges.cascade import cascade_summary
from vera.judges.registry import cascade_spec, create_managed_model
from vera.metrics import METRICS, create_metric
from vera.metrics.base import Metric
from vera.pipelines import laws
from vera.pipelines.core import Pipeline
from vera.pipelines.documents import load_documents
from vera.pipelines.verification import Verify
from vera.report import Report, SampleResult, SampleStatus
from vera.reports import HistoryPoint, render_html
from vera.reports.junit import render_junit
from vera.reports.markdown import render_markdown
from vera.runner import aevaluate
from vera.settings import DEFAULT_CONCURRENCY, load_settings
from vera.types import Sample

__all__ = ["app", "main"]

EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
QUICK_SAMPLES = 10
_STAMP = "%Y-%m-%dT%H:%M:%SZ"
LAW_QUERIES = 5
SHOWN_FAILURES = 5

app = typer.Typer(
    name="vera",
    help="VERA: claim-level faithfulness evaluation for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)


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


@app.command("eval")
def eval_command(
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "-d",
            help="Dataset file (.json, .jsonl, .csv) or bundled name. Default: the bundled "
            "example (with --quick).",
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to compute (repeatable; `vera metrics` lists them, `all` takes every "
            "one). Default: faithfulness.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the JSON report here.")
    ] = None,
    regression: Annotated[
        bool,
        typer.Option(
            "--regression",
            help="CI mode: apply every gate, and fail on a significant drop against the last "
            "finished run of this dataset (or --baseline-run).",
        ),
    ] = False,
    baseline_run: Annotated[
        str | None,
        typer.Option(
            "--baseline-run",
            help="A stored run to guard against: fail only on a significant drop (paired).",
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Write the HTML report here (one offline file)."),
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="Write a Markdown summary (for a pull-request comment)."),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Write JUnit XML: each sample and metric a test case."),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help=f"Evaluate only the first {QUICK_SAMPLES} samples.")
    ] = False,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            help="Pass mark of each higher-is-better metric, and a gate: exit 1 when a metric's "
            "mean misses its threshold (rates such as hallucination_rate keep their own).",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="offline (default); nli:PATH_OR_HUB_ID, a local NLI model (the nli extra); "
            "cascade, offline with --cascade-judge for unsure claims; or PROVIDER:MODEL such "
            "as openai:gpt-4o-mini or anthropic:claude-sonnet-4-5. Also VERA_JUDGE or vera.toml.",
        ),
    ] = None,
    cascade_judge: Annotated[
        str | None,
        typer.Option(
            "--cascade-judge",
            help="With --judge cascade: the PROVIDER:MODEL judge that verifies the claims the "
            "offline judge is unsure of.",
        ),
    ] = None,
    cascade_low: Annotated[
        float | None,
        typer.Option(
            "--cascade-low",
            min=0.0,
            max=1.0,
            help="With --judge cascade: an offline entailment at most this is decided offline "
            "(default 0.2).",
        ),
    ] = None,
    cascade_high: Annotated[
        float | None,
        typer.Option(
            "--cascade-high",
            min=0.0,
            max=1.0,
            help="With --judge cascade: an offline entailment at least this is decided offline "
            "(default 0.9).",
        ),
    ] = None,
    offline_min_support: Annotated[
        float | None,
        typer.Option(
            "--offline-min-support",
            min=0.0,
            max=1.0,
            help="With --judge offline:learned: the least probability of support that counts "
            "as fully supported (default 0.87, chosen on RAGTruth dev data); lower flags fewer "
            "claims.",
        ),
    ] = None,
    judge_base_url: Annotated[
        str | None,
        typer.Option(
            "--judge-base-url",
            help="Base URL of an OpenAI-compatible server (vLLM, Ollama, LM Studio, Azure).",
        ),
    ] = None,
    judge_mode: Annotated[
        str | None,
        typer.Option(
            "--judge-mode",
            help="LLM judge calls per sample: batched (2, default), single_call (1), "
            "per_claim (1 + claims), truths (3, 2 when contexts repeat).",
        ),
    ] = None,
    judge_samples: Annotated[
        int | None,
        typer.Option(
            "--judge-samples",
            min=1,
            help="Verify each claim K times and keep the majority verdict; reports agreement.",
        ),
    ] = None,
    judge_temperature: Annotated[
        float | None,
        typer.Option("--judge-temperature", min=0.0, max=2.0, help="Default 0."),
    ] = None,
    prompts_dir: Annotated[
        Path | None,
        typer.Option("--prompts-dir", help="Folder of prompt files replacing the bundled ones."),
    ] = None,
    pipeline: Annotated[
        str | None,
        typer.Option(
            "--pipeline",
            help="Answer each query with this pipeline first: a baseline name (naive-rag, "
            "simple-verification, vera), module:function, or an http(s) URL.",
        ),
    ] = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline",
            help="Also run this baseline on the same samples and compare (repeatable).",
        ),
    ] = None,
    generator: Annotated[
        str | None,
        typer.Option(
            "--generator",
            help="The baselines' generator: extractive (offline, default) or PROVIDER:MODEL.",
        ),
    ] = None,
    generator_base_url: Annotated[
        str | None,
        typer.Option(
            "--generator-base-url", help="Base URL for the generator (default: the judge's)."
        ),
    ] = None,
    top_k: Annotated[
        int, typer.Option("--top-k", min=1, help="Chunks the baselines retrieve per query.")
    ] = 3,
    documents: Annotated[
        Path | None,
        typer.Option("--documents", help="Folder of .txt/.md files the baselines retrieve from."),
    ] = None,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", min=1, help="Characters per retrieved chunk.")
    ] = 800,
    chunk_overlap: Annotated[
        int, typer.Option("--chunk-overlap", min=0, help="Characters chunks share.")
    ] = 100,
    check_laws: Annotated[
        bool,
        typer.Option("--check-laws", help="Check seed 001's pipeline laws on the pipeline."),
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Finish an interrupted run (its id from `vera runs list`): only the samples "
            "it had not finished are evaluated, with its original options.",
        ),
    ] = None,
    no_history: Annotated[
        bool, typer.Option("--no-history", help="Do not store this run in the run history.")
    ] = False,
    history_path: Annotated[
        Path | None,
        typer.Option("--history", help="The run store (default .vera/runs.sqlite)."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Call the provider even for cached requests.")
    ] = False,
    cache_path: Annotated[
        Path | None, typer.Option("--cache-path", help="Response cache file (SQLite).")
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", min=0.0, help="US dollars; stop starting judge calls after."),
    ] = None,
    skip_invalid: Annotated[
        bool,
        typer.Option("--skip-invalid", help="Record invalid rows in the report and go on."),
    ] = False,
    format: Annotated[
        str | None,
        typer.Option(
            "--format", help="Dataset format when the extension does not say: json, jsonl, csv."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Estimate judge calls, tokens and cost; call nothing."),
    ] = False,
    group_by: Annotated[
        list[str] | None,
        typer.Option(
            "--group-by", help="Metadata key to break the aggregates down by (repeatable)."
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, help=f"Samples at once (default {DEFAULT_CONCURRENCY})."
        ),
    ] = None,
) -> None:
    """Evaluate a dataset and print a summary.

    Example: vera eval --dataset answers.jsonl --threshold 0.8 --output report.json
    """
    try:
        store: RunStore | None = None
        resumed: dict[str, SampleResult] = {}
        if resume:
            store = RunStore(history_path or DEFAULT_HISTORY_PATH)
            record = store.get(resume)
            o = record.options
            # The run goes on exactly as it was asked for; only where its reports go is new.
            dataset, format, skip_invalid = o["dataset"], o["format"], o["skip_invalid"]
            metric, threshold, quick = o["metric"], o["threshold"], o["quick"]
            judge, judge_base_url, judge_mode = o["judge"], o["judge_base_url"], o["judge_mode"]
            judge_samples, judge_temperature = o["judge_samples"], o["judge_temperature"]
            # Runs stored before the cascade judge existed have no cascade options.
            cascade_judge = o.get("cascade_judge")
            cascade_low, cascade_high = o.get("cascade_low"), o.get("cascade_high")
            offline_min_support = o.get("offline_min_support")
            pipeline, generator, top_k = o["pipeline"], o["generator"], o["top_k"]
            chunk_size, chunk_overlap, group_by = o["chunk_size"], o["chunk_overlap"], o["group_by"]
            documents = Path(o["documents"]) if o["documents"] else None
            resumed = store.results(record.id)
        invocation = {
            "dataset": dataset or ("example" if quick else None), "format": format,
            "skip_invalid": skip_invalid,
            "metric": metric, "threshold": threshold, "quick": quick, "judge": judge,
            "judge_base_url": judge_base_url, "judge_mode": judge_mode,
            "judge_samples": judge_samples, "judge_temperature": judge_temperature,
            "cascade_judge": cascade_judge, "cascade_low": cascade_low,
            "cascade_high": cascade_high, "offline_min_support": offline_min_support,
            "pipeline": pipeline, "generator": generator, "top_k": top_k,
            "chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "group_by": group_by,
            "documents": str(documents) if documents else None,
        }  # fmt: skip
        if dataset is None and not quick:
            raise typer.BadParameter("give --dataset PATH, or --quick to try the bundled example")
        data = load_dataset(dataset or "example", format=format, skip_invalid=skip_invalid)
        metrics = _metrics(metric or ["faithfulness"], threshold)
        settings = load_settings(
            {
                "judge": judge,
                "judge_base_url": judge_base_url,
                "judge_mode": judge_mode,
                "judge_samples": judge_samples,
                "judge_temperature": judge_temperature,
                "judge_prompts_dir": prompts_dir,
                "cascade_judge": cascade_judge,
                "cascade_low": cascade_low,
                "cascade_high": cascade_high,
                "offline_min_support": offline_min_support,
                "cache": False if no_cache else None,
                "cache_path": cache_path,
                "max_cost": max_cost,
                "concurrency": concurrency,
                "history": False if no_history else None,
                "history_path": history_path,
            }
        )
        if dry_run:
            cascade = settings.judge.strip().lower() == "cascade"
            estimate = estimate_run(
                _selected(data, quick),
                cascade_spec(settings) if cascade else settings.judge,
                mode=settings.judge_mode,
                draws=settings.judge_samples,
                needs=frozenset().union(*(m.needs for m in metrics)),
                verify_only=cascade,
            )
            if cascade:
                # Counted as if every claim were sent: the offline verifier's share is unknown
                # until it runs.
                name = f"cascade(offline, {estimate.judge}), every claim sent"
                estimate = estimate.model_copy(update={"judge": name})
            _print_estimate(estimate)
            return
        active_judge = create_judge(settings.judge, settings)
        chat = (
            create_managed_model(generator, settings, base_url=generator_base_url)
            if generator and generator.strip().lower() != "extractive"
            else None
        )

        corpus = load_documents(documents) if documents is not None else None

        def build(spec: str) -> Pipeline:
            return resolve_pipeline(
                spec,
                data,
                active_judge,
                generator=chat,
                top_k=top_k,
                chunk_size=chunk_size,
                chunk_overlap=chunk_overlap,
                documents=corpus,
            )

        # With baselines and a corpus but no pipeline of yours, the system is VERA's own.
        system_spec = pipeline or ("vera" if baseline and (data.documents or corpus) else None)
        system = build(system_spec) if system_spec else None

        def run(with_pipeline: Pipeline | None, *, stored: bool = False) -> Report:
            """One pass over the samples; only the system's pass is stored and resumable."""
            return _run(
                data,
                metrics,
                active_judge,
                quick=quick,
                concurrency=settings.concurrency,
                group_by=group_by or [],
                pipeline=with_pipeline,
                store=store if stored else None,
                run_id=run_id if stored else None,
                resume_from=resumed if stored else None,
            )

        if store is None and settings.history:
            store = RunStore(settings.history_path or DEFAULT_HISTORY_PATH)
        run_id = None
        if store is not None:
            run_id = store.get(resume).id if resume else store.start(data.name, invocation)
            err.print(f"Run {run_id}", highlight=False)
        report = run(system, stored=True)
        updates: dict[str, object] = {}
        if baseline:
            others = {
                name: run(build(name)) for name in dict.fromkeys(baseline) if name != system_spec
            }
            updates["baseline_comparison"] = baseline_comparison(report, others)
        if check_laws:
            if system is None:
                raise typer.BadParameter("--check-laws needs --pipeline (or --baseline)")
            queries = [s.query for s in itertools.islice(data, LAW_QUERIES) if s.query]
            updates["categorical_tests"] = asyncio.run(
                laws.check_laws(system, Verify(active_judge), queries)
            )
        report = report.model_copy(update=updates)
        if store is not None and run_id is not None:
            store.finish(run_id, report)
        gate_config = settings.gates
        gates_configured = bool(gate_config.metrics or gate_config.categories) or any(
            (gate_config.latency_p95_ms, gate_config.latency_p99_ms)
        )
        regression_lines: list[str] = []
        compared_with = ""
        if regression or baseline_run:
            previous_id = baseline_run or _previous_run(store, report.dataset, run_id)
            if previous_id is not None and store is not None:
                previous_id = store.get(previous_id).id
                regression_lines = regression_failures(
                    report, store.report(previous_id), previous_id
                )
                compared_with = f"no significant drop against run {previous_id}"
        if html is not None:
            _write(html, _html(report, data, store))
    except VeraError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    except ValueError as exc:  # metric options that do not validate
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None

    _print_summary(report)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(report.to_json() + "\n", encoding="utf-8")
        out.print(f"Report written to {output}")
    if report.stopped is not None:
        skipped = report.counts["skipped"]
        err.print(
            f"[bold red]Run stopped:[/] {report.stopped.reason}; "
            f"{skipped} sample(s) not evaluated, finished ones kept.",
            highlight=False,
        )
        if not report.stopped.planned:
            raise typer.Exit(EXIT_USAGE)
    gated = threshold is not None or regression or baseline_run or gates_configured
    failures = gate_failures(report, gate_config) + regression_lines if gated else []
    if markdown is not None:
        _write(markdown, render_markdown(report, gate_failures=failures))
    if junit is not None:
        _write(junit, render_junit(report))
    if gated:
        if failures:
            err.print("[bold red]Gate failed:[/]")
            for line in failures:
                err.print(f"  - {line}", highlight=False)
            raise typer.Exit(EXIT_GATE_FAILED)
        out.print(
            "Gate passed: every gate holds" + (f" ({compared_with})" if compared_with else "")
        )


def _previous_run(store: RunStore | None, dataset: str, current: str | None) -> str | None:
    """The newest finished run of `dataset` before this one, to guard against regressions."""
    if store is None:
        return None
    for record in store.list():
        if record.dataset == dataset and record.status == "finished" and record.id != current:
            return record.id
    return None


def _metrics(names: list[str], threshold: float | None) -> list[Metric]:
    """The metrics named; `--threshold` sets the pass mark of those where higher is better."""
    if any(name.strip().lower() == "all" for name in names):
        names = list(METRICS)
    metrics = []
    for name in dict.fromkeys(names):
        metric = create_metric(name)
        if threshold is not None and metric.higher_is_better:
            metric = create_metric(name, threshold=threshold)
        metrics.append(metric)
    return metrics


def _run(
    data: Dataset,
    metrics: list[Metric],
    judge: Judge,
    *,
    quick: bool,
    concurrency: int,
    group_by: list[str],
    pipeline: Pipeline | None = None,
    store: RunStore | None = None,
    run_id: str | None = None,
    resume_from: dict[str, SampleResult] | None = None,
) -> Report:
    total = data.size_hint()
    samples = _selected(data, quick)
    if quick and total is not None:
        total = min(total, QUICK_SAMPLES)
    label = f"Evaluating {pipeline.name}" if pipeline is not None else "Evaluating"
    progress = Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = progress.add_task("eval", total=total)

    finished = itertools.count(len(resume_from or {}))
    progress.advance(task, len(resume_from or {}))

    def advance(result: SampleResult) -> None:
        if store is not None and run_id is not None:
            store.add_result(run_id, next(finished), result)  # kept even if the run dies
        progress.advance(task)

    with progress:
        return asyncio.run(
            aevaluate(
                samples,
                metrics,
                judge,
                concurrency=concurrency,
                dataset_name=data.name,
                progress=advance,
                group_by=group_by,
                pipeline=pipeline,
                resume_from=resume_from,
            )
        )


def _selected(data: Dataset, quick: bool) -> Iterable[Sample]:
    """The samples a run uses: all of them, or the first few with --quick."""
    return itertools.islice(data, QUICK_SAMPLES) if quick else data


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.2f} to {high:.2f}"


def _print_summary(report: Report) -> None:
    table = Table(title=f"VERA · {report.dataset} · judge: {report.judge}")
    columns = ("Metric", "Mean", "95% CI", "Scored", "Not scored", "Passed", "Failed", "Threshold")
    for column in columns:
        table.add_column(column, justify="left" if column == "Metric" else "right")
    for name, s in report.metric_summary.items():
        direction = "≥" if s.higher_is_better else "≤"
        table.add_row(
            name,
            _fmt(s.mean),
            _interval(s.ci_low, s.ci_high),
            str(s.scored),
            str(s.not_scored),
            str(s.passed),
            str(s.failed),
            f"{direction} {s.threshold:.2f}",
        )
        for sub, stats in s.sub_scores.items():
            table.add_row(f"  {sub}", _fmt(stats.mean), _interval(stats.ci_low, stats.ci_high))
    out.print(table)

    for key, groups in report.breakdowns.items():
        if key == "category" and list(groups) == ["uncategorized"]:
            continue
        # Metrics as rows, group values as columns: there are more metrics than groups.
        breakdown = Table(title=f"By {key}: mean (scored samples)")
        breakdown.add_column("Metric")
        for value in groups:
            breakdown.add_column(value, justify="right")
        for name in report.metrics:
            cells = [groups[value][name] for value in groups]
            breakdown.add_row(name, *(f"{_fmt(c.mean)} ({c.scored})" for c in cells))
        out.print(breakdown)
    if report.baseline_comparison:
        _print_baselines(report)
    if report.categorical_tests:
        laws_line = " · ".join(
            f"{law} {verdict}" for law, verdict in report.categorical_tests.items()
        )
        out.print(f"Pipeline laws: {laws_line}", highlight=False)
    if report.latency is not None:
        lat = report.latency
        out.print(
            f"Latency over {lat.count} samples: p50 {lat.p50:.0f} ms · p95 {lat.p95:.0f} ms · "
            f"p99 {lat.p99:.0f} ms",
            highlight=False,
        )

    _print_cascade(report)
    _print_usage(report)
    counts = report.counts
    out.print(
        f"{counts['scored']} scored, {counts['errors']} errors, "
        f"{counts['needs_pipeline']} need a pipeline, {counts['invalid_rows']} invalid rows "
        f"(of {counts['total'] + counts['invalid_rows']})",
        highlight=False,
    )
    _print_failures(report)


def _print_baselines(report: Report) -> None:
    block = report.baseline_comparison or {}
    significance: dict[str, dict[str, dict[str, object]]] = block.get("significance", {})
    table = Table(title=f"{report.pipeline or 'this run'} against the baselines")
    table.add_column("Metric")
    table.add_column(report.pipeline or "system", justify="right")
    for name in significance:
        table.add_column(name, justify="right")
        table.add_column("change (p)", justify="right")
    for metric, mean in report.metrics.items():
        cells = [_fmt(mean)]
        for by_metric in significance.values():
            found = by_metric.get(metric, {})
            baseline_mean = found.get("baseline_mean")
            change = str(found.get("improvement") or "—")
            p_value = found.get("p_value")
            cells.append(_fmt(baseline_mean if isinstance(baseline_mean, float) else None))
            cells.append(f"{change} (p={p_value:.3f})" if isinstance(p_value, float) else change)
        table.add_row(metric, *(str(c) for c in cells))
    out.print(table)


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
    )


def _print_cascade(report: Report) -> None:
    """How much a cascade judge sent on to its second judge, and the calls that saved."""
    line = cascade_summary(report.judge_details)
    if line:
        out.print(line, highlight=False)


def _print_usage(report: Report) -> None:
    usage = report.judge_details.get("usage")
    if not isinstance(usage, dict):
        return
    line = (
        f"Judge calls: {usage['calls']} ({usage['cached_calls']} from cache) · "
        f"tokens: {usage['prompt_tokens']} prompt, {usage['completion_tokens']} completion · "
        f"cost: ${usage['cost_usd']:.4f}"
    )
    if usage.get("unpriced_models"):
        line += f" (no price known for {', '.join(usage['unpriced_models'])})"
    out.print(line, highlight=False)


def _print_failures(report: Report) -> None:
    errors = [s for s in report.samples if s.status is SampleStatus.ERROR]
    for result in errors[:SHOWN_FAILURES]:
        err.print(f"[red]error[/] {result.id}: {result.error}", highlight=False)
    for row in report.invalid_rows[:SHOWN_FAILURES]:
        err.print(f"[yellow]invalid[/] {row.message}", highlight=False)
    if report.counts["needs_pipeline"]:
        out.print(
            f"{report.counts['needs_pipeline']} samples have no response; they need a pipeline "
            "to generate one and were not scored."
        )
    lowest = sorted(
        (s for s in report.samples if s.status is SampleStatus.SCORED),
        key=lambda s: min((v for v in s.scores.values() if v is not None), default=1.0),
    )[:SHOWN_FAILURES]
    shown = [s for s in lowest if any(r.passed is False for r in s.results.values())]
    if shown:
        out.print("[bold]Lowest-scoring samples[/]")
        for result in shown:
            for metric_result in result.results.values():
                if metric_result.passed is False:
                    out.print(
                        f"  {result.id} · {metric_result.name} {_fmt(metric_result.score)}: "
                        f"{metric_result.reason}",
                        highlight=False,
                    )


runs_app = typer.Typer(help="The run history (.vera/runs.sqlite).", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
HistoryOption = Annotated[
    Path | None, typer.Option("--history", help="The run store (default .vera/runs.sqlite).")
]


def _store(path: Path | None) -> RunStore:
    return RunStore(path or DEFAULT_HISTORY_PATH)


@runs_app.command("list")
def runs_list(history: HistoryOption = None) -> None:
    """List stored runs, newest first."""
    table = Table(title="Runs")
    for column in ("Run", "Status", "Dataset", "Samples", "Metrics"):
        table.add_column(column)
    for record in _store(history).list():
        means = ", ".join(f"{k} {_fmt(v)}" for k, v in record.metrics.items())
        table.add_row(record.id, record.status, record.dataset, str(record.finished_samples), means)
    out.print(table)


@runs_app.command("show")
def runs_show(run_id: str, history: HistoryOption = None) -> None:
    """Show one run: its options, and its summary if it finished."""
    try:
        store = _store(history)
        record = store.get(run_id)
        out.print(f"Run {record.id} · {record.status} · {record.finished_samples} samples done")
        out.print_json(data=record.options)
        if record.status == "finished":
            _print_summary(store.report(record.id))
    except VeraError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None


@app.command("compare")
def compare_command(
    run_a: str, run_b: str, history: HistoryOption = None, top: int = SHOWN_FAILURES
) -> None:
    """Compare run B against run A: per-metric change with a paired 95 % interval and p-value,
    and the samples whose scores changed most."""
    try:
        store = _store(history)
        before, after = store.report(run_a), store.report(run_b)
    except VeraError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    table = Table(title=f"{store.get(run_b).id} against {store.get(run_a).id}")
    for column in ("Metric", "A", "B", "B - A", "95% CI", "p", "Change", "Paired"):
        table.add_column(column, justify="left" if column == "Metric" else "right")
    for metric, c in compare_reports(after, before).items():
        table.add_row(
            metric,
            _fmt(c.baseline_mean),
            _fmt(c.system_mean),
            _fmt(c.difference),
            _interval(c.ci_low, c.ci_high),
            "—" if c.p_value is None else f"{c.p_value:.3f}",
            c.improvement or "—",
            str(c.paired_samples),
        )
    out.print(table)
    for line in most_changed(before, after, top):
        out.print(line, highlight=False)


@app.command("report")
def report_command(
    run_id: str,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write it.")],
    format: Annotated[str, typer.Option("--format", help="json, html, md or junit")] = "json",
    history: HistoryOption = None,
) -> None:
    """Write a stored run's report again, from the run history."""
    try:
        store = _store(history)
        record = store.get(run_id)
        report = store.report(run_id)
        if format == "json":
            text = report.to_json() + "\n"
        elif format in ("md", "markdown"):
            text = render_markdown(report)
        elif format == "junit":
            text = render_junit(report)
        elif format == "html":
            source = record.options.get("dataset")
            data = load_dataset(source) if isinstance(source, str) else None
            text = _html(report, data, store)
        else:
            raise typer.BadParameter(
                f"unknown report format {format!r}; use json, html, md or junit"
            )
    except VeraError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    _write(output, text)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out.print(f"Report written to {path}")


def _html(report: Report, data: Dataset | None, store: RunStore | None) -> str:
    """The HTML report, with each response shown in place and the trend of earlier runs of
    the same dataset from the run history."""
    samples = {s.id: s for s in data} if data is not None else {}
    for result in report.samples:
        if result.response is None:
            continue
        known = samples.get(result.id)
        contexts = result.contexts or (known.contexts if known else ())
        samples[result.id] = Sample(
            id=result.id, response=result.response, contexts=contexts, category=result.category
        )
    history: list[HistoryPoint] = []
    if store is not None:
        runs = [r for r in reversed(store.list()) if r.dataset == report.dataset and r.metrics]
        history = [
            HistoryPoint(r.id, datetime.fromtimestamp(r.created, UTC).strftime(_STAMP), r.metrics)
            for r in runs[-20:]
        ]
    return render_html(report, samples=samples, history=history)


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
            name,
            data.name,
            str(len(samples)),
            str(len(data.documents)),
            ", ".join(categories),
        )
    out.print(table)


@app.command("metrics")
def metrics_command() -> None:
    """List the metrics `--metric` accepts, with what each measures and costs."""
    table = Table(title="VERA metrics")
    for column in ("Name", "Measures", "Better", "Judge work"):
        table.add_column(column)
    for name, cls in METRICS.items():
        needs = ", ".join(sorted(need.value for need in cls.needs)) or "none"
        better = "higher" if cls.higher_is_better else "lower"
        table.add_row(name, cls.description, better, needs)
    out.print(table)
    out.print("Metrics that share judge work share its calls: see docs/metrics.md.")


def main() -> None:
    """Entry point of the `vera` console script."""
    app()
