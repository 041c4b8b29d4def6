"""The run summary in a terminal: metric table, breakdowns, baselines, usage and failures.

Text from datasets, judges and errors is printed as text, never read as console markup.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vera.report import Report, SampleResult, SampleStatus
from vera.reports.calibration import calibration_lines
from vera.reports.cascade import cascade_summary

__all__ = ["format_interval", "format_score", "plain_cells", "print_summary"]

SHOWN_FAILURES = 5


def plain_cells(*values: object) -> list[str]:
    """Table cells shown as the text they are: a `[bold]` or `[/INST]` in a dataset, a
    judge's reason or a plugin's name is never read as console markup."""
    return [escape(str(value)) for value in values]


def format_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def format_interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.2f} to {high:.2f}"


def print_summary(
    report: Report, out: Console, err: Console, results: Iterable[SampleResult] | None = None
) -> None:
    """The whole summary: tables and counts on `out`, errors and invalid rows on `err`;
    `results` are the samples' results when they are not in `report.samples` (read once)."""
    table = Table(title=escape(f"VERA · {report.dataset} · judge: {report.judge}"))
    columns = ("Metric", "Mean", "95% CI", "Scored", "Not scored", "Passed", "Failed", "Threshold")
    for column in columns:
        table.add_column(column, justify="left" if column == "Metric" else "right")
    for name, s in report.metric_summary.items():
        direction = "≥" if s.higher_is_better else "≤"
        table.add_row(
            *plain_cells(
                name,
                format_score(s.mean),
                format_interval(s.ci_low, s.ci_high),
                str(s.scored),
                str(s.not_scored),
                str(s.passed),
                str(s.failed),
                f"{direction} {s.threshold:.2f}",
            )
        )
        for sub, stats in s.sub_scores.items():
            table.add_row(
                *plain_cells(
                    f"  {sub}",
                    format_score(stats.mean),
                    format_interval(stats.ci_low, stats.ci_high),
                )
            )
    out.print(table)
    _print_breakdowns(report, out)
    if report.baseline_comparison:
        _print_baselines(report, out)
    if report.categorical_tests:
        laws_line = " · ".join(
            f"{law} {verdict}" for law, verdict in report.categorical_tests.items()
        )
        out.print(f"Pipeline laws: {laws_line}", highlight=False, markup=False)
    if report.latency is not None:
        lat = report.latency
        out.print(
            f"Latency over {lat.count} samples: p50 {lat.p50:.0f} ms · p95 {lat.p95:.0f} ms · "
            f"p99 {lat.p99:.0f} ms",
            highlight=False,
        )

    _print_cascade(report, out)
    if report.calibration is not None:
        for line in calibration_lines(report.calibration):
            out.print(line, highlight=False, markup=False)
    _print_usage(report, out)
    _print_evidence(report, out)
    _print_counts(report, out)
    _print_failures(report, out, err, report.samples if results is None else results)


def _print_counts(report: Report, out: Console) -> None:
    """What happened to the rows, and which of their fields VERA did not read."""
    counts = report.counts
    out.print(
        f"{counts['scored']} scored, {counts['errors']} errors, "
        f"{counts['needs_pipeline']} need a pipeline, {counts['invalid_rows']} invalid rows "
        f"(of {counts['total'] + counts['invalid_rows']})",
        highlight=False,
    )
    if report.unrecognised_fields:
        out.print(
            "Not VERA fields, kept as metadata: " + ", ".join(report.unrecognised_fields),
            highlight=False,
            markup=False,
        )


def _print_breakdowns(report: Report, out: Console) -> None:
    for key, groups in report.breakdowns.items():
        if key == "category" and list(groups) == ["uncategorized"]:
            continue
        # Metrics as rows, group values as columns: there are more metrics than groups.
        breakdown = Table(title=escape(f"By {key}: mean (scored samples)"))
        breakdown.add_column("Metric")
        for value in groups:
            breakdown.add_column(escape(value), justify="right")
        for name in report.metric_summary:
            cells = [groups[value][name] for value in groups]
            means = (f"{format_score(c.mean)} ({c.scored})" for c in cells)
            breakdown.add_row(*plain_cells(name, *means))
        out.print(breakdown)


def _print_baselines(report: Report, out: Console) -> None:
    block = report.baseline_comparison or {}
    significance: dict[str, dict[str, dict[str, object]]] = block.get("significance", {})
    table = Table(title=escape(f"{report.pipeline or 'this run'} against the baselines"))
    table.add_column("Metric")
    table.add_column(report.pipeline or "system", justify="right")
    for name in significance:
        table.add_column(name, justify="right")
        table.add_column("change (p)", justify="right")
    for metric, summary in report.metric_summary.items():
        mean = summary.mean
        cells = [format_score(mean)]
        for by_metric in significance.values():
            found = by_metric.get(metric, {})
            baseline_mean = found.get("baseline_mean")
            change = str(found.get("improvement") or "—")
            p_value = found.get("p_value")
            cells.append(format_score(baseline_mean if isinstance(baseline_mean, float) else None))
            cells.append(f"{change} (p={p_value:.3f})" if isinstance(p_value, float) else change)
        table.add_row(*plain_cells(metric, *cells))
    out.print(table)


def _print_cascade(report: Report, out: Console) -> None:
    """How much a cascade judge sent on to its second judge, and the calls that saved."""
    line = cascade_summary(report.judge_details)
    if line:
        out.print(line, highlight=False, markup=False)


def _print_usage(report: Report, out: Console) -> None:
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
    out.print(line, highlight=False, markup=False)


def _print_evidence(report: Report, out: Console) -> None:
    """How many supported verdicts rest on a quote the cited context does not hold."""
    counts = report.judge_details.get("quotes_not_found")
    if not isinstance(counts, dict) or not counts.get("claims"):
        return
    out.print(
        f"Judge evidence: {counts['supported']} of {counts['claims']} supported verdicts had "
        "no quote found in the cited context",
        highlight=False,
        markup=False,
    )


def _print_failures(
    report: Report, out: Console, err: Console, results: Iterable[SampleResult]
) -> None:
    errors, lowest = _failures(results)
    for result in errors:
        err.print(
            f"[red]error[/] {escape(result.id)}: {escape(result.error or '')}", highlight=False
        )
    for row in report.invalid_rows[:SHOWN_FAILURES]:
        err.print(f"[yellow]invalid[/] {escape(row.message)}", highlight=False)
    if report.counts["needs_pipeline"]:
        out.print(
            f"{report.counts['needs_pipeline']} samples have no response; they need a pipeline "
            "to generate one and were not scored."
        )
    shown = [s for s in lowest if any(r.passed is False for r in s.results.values())]
    if shown:
        out.print("[bold]Lowest-scoring samples[/]")
        for result in shown:
            for metric_result in result.results.values():
                if metric_result.passed is False:
                    out.print(
                        f"  {result.id} · {metric_result.name} "
                        f"{format_score(metric_result.score)}: {metric_result.reason}",
                        highlight=False,
                        markup=False,
                    )


def _failures(results: Iterable[SampleResult]) -> tuple[list[SampleResult], list[SampleResult]]:
    """The first `SHOWN_FAILURES` errors and the `SHOWN_FAILURES` lowest-scoring samples, in
    one pass that keeps no more than those, however many samples there are."""
    errors: list[SampleResult] = []
    scored: list[tuple[float, int, SampleResult]] = []
    for index, result in enumerate(results):
        if result.status is SampleStatus.ERROR and len(errors) < SHOWN_FAILURES:
            errors.append(result)
        elif result.status is SampleStatus.SCORED:
            low = min((v for v in result.scores.values() if v is not None), default=1.0)
            scored.append((low, index, result))
            if len(scored) > 4 * SHOWN_FAILURES:
                scored = heapq.nsmallest(SHOWN_FAILURES, scored)
    return errors, [result for _, _, result in heapq.nsmallest(SHOWN_FAILURES, scored)]
