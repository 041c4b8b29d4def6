"""The run summary in a terminal: metric table, breakdowns, baselines, usage and failures.

Text from datasets, judges and errors is printed as text, never read as console markup.
Every table fits the console's width without cutting a name or a heading: drawn as a grid
where it fits whole, else stacked, one row after another (`print_table`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from vera._results._comparison import relative_change, significant
from vera._results._outcome import UNFAITHFUL
from vera._text import printable
from vera._types import MetricComparison
from vera._types._report import Report, SampleResult, SampleStatus
from vera.render._calibration import calibration_lines
from vera.render._cascade import cascade_summary
from vera.render._conversations import conversation_lines
from vera.render._ranking import EVERY_INVALID_ROW, FailingSamples, more_line
from vera.render._view import answers_line, not_applicable_lines

SHOWN_FAILURES = 5
FAILING_TITLE = "Failing samples, worst first"
UNBOUNDED = 10_000
"""A width no table reaches: measured at it, a table shows the width it needs uncut."""


def plain_cells(*values: object) -> list[str]:
    """Table cells shown as the text they are: a `[bold]` or `[/INST]` in a dataset, a
    judge's reason or a plugin's name is never read as console markup."""
    return [escape(str(value)) for value in values]


def format_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def format_interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"{low:.2f} to {high:.2f}"


@dataclass(frozen=True)
class Column:
    """A table's column: its heading, and how a stacked row names its value (the heading
    unless said otherwise)."""

    header: str
    label: str | None = None
    justify: JustifyMethod = "right"


Cell = str | Text | None
"""A cell: a str is shown as the text it is (never markup), a Text keeps its style, None
is empty (and left out of a stacked row)."""


def _text(cell: Cell) -> Text:
    """The cell as Text, `printable`: its styles kept, an escape sequence in it shown."""
    if not isinstance(cell, Text):
        return Text(printable(cell or ""))
    text = cell.copy()
    text.plain = printable(text.plain)  # one character for one: the styles' spans still fit
    return text


def print_table(
    out: Console,
    title: str,
    columns: Sequence[Column],
    rows: Iterable[Sequence[Cell]],
    *,
    stacked: Iterable[Sequence[Cell]] | None = None,
) -> None:
    """A grid when it fits `out` whole; otherwise each row stacked: its first cell on a line,
    then "label value · label value", wrapped between values. Nothing is cut short.

    `stacked`, where given, says the rows for the stacked layout instead: a name, then
    values that carry their own labels.
    """
    cells = [[_text(cell) for cell in row] for row in rows]
    table = Table(title=_text(title))
    for index, column in enumerate(columns):
        table.add_column(_text(column.header), justify="left" if index == 0 else column.justify)
    for row in cells:
        table.add_row(*row)
    needed = out.measure(table, options=out.options.update_width(UNBOUNDED)).maximum
    if needed <= out.width:
        out.print(table)
        return
    if stacked is None:
        stacked = [
            [
                row[0],
                *(
                    Text.assemble(column.label or column.header, " ", cell)
                    for column, cell in zip(columns[1:], row[1:], strict=False)
                    if cell.plain
                ),
            ]
            for row in cells
        ]
    out.print(Text(printable(title), style="bold"))
    for name, *values in stacked:
        _print_stacked_row(out, _text(name), [_text(value) for value in values])


def _print_stacked_row(out: Console, name: Text, cells: Sequence[Text]) -> None:
    """`name` on its own line and its values below, indented; a sub-row (an indented name)
    on one line where it fits."""
    parts = [cell for cell in cells if cell.plain]
    depth = len(name.plain) - len(name.plain.lstrip(" "))
    inline = Text(" · ").join(parts)
    if depth and parts and name.cell_len + 2 + inline.cell_len <= out.width:
        out.print(Text.assemble(name, ": ", inline), overflow="fold")
        return
    out.print(name, overflow="fold")
    indent = depth + 2
    for line in _joined(parts, out.width - indent):
        # Wrapped here, so that a part too wide for one line goes on under its own indent.
        for piece in line.wrap(out, max(1, out.width - indent), overflow="fold"):
            piece.rstrip()
            out.print(Text(" " * indent).append_text(piece), overflow="fold")


def _joined(parts: Sequence[Text], width: int) -> list[Text]:
    """`parts` joined by " · " into lines of at most `width` cells, each part kept whole on
    one line unless it alone is wider."""
    lines: list[Text] = []
    for part in parts:
        if lines and lines[-1].cell_len + 3 + part.cell_len <= width:
            lines[-1].append(" · ").append_text(part)
        else:
            lines.append(part.copy())
    return lines


def change_cell(comparison: MetricComparison, higher_is_better: bool, *, p: bool = False) -> Text:
    """The relative change of the mean ("+41.5 %"; none where a ratio would mislead), said
    better or worse, and coloured, only when the paired 95 % interval excludes 0; "—" when
    there is neither."""
    words = [relative_change(comparison.system_mean, comparison.baseline_mean)]
    style = ""
    if significant(comparison) and comparison.difference is not None:
        better = (comparison.difference > 0) == higher_is_better
        words.append("better" if better else "worse")
        style = "green" if better else "red"
    cell = Text(" ".join(word for word in words if word) or "—")
    if style:
        cell.stylize(style)
    if p and comparison.p_value is not None:
        cell.append(f" (p={comparison.p_value:.3f})")
    return cell


def print_summary(
    report: Report, out: Console, err: Console, results: Iterable[SampleResult] | None = None
) -> None:
    """The whole summary: tables and counts on `out`, errors and invalid rows on `err`;
    `results` are the samples' results when they are not in `report.samples` (read once)."""
    _print_metrics(report, out)
    if report.answers is not None:
        out.print(answers_line(report.answers), highlight=False, markup=False)
    _print_breakdowns(report, out)
    if report.conversations is not None:
        for line in conversation_lines(report.conversations):
            out.print(line, highlight=False, markup=False)
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
        f"{counts.scored} scored, {counts.errors} errors, "
        f"{counts.needs_pipeline} need a pipeline, {counts.invalid_rows} invalid rows "
        f"(of {counts.total + counts.invalid_rows})",
        highlight=False,
    )
    if report.unrecognised_fields:
        out.print(
            "Not VERA fields, kept as metadata: "
            + ", ".join(report.unrecognised_fields)
            + " (to read one as a field: --field FIELD=COLUMN, e.g. --field contexts=docs)",
            highlight=False,
            markup=False,
        )


METRIC_COLUMNS = (
    Column("Metric"),
    Column("Mean", "mean"),
    Column("95% CI"),
    Column("Scored", "scored"),
    Column("Not scored", "not scored"),
    Column("Passed", "passed"),
    Column("Failed", "failed"),
    Column("Threshold", "threshold"),
)


def _print_metrics(report: Report, out: Console) -> None:
    """One row per metric, and one per sub-score below it (indented). Stacked, the counts
    read "passed 8/10" (of the scored samples; the rest failed), and "not scored" is said only
    when some were not."""
    rows: list[list[Cell]] = []
    stacked: list[list[Cell]] = []
    for name, s in report.metric_summary.items():
        mean, interval = format_score(s.mean), format_interval(s.ci_low, s.ci_high)
        threshold = f"{'≥' if s.higher_is_better else '≤'} {s.threshold:.2f}"
        counts = (str(s.scored), str(s.not_scored), str(s.passed), str(s.failed))
        rows.append([name, mean, interval, *counts, threshold])
        stacked.append(
            [
                name,
                f"mean {mean}",
                f"95% CI {interval}",
                f"passed {s.passed}/{s.scored}",
                f"threshold {threshold}",
                f"not scored {s.not_scored}" if s.not_scored else None,
            ]
        )
        for sub, stats in s.sub_scores.items():
            sub_mean, sub_interval = (
                format_score(stats.mean),
                format_interval(stats.ci_low, stats.ci_high),
            )
            rows.append([f"  {sub}", sub_mean, sub_interval])
            stacked.append([f"  {sub}", f"mean {sub_mean}", f"95% CI {sub_interval}"])
    title = f"VERA · {report.dataset} · judge: {report.judge}"
    print_table(out, title, METRIC_COLUMNS, rows, stacked=stacked)
    explained = not_applicable_lines(report)
    if explained:
        out.print("Not applicable, and why:", highlight=False, markup=False)
    for line in explained:
        out.print(f"  {line}", highlight=False, markup=False)


def _print_breakdowns(report: Report, out: Console) -> None:
    for key, groups in report.breakdowns.items():
        if key == "category" and list(groups) == ["uncategorized"]:
            continue
        # Metrics as rows, group values as columns: there are more metrics than groups.
        columns = [Column("Metric"), *(Column(value) for value in groups)]
        rows: list[list[Cell]] = []
        for name in report.metric_summary:
            cells = [groups[value][name] for value in groups]
            rows.append([name, *(f"{format_score(c.mean)} ({c.scored})" for c in cells)])
        print_table(out, f"By {key}: mean (scored samples)", columns, rows)


def _print_baselines(report: Report, out: Console) -> None:
    """Each metric's mean here and in each baseline, with the paired change; stacked, a
    baseline's mean and change stay together."""
    block = report.baseline_comparison
    significance = {} if block is None else block.significance
    system = report.pipeline or "system"
    columns = [Column("Metric"), Column(system)]
    for name in significance:
        columns += [Column(name), Column("change")]
    rows: list[list[Cell]] = []
    stacked: list[list[Cell]] = []
    for metric, summary in report.metric_summary.items():
        row: list[Cell] = [metric, format_score(summary.mean)]
        parts: list[Cell] = [metric, f"{system} {format_score(summary.mean)}"]
        for name, by_metric in significance.items():
            compared = by_metric.get(metric)
            mean = format_score(None if compared is None else compared.baseline_mean)
            change = (
                Text("—")
                if compared is None
                else change_cell(compared, summary.higher_is_better, p=True)
            )
            row += [mean, change]
            parts.append(Text.assemble(f"{name} {mean}, change ", change))
        rows.append(row)
        stacked.append(parts)
    title = f"{report.pipeline or 'this run'} against the baselines"
    print_table(out, title, columns, rows, stacked=stacked)


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
    if usage.get("cached_share"):
        # The provider's prompt cache, not VERA's response cache: read tokens cost less.
        line += f" · {usage['cached_share']:.0%} of prompt tokens from the provider's cache"
    if usage.get("unpriced_models"):
        line += f" (no price known for {', '.join(usage['unpriced_models'])})"
    out.print(line, highlight=False, markup=False)


def _print_evidence(report: Report, out: Console) -> None:
    """How many supported verdicts rest on a quote the cited context does not hold, and how
    many claims cannot come from the response."""
    counts = report.judge_details.get("quotes_not_found")
    if isinstance(counts, dict) and counts.get("claims"):
        out.print(
            f"Judge evidence: {counts['supported']} of {counts['claims']} supported verdicts "
            "had no quote found in the cited context",
            highlight=False,
            markup=False,
        )
    traced = report.judge_details.get("untraceable_claims")
    if isinstance(traced, dict) and traced.get("untraceable"):
        out.print(
            f"Judge claims: {traced['untraceable']} of {traced['claims']} claims share no "
            "word with the response they were extracted from",
            highlight=False,
            markup=False,
        )


def _print_failures(
    report: Report, out: Console, err: Console, results: Iterable[SampleResult]
) -> None:
    errors, failing = _failures(report, results)
    for result in errors:
        err.print(
            f"[red]error[/] {escape(result.id)}: {escape(result.error or '')}", highlight=False
        )
    if report.counts.errors > len(errors):
        err.print(more_line(report.counts.errors - len(errors), "error", "errors"), markup=False)
    for row in report.invalid_rows[:SHOWN_FAILURES]:
        err.print(f"[yellow]invalid[/] {escape(row.message)}", highlight=False)
    if len(report.invalid_rows) > SHOWN_FAILURES:
        left = len(report.invalid_rows) - SHOWN_FAILURES
        err.print(more_line(left, "invalid row", "invalid rows", EVERY_INVALID_ROW), markup=False)
    if report.counts.needs_pipeline:
        out.print(
            f"{report.counts.needs_pipeline} samples have no response; they need a pipeline "
            "to generate one and were not scored."
        )
    shown = failing.worst()
    if not shown:
        return
    out.print(f"[bold]{FAILING_TITLE}[/] ({failing.total} failing)", highlight=False)
    for result in shown:
        if result.verdict is not None and result.verdict.passed is False:
            out.print(
                f"  {result.id} · {UNFAITHFUL}: {result.verdict.reason}",
                highlight=False,
                markup=False,
            )
        for metric_result in result.results.values():
            if metric_result.passed is False:
                out.print(
                    f"  {result.id} · {metric_result.name} "
                    f"{format_score(metric_result.score)}: {metric_result.reason}",
                    highlight=False,
                    markup=False,
                )
    if failing.left_out:
        out.print(
            more_line(failing.left_out, "failing sample", "failing samples"),
            highlight=False,
            markup=False,
        )


def _failures(
    report: Report, results: Iterable[SampleResult]
) -> tuple[list[SampleResult], FailingSamples]:
    """The first `SHOWN_FAILURES` errors and the worst failing samples (`vera.render._ranking`:
    most failed metrics first, then the furthest past a threshold in the metric's direction),
    in one pass that keeps few samples, however many there are."""
    errors: list[SampleResult] = []
    failing = FailingSamples(report.metric_summary, SHOWN_FAILURES)
    for index, result in enumerate(results):
        if result.status is SampleStatus.ERROR and len(errors) < SHOWN_FAILURES:
            errors.append(result)
        failing.add(result, index)
    return errors, failing
