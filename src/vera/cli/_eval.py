"""`vera eval`: evaluate a dataset, print a summary, write the reports, exit with the run's code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.markup import escape

from vera.cli._app import EXIT_INTERRUPTED, _fail, app, err, out
from vera.cli._eval_flags import _EVAL_OPTIONS, _NAMED_AGAIN, _SETTING_FLAGS, _takes
from vera.datasets import parse_field_option
from vera.plan import (
    DEFAULT_METRICS,
    DatasetRef,
    GeneratorSpec,
    RetrievalOptions,
    RunPlan,
    build_plan,
    resume_command,
    resume_notice,
    resumed_with,
)
from vera.render import (
    RunProgress,
    RunView,
    check_report_targets,
    open_run_view,
    parse_report_option,
    print_summary,
    report_format,
    write_reports,
)
from vera.run import (
    EXIT_OK,
    Bindings,
    RunEstimate,
    RunObserver,
    RunResult,
    estimate_plan,
    run_plan,
    stored_plan,
)
from vera.types import VeraError

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    pass


@app.command("eval")
@_takes(_EVAL_OPTIONS)
def eval_command(**flags: Any) -> None:
    """Evaluate a dataset and print a summary: vera eval -d answers.jsonl --threshold 0.8"""
    try:
        plan, resume_id = _plan(flags)
        accept = _resumed_settings(flags) if resume_id else {}
        if resume_id:
            plan = _resume_with(plan, resume_id, accept)
        if flags["dry_run"]:
            return _print_estimate(estimate_plan(plan))
        result = _run(plan, resume_id, tuple(accept))
    except (VeraError, ValueError) as exc:
        _fail(exc)
    _finish(result, flags)


class _Progress(RunProgress, RunObserver):
    """`RunProgress` as the observer `run_plan` takes."""

    def batch_changed(self, line: str) -> None:
        err.print(line, highlight=False, markup=False)


def _resumed_settings(flags: dict[str, Any]) -> dict[str, Any]:
    """The settings named again with --resume: the stored run's are used for the rest."""
    given = {key: flags[flag] for key, flag in _SETTING_FLAGS.items() if key != "history_path"}
    given["cache"] = False if flags["no_cache"] else None
    return {key: value for key, value in given.items() if value is not None}


def _resume_with(plan: RunPlan, run_id: str, given: dict[str, Any]) -> RunPlan:
    """The stored plan with the settings named again, saying which stored ones apply."""
    plan, changed = resumed_with(plan, given)
    named = f"; named again: {', '.join(changed)}" if changed else ""
    err.print(
        f"Resuming run {run_id} with {resume_notice(plan)} from the stored run{named}",
        highlight=False,
        markup=False,
    )
    return plan


def _run(plan: RunPlan, resume_id: str | None, accept: tuple[str, ...] = ()) -> RunResult:
    """Run `plan` showing its progress on stderr; Ctrl-C ends it saying how to finish it."""
    with _Progress(err) as progress:
        try:
            # Streamed: each result goes to the history and leaves memory (see Bindings).
            return run_plan(
                plan,
                Bindings(keep_samples=False),
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


def _finish(result: RunResult, flags: dict[str, Any]) -> NoReturn:
    """Render the run, write every report asked for, and exit with the run's code."""
    try:
        # One view for the summary and every report: the history is opened once to read a
        # streamed run's results back, which can fail (damaged).
        with open_run_view(result) as view:
            print_summary(result.report, out, err, view.sample_results())
            _note_extractive(result)
            _write_outputs(view, _outputs(flags))
            if flags["otel_endpoint"]:
                _export_spans(view, flags["otel_endpoint"])
    except VeraError as exc:
        _fail(exc)
    raise typer.Exit(_exit_code(result))


def _note_extractive(result: RunResult) -> None:
    """Say why baselines tie where every compared pass is a built pipeline with the offline
    generator: it copies sentences of what it retrieved, so each is faithful by construction."""
    from vera.baselines import BASELINES  # the baselines' modules only for this check

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


_OUTPUT_FLAGS = {"html": "html", "md": "markdown", "junit": "junit"}
"""Each built-in report format and the `eval` flag that asks for it (`--report` names any)."""


def _outputs(flags: dict[str, Any]) -> list[tuple[str, Path]]:
    """The reports the flags ask for, as (format, path): `-o` (its suffix decides, as in
    `vera report`), the format flags, then `--report`."""
    output = [(report_format(flags["output"]), flags["output"])] if flags["output"] else []
    named = [(fmt, flags[key]) for fmt, key in _OUTPUT_FLAGS.items() if flags[key]]
    return output + named + parse_report_option(flags["report"] or ())


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
            name=flags["dataset_name"],
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
