"""`vera eval`: evaluate a dataset, print a summary, write the reports, exit with the run's code."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal, NoReturn, cast

import typer
from rich.markup import escape

from vera import (
    Bindings,
    EvaluateOptions,
    ExitCode,
    RetrievalOptions,
    RunEstimate,
    RunObserver,
    RunPlan,
    RunResult,
    VeraError,
    estimate_plan,
    load_settings,
    plan_evaluation,
    run_plan,
    stored_plan,
)
from vera._plan import SETTING_USES, resume_command, resume_notice, resumed_with
from vera.cli._app import EXIT_INTERRUPTED, _fail, app, err, out
from vera.cli._eval_flags import EvalFlags, typed_command
from vera.datasets._fields import parse_field_option
from vera.render import RunView, check_report_targets, open_run_view, write_reports
from vera.render._console import print_summary
from vera.render._outputs import parse_report_option, report_format
from vera.render._progress import RunProgress


@app.command("eval")
@typed_command
def eval_command(flags: EvalFlags) -> None:
    """Evaluate a dataset and print a summary: vera eval -d answers.jsonl --threshold 0.8"""
    try:
        check_report_targets(_outputs(flags))
        if flags.resume:
            stored, run_id = _stored(flags)
            accept = _named_again(flags, _options(flags))
            plan, bindings = _resume_with(stored, run_id, accept)
        else:
            accept, run_id = {}, None
            plan, bindings = _plan(flags)
        if flags.dry_run:
            return _print_estimate(estimate_plan(plan))
        result = _run(plan, bindings, run_id, tuple(accept))
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish(result, flags)


class _Progress(RunProgress, RunObserver):
    """`RunProgress` as the observer `run_plan` takes."""

    def batch_changed(self, line: str) -> None:
        err.print(line, highlight=False, markup=False)


def _named_again(flags: EvalFlags, options: EvaluateOptions) -> dict[str, Any]:
    """The settings named again with --resume: the stored run's are used for the rest."""
    given: dict[str, Any] = {
        key: options.get(key) for key, use in SETTING_USES.items() if use.keyword
    }
    given["judge"] = flags.judge
    return {key: value for key, value in given.items() if value is not None}


def _resume_with(plan: RunPlan, run_id: str, given: dict[str, Any]) -> tuple[RunPlan, Bindings]:
    """The stored plan with the settings named again, saying which stored ones apply."""
    plan, changed = resumed_with(plan, given)
    named = f"; named again: {', '.join(changed)}" if changed else ""
    err.print(
        f"Resuming run {run_id} with {resume_notice(plan)} from the stored run{named}",
        highlight=False,
        markup=False,
    )
    return plan, Bindings()


def _run(
    plan: RunPlan, bindings: Bindings, resume_id: str | None, accept: tuple[str, ...]
) -> RunResult:
    """Run `plan` showing its progress on stderr; Ctrl-C ends it saying how to finish it."""
    with _Progress(err) as progress:
        try:
            # Streamed: each result goes to the history and leaves memory (see Bindings).
            return run_plan(
                plan,
                dataclasses.replace(bindings, keep_samples=False),
                resume=resume_id,
                observer=progress,
                accept=accept,
            )
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


def _finish(result: RunResult, flags: EvalFlags) -> NoReturn:
    """Render the run, write every report asked for, and exit with the run's code."""
    try:
        # One view for the summary and every report: the history is opened once to read a
        # streamed run's results back, which can fail (damaged).
        with open_run_view(result) as view:
            print_summary(result.report, out, err, view.sample_results())
            _note_extractive(result)
            _write_outputs(view, _outputs(flags))
            if flags.otel_endpoint:
                _export_spans(view, flags.otel_endpoint)
            if flags.phoenix:
                _annotate_phoenix(view, flags.phoenix)
            if flags.mlflow is not None:
                _log_mlflow(result, view, flags.mlflow)
    except VeraError as exc:
        _fail(exc)
    raise typer.Exit(_exit_code(result))


def _note_extractive(result: RunResult) -> None:
    """Say why baselines tie where every compared pass is a built pipeline with the offline
    generator: it copies sentences of what it retrieved, so each is faithful by construction."""
    from vera import BASELINES

    plan = result.plan
    if not plan.baselines or plan.generator.uses_model or result.report.pipeline not in BASELINES:
        return
    err.print(
        "Note: offline, every pipeline compared here answers with the extractive generator, "
        "which copies sentences of what it retrieved, so each is faithful by construction. "
        "Without a key, compare recorded answers against the baselines instead: vera eval "
        "--dataset example --baseline naive-rag --baseline simple-verification; with one, "
        "let a model write the answers: --generator openai:gpt-4o-mini.",
        highlight=False,
        markup=False,
    )


def _export_spans(view: RunView, endpoint: str) -> None:
    """The run as OpenTelemetry spans, one per sample of the view (a streamed run's too)."""
    from vera.integrations import export_report  # the SDK only when asked for

    sent = export_report(view.report, endpoint, results=view.sample_results())
    out.print(f"{sent} spans sent to {escape(endpoint)}", highlight=False)


def _annotate_phoenix(view: RunView, url: str) -> None:
    """Each answer's verdict onto the span it came from in Phoenix, after the reports."""
    from vera.integrations import annotate_phoenix  # the client only when asked for

    tally = annotate_phoenix(
        view.sample_results(), view.dataset_samples(), url, judge=view.report.judge
    )
    out.print(tally.summary(url), highlight=False, markup=False)


def _log_mlflow(result: RunResult, view: RunView, experiment: str) -> None:
    """The run in an MLflow experiment, after every report is written."""
    from vera.integrations.mlflow import log_run  # MLflow only when asked for

    run_id = log_run(result, experiment, view=view)
    out.print(f"Logged to MLflow experiment {escape(experiment)}: run {run_id}", highlight=False)


def _outputs(flags: EvalFlags) -> list[tuple[str, Path]]:
    """The reports the flags ask for, as (format, path): `-o` (its suffix decides, as in
    `vera report`), the format flags, then `--report`."""
    output = [(report_format(flags.output), flags.output)] if flags.output else []
    named = [("html", flags.html), ("markdown", flags.markdown), ("junit", flags.junit)]
    given = [(fmt, path) for fmt, path in named if path]
    return output + given + parse_report_option(flags.report or ())


def _stored(flags: EvalFlags) -> tuple[RunPlan, str]:
    """With --resume, the stored run's own plan and its full id, once what it names that runs
    code is named again (only where its reports and history go is new)."""
    assert flags.resume is not None  # only called with --resume
    named = {
        "pipeline": flags.pipeline,
        "baselines": flags.baseline,
        "prompts_dir": flags.prompts_dir,
        "judge": flags.judge,
        "cascade_judge": flags.cascade_judge,
        "metrics": flags.metric,
        "generator": flags.generator,
        "ray_address": flags.ray_address,
        "judge_base_url": flags.judge_base_url,
        "generator_base_url": flags.generator_base_url,
    }
    plan, run_id = stored_plan(flags.resume, flags.history_path, named=named)
    history: dict[str, Any] = {"history": True, "history_path": flags.history_path}
    if flags.history_path is None:
        history.pop("history_path")
    settings = plan.settings.model_copy(update=history)
    return plan.model_copy(update={"settings": settings}), run_id


def _plan(flags: EvalFlags) -> tuple[RunPlan, Bindings]:
    """The run the flags ask for, from the one plan builder `vera.plan_evaluation` uses, over
    the settings of vera.toml / [tool.vera] and the environment."""
    if flags.dataset is None and not flags.quick:
        raise typer.BadParameter("give --dataset PATH, or --quick to try the bundled example")
    options = _options(flags)
    options["settings"] = load_settings()
    data = flags.dataset or "example"
    return plan_evaluation(data, flags.metric, flags.judge, origin="command line", **options)


_JudgeMode = Literal["batched", "per_claim", "truths", "single_call"]
_JudgeOutput = Literal["auto", "schema", "json", "prompt"]
_JudgeReplies = Literal["auto", "compact", "reasoned"]
_BatchRetry = Literal["batch", "direct"]


def _options(flags: EvalFlags) -> EvaluateOptions:
    """The flags as Python's keywords (None: not given, the configured value). The three
    named choices are checked by `Settings`, which says what each may be."""
    documents = str(flags.documents) if flags.documents else None
    return EvaluateOptions(
        dataset_name=flags.dataset_name,
        format=flags.format,
        skip_invalid=flags.skip_invalid,
        fields=parse_field_option(flags.field) if flags.field else None,
        quick=flags.quick,
        group_by=tuple(flags.group_by or ()),
        pipeline=flags.pipeline,
        baselines=tuple(flags.baseline or ()),
        generator=flags.generator,
        generator_base_url=flags.generator_base_url,
        retrieval=RetrievalOptions(
            top_k=flags.top_k,
            chunk_size=flags.chunk_size,
            chunk_overlap=flags.chunk_overlap,
            documents=documents,
        ),
        check_laws=flags.check_laws,
        threshold=flags.threshold,
        regression=flags.regression,
        baseline_run=flags.baseline_run,
        any_plan=flags.any_plan,
        history=False if flags.no_history else flags.history_path,
        cache=False if flags.no_cache else None,
        mlflow=flags.mlflow,  # checked before the run; logged by `_finish` from its view
        **_setting_options(flags),
    )


def _setting_options(flags: EvalFlags) -> EvaluateOptions:
    """The flags that are settings of the same name (`SETTING_USES`), and the two whose
    flag is named for the user (`--max-tokens`, `--prompts-dir`)."""
    return EvaluateOptions(
        judge_base_url=flags.judge_base_url,
        judge_mode=cast(_JudgeMode | None, flags.judge_mode),
        judge_output=cast(_JudgeOutput | None, flags.judge_output),
        judge_replies=cast(_JudgeReplies | None, flags.judge_replies),
        judge_samples=flags.judge_samples,
        judge_temperature=flags.judge_temperature,
        judge_max_tokens=flags.max_tokens,
        judge_prompts_dir=flags.prompts_dir,
        cascade_judge=flags.cascade_judge,
        cascade_low=flags.cascade_low,
        cascade_high=flags.cascade_high,
        offline_min_support=flags.offline_min_support,
        language=flags.language,
        max_cost=flags.max_cost,
        concurrency=flags.concurrency,
        cache_path=flags.cache_path,
        batch=flags.batch,
        batch_retry=cast(_BatchRetry | None, flags.batch_retry),
        batch_poll=flags.batch_poll,
        max_response_chars=flags.max_response_chars,
        max_context_chars=flags.max_context_chars,
        max_errors=flags.max_errors,
        max_unfaithful=flags.max_unfaithful,
        min_faithful_turns=flags.min_faithful_turns,
        min_consistency=flags.min_consistency,
        user_facts=flags.user_facts,
        agent_steps=flags.agent_steps,
        sample_timeout=flags.sample_timeout,
        timeout=flags.timeout,
        retries=flags.retries,
        fail_fast=flags.fail_fast,
        executor=flags.executor,
        ray_address=flags.ray_address,
        ray_workers=flags.ray_workers,
    )


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
    elif result.gated and result.exit_code == ExitCode.OK:
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
    if estimate.batch and estimate.cost_usd is not None:
        cost += " at batch prices (half)"
    out.print(
        f"Dry run · judge {estimate.judge} · {estimate.samples} samples · "
        f"{estimate.calls} calls · about {estimate.prompt_tokens} prompt and "
        f"{estimate.completion_tokens} completion tokens · about {cost} "
        "(an upper bound: cached replies cost nothing). No call was made.",
        highlight=False,
        markup=False,
    )
    if estimate.missing_key is not None:
        err.print(
            f"Note: {estimate.missing_key} is not set, so the run would stop at the judge's "
            f"first call: export {estimate.missing_key}=... first, or point --judge-base-url "
            "at a local server (which needs none).",
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
