"""A Markdown summary sized for a pull-request comment: metrics, gates, baselines, failures."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from vera._results._outcome import UNFAITHFUL
from vera._types._report import Report, SampleResult
from vera.render._calibration import calibration_lines
from vera.render._cascade import cascade_summary
from vera.render._conversations import conversation_lines
from vera.render._ranking import FailingSamples, more_line
from vera.render._view import answers_line, baseline_rows, not_applicable_lines

SHOWN_SAMPLES = 5


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


# What can start Markdown mid-line: with the brackets escaped no link or image can form, and
# HTML is already escaped; other punctuation stays as it is, readable in the raw comment.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _cell(text: str) -> str:
    """`text` as inert Markdown on one line: HTML tags, images, links and emphasis from a
    dataset or a judge show as the characters they are in a pull-request comment."""
    flat = " ".join(html.escape(text, quote=False).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", flat)


def _code(text: str) -> str:
    """`text` as a code span no backtick inside it can close (CommonMark: the fence is one
    backtick longer than the longest run inside, padded when the text starts or ends with
    one)."""
    flat = " ".join(text.split())
    runs = [len(run) for run in re.findall(r"`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def render_markdown(
    report: Report,
    *,
    gate_failures: Sequence[str] = (),
    results: Iterable[SampleResult] | None = None,
) -> str:
    """The report's essentials as Markdown; `gate_failures` adds the gate's verdict, and
    `results` are the samples' results when they are not in `report.samples` (read once)."""
    lines = [
        f"### VERA · {_cell(report.dataset)}",
        "",
        f"Judge {_code(report.judge)}"
        + (f" · pipeline {_code(report.pipeline)}" if report.pipeline else "")
        + f" · {report.counts.scored} of {report.counts.total} samples scored"
        + (f" · {report.counts.errors} errors" if report.counts.errors else ""),
        *(["", _cell(line)] if (line := cascade_summary(report.judge_details)) else []),
        "",
        "| metric | mean | 95% CI | passed | threshold |",
        "|---|---|---|---|---|",
    ]
    if report.answers is not None:
        lines[lines.index("| metric | mean | 95% CI | passed | threshold |") - 1 : 0] = [
            "",
            f"**{_cell(answers_line(report.answers))}**",
        ]
    for name, s in report.metric_summary.items():
        interval = "—" if s.ci_low is None else f"{s.ci_low:.2f} to {s.ci_high:.2f}"
        direction = "≥" if s.higher_is_better else "≤"
        lines.append(
            f"| {name} | {_fmt(s.mean)} | {interval} | {s.passed}/{s.scored} "
            f"| {direction} {s.threshold:.2f} |"
        )
    if explained := not_applicable_lines(report):
        lines += ["", "**Not applicable, and why:**", *(f"- {_cell(line)}" for line in explained)]
    if report.conversations is not None:
        lines += ["", *(f"- {_cell(line)}" for line in conversation_lines(report.conversations))]
    if report.calibration is not None:
        title, *rest = calibration_lines(report.calibration)
        lines += ["", f"**{_cell(title)}**", "", *(f"- {_cell(line)}" for line in rest)]
    if gate_failures:
        lines += ["", "**Gate failed:**", *(f"- {_cell(line)}" for line in gate_failures)]
    if report.regression is not None:
        lines += ["", _cell(report.regression.describe())]
    lines += _baselines(report)
    lines += _failing(report, report.samples if results is None else results)
    return "\n".join(lines) + "\n"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def _baselines(report: Report) -> list[str]:
    """The system against each baseline, metric by metric: a change is called better or worse
    only when its paired 95 % interval excludes 0, and a relative change is left out where the
    baseline mean is too near 0 for a ratio to mean anything."""
    rows = baseline_rows(report)
    if not rows:
        return []
    lines = [
        "",
        "| metric | compared with | difference | 95% CI | change | relative change |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        c = row.comparison
        interval = "—" if c.ci_low is None else f"{_signed(c.ci_low)} to {_signed(c.ci_high)}"
        change = f"**{row.change}**" if row.better is not None else row.change
        lines.append(
            f"| {row.metric} | {_cell(row.baseline)} | {_signed(c.difference)} "
            f"| {interval} | {change} | {row.relative or '—'} |"
        )
    return lines


def _failing(report: Report, results: Iterable[SampleResult]) -> list[str]:
    """The `SHOWN_SAMPLES` worst failing samples (`vera.render._ranking`), each failed metric
    with its reason, and how many more failed and where they are; read once, keeping few."""
    failing = FailingSamples.of(results, report.metric_summary, SHOWN_SAMPLES)
    if not failing.total:
        return []
    lines = [
        "",
        f"<details><summary>Failing samples: {failing.total}, worst first</summary>",
        "",
    ]
    for sample in failing.worst():
        if sample.verdict is not None and sample.verdict.passed is False:
            lines.append(f"- {_code(sample.id)} {UNFAITHFUL}: {_cell(sample.verdict.reason)}")
        for result in sample.results.values():
            if result.passed is False:
                lines.append(
                    f"- {_code(sample.id)} {result.name} {_fmt(result.score)}: "
                    f"{_cell(result.reason)}"
                )
    if failing.left_out:
        lines.append(f"- {_cell(more_line(failing.left_out, 'failing sample', 'failing samples'))}")
    return [*lines, "", "</details>"]
