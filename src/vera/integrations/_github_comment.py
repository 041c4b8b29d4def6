"""A run as the pull-request comment and the step outputs of VERA's GitHub Action.

The comment reads the JSON report `vera eval -o` wrote: the exit code's verdict, the answer
verdicts, each metric against the base branch's last run (from the run history the regression
gate searched), the unfaithful answers with their first unsupported claim, and links to the
Actions run and its report artifact. Text from the data goes through the Markdown summary's
escaping, so an answer cannot format, link or close anything in the comment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vera._results import compare_reports, regression_failures
from vera._run import ExitCode
from vera._store import RunStore
from vera._types import (
    AnswerStatus,
    MetricComparison,
    PartialRule,
    Report,
    SampleResult,
    Verdict,
)
from vera._types._errors import ConfigError
from vera.render._markdown import _cell, _code

SHOWN_ANSWERS = 10
"""The most unfaithful answers a comment lists; the rest are in the report artifact."""
_CLAIM_CHARS = 300
"""A longer claim is cut in the comment (the report holds it whole)."""
MAX_COMMENT_CHARS = 60_000
"""GitHub refuses a comment body over 65,536 characters; the summary is cut to fit below."""

_VERDICTS: dict[int, tuple[str, str]] = {
    ExitCode.OK: ("✅", "every gate holds"),
    ExitCode.GATE_FAILED: ("❌", "a gate failed"),
    ExitCode.USAGE: ("⚠️", "bad usage or input, nothing evaluated"),
    ExitCode.INCOMPLETE: ("⚠️", "the run is incomplete"),
}


def read_report(path: Path) -> Report:
    """The JSON report `vera eval -o PATH` wrote; a `ConfigError` naming the file otherwise."""
    try:
        return Report.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"--report {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        first = str(exc).splitlines()[0:3]
        raise ConfigError(
            f"--report {path}: not a VERA JSON report ({' '.join(first)}); write one with "
            "vera eval -o report.json"
        ) from None


@dataclass(frozen=True)
class BaseComparison:
    """This run against the base branch's run the regression gate compared it with."""

    run_id: str
    metrics: Mapping[str, MetricComparison]
    regressions: Sequence[str]
    """The regression gate's own lines: each metric that got significantly worse."""


def compare_with_base(report: Report, history: Path | None = None) -> BaseComparison | None:
    """The comparison behind the report's regression check, from the run history it searched
    (`history` overrides where that is); None when the run compared with nothing."""
    check = report.regression
    if check is None or check.compared_with is None:
        return None
    path = history or (Path(check.history) if check.history else None)
    if path is None:
        raise ConfigError("the report does not say which run history it searched: give --history")
    store = RunStore(path, read_only=True)
    try:
        previous = store.report(check.compared_with)
    finally:
        store.close()
    return BaseComparison(
        run_id=check.compared_with,
        metrics=compare_reports(report, previous),
        regressions=regression_failures(report, previous, check.compared_with),
    )


@dataclass(frozen=True)
class CommentLinks:
    """Where the reader goes for more: the Actions run, and the report artifact on it."""

    run_url: str | None = None
    artifact_url: str | None = None


def render_comment(
    marker: str,
    report: Report | None,
    *,
    exit_code: int | None,
    base: BaseComparison | None = None,
    summary: str | None = None,
    links: CommentLinks | None = None,
) -> str:
    """The comment's Markdown, starting with its hidden `marker`. Without a report (vera eval
    stopped before writing one) it says so and points at the job's log."""
    links = links or CommentLinks()
    name = _cell(report.dataset) if report is not None else "evaluation"
    heading = f"### VERA · {name}"
    if exit_code is not None:  # without it, no verdict: nothing here may read as a pass
        icon, verdict = _VERDICTS.get(exit_code, ("⚠️", "an unexpected exit code"))
        heading = f"### {icon} VERA · {name}: {verdict} (exit {exit_code})"
    lines = [marker, heading]
    lines += ["", _links_line(report, links)]
    if report is None:
        lines += ["", "vera eval wrote no report: the job's log says why."]
        return "\n".join(lines) + "\n"
    lines += _answers(report)
    lines += _metrics_table(report, base)
    lines += _regression_lines(report, base)
    lines += _unfaithful(report)
    if summary:
        lines += _details("vera eval's summary", summary, MAX_COMMENT_CHARS - _size(lines))
    return "\n".join(lines) + "\n"


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _links_line(report: Report | None, links: CommentLinks) -> str:
    parts = []
    if report is not None:
        counts = report.counts
        parts.append(f"Judge {_code(report.judge)} · {counts.scored} of {counts.total} scored")
    if links.run_url:
        parts.append(f"[Actions run]({links.run_url})")
    if report is not None and links.artifact_url:
        parts.append(f"[HTML report]({links.artifact_url})")
    elif report is not None and links.run_url:
        parts.append("the HTML report is among the run's artifacts")
    return " · ".join(parts)


def _answers(report: Report) -> list[str]:
    answers = report.answers
    if answers is None:
        return []
    counted = "unsupported" if answers.partial_rule is PartialRule.UNSUPPORTED else "supported"
    return [
        "",
        f"**Answers:** {answers.faithful} faithful · {answers.unfaithful} unfaithful · "
        f"{answers.no_claims} without claims · {answers.errors} errors "
        f"(PARTIALLY\\_SUPPORTED counts as {counted})",
    ]


def _fmt(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _metrics_table(report: Report, base: BaseComparison | None) -> list[str]:
    if not report.metric_summary:
        return []
    if base is None:
        rows = ["| metric | mean | 95% CI | passed |", "|---|---|---|---|"]
        for metric, s in report.metric_summary.items():
            ci = f"{_fmt(s.ci_low)} to {_fmt(s.ci_high)}"
            rows.append(f"| {_cell(metric)} | {_fmt(s.mean)} | {ci} | {s.passed}/{s.scored} |")
        return ["", *rows]
    rows = [
        f"| metric | base ({_code(base.run_id)}) | this run | change | 95% CI of change | p |",
        "|---|---|---|---|---|---|",
    ]
    for metric, s in report.metric_summary.items():
        c = base.metrics.get(metric)
        if c is None:
            rows.append(f"| {_cell(metric)} | — | {_fmt(s.mean)} | not in the base run | | |")
            continue
        ci = f"{_fmt(c.ci_low, True)} to {_fmt(c.ci_high, True)}"
        p = "—" if c.p_value is None else f"{c.p_value:.3f}"
        rows.append(
            f"| {_cell(metric)} | {_fmt(c.baseline_mean)} | {_fmt(c.system_mean)} | "
            f"{_fmt(c.difference, True)} | {ci} | {p} |"
        )
    return ["", *rows]


def _regression_lines(report: Report, base: BaseComparison | None) -> list[str]:
    check = report.regression
    if check is None:
        return [
            "",
            "No regression check: this run was not compared with the base branch (regression "
            "off, or no run history of the base branch was restored).",
        ]
    lines = ["", _cell(check.describe())]
    if base is not None and base.regressions:
        lines += ["", "**Regressions against the base branch:**"]
        lines += [f"- {_cell(line)}" for line in base.regressions]
    elif base is not None:
        lines += ["", "No significant drop against the base branch."]
    return lines


def first_bad_claim(sample: SampleResult) -> str | None:
    """The first claim that makes `sample`'s answer unfaithful, quoted with its verdict."""
    verdict = sample.verdict
    if verdict is None or verdict.status is not AnswerStatus.UNFAITHFUL:
        return None
    bad = {Verdict.NO_EVIDENCE, Verdict.CONTRADICTED}
    if verdict.partial_rule is PartialRule.UNSUPPORTED:
        bad.add(Verdict.PARTIALLY_SUPPORTED)
    for claim in sample.claims:
        if claim.verdict in bad:
            text = " ".join(claim.text.split())
            if len(text) > _CLAIM_CHARS:
                text = text[: _CLAIM_CHARS - 1].rstrip() + "…"
            return f"{_code(text)} ({_cell(claim.verdict.value)})"
    return None


def _unfaithful(report: Report) -> list[str]:
    found = [s for s in report.samples if first_bad_claim(s) is not None]
    if not found:
        return []
    lines = ["", f"**Unfaithful answers ({len(found)}), each with its first unsupported claim:**"]
    for sample in found[:SHOWN_ANSWERS]:
        lines.append(f"- {_code(sample.id)}: {first_bad_claim(sample)}")
    if len(found) > SHOWN_ANSWERS:
        lines.append(f"- … and {len(found) - SHOWN_ANSWERS} more: every one is in the report")
    return lines


def _details(title: str, text: str, room: int) -> list[str]:
    """`text` (Markdown VERA wrote) folded away, cut at a line to fit `room` characters."""
    body = text.strip()
    if len(body) > room - 200:
        kept = body[: max(room - 200, 0)].rsplit("\n", 1)[0]
        body = kept + "\n\n… cut to fit a comment: the whole summary is in the job summary"
    # Its own details blocks close before this one does; a blank line keeps Markdown on.
    return ["", f"<details><summary>{title}</summary>", "", body, "", "</details>"]


def step_outputs(report: Report | None, *, exit_code: int, report_path: Path) -> dict[str, str]:
    """The action's outputs (`key=value` lines for `GITHUB_OUTPUT`)."""
    found = {"exit-code": str(exit_code), "report-path": str(report_path)}
    if report is None:
        return found
    answers = report.answers
    found |= {
        "scored": str(report.counts.scored),
        "total": str(report.counts.total),
        "faithful": str(answers.faithful if answers else 0),
        "unfaithful": str(answers.unfaithful if answers else 0),
        "no-claims": str(answers.no_claims if answers else 0),
        "errors": str(report.counts.errors),
    }
    check = report.regression
    found["compared-with"] = (check.compared_with or "") if check else ""
    return found
