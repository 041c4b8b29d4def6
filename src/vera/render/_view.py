"""What the HTML report shows above the samples, computed from a `Report`.

Each function turns one part of the report into plain values and chart `Markup` for the
template, so the template holds layout only. A part the report lacks (no baselines, no
history, no judge usage) comes back empty, and the template leaves its section out. What needs
the per-sample results (score histograms, pipeline steps) reads a `SampleTally` gathered in the
one pass the renderer makes over them, since a streamed run's results can be read only once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from vera._results._comparison import RELATIVE_FLOOR, relative_change, significant
from vera._results._outcome import Outcome, sample_outcome
from vera._stats._stats import ValueCounts
from vera._types import AnswerVerdicts, MetricComparison
from vera._types._report import (
    RUN_FIGURES,
    Estimate,
    GroupStats,
    MetricSummary,
    Report,
    SampleResult,
    SampleStatus,
)
from vera.render._charts import Bar, bar_panel, histogram, range_bar, trend_chart


@dataclass(frozen=True)
class HistoryPoint:
    """One stored run for the trend chart: its id, when it ran, and its metric means."""

    run_id: str
    timestamp: str
    metrics: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Card:
    """A metric's summary card."""

    name: str
    summary: MetricSummary
    meets: bool | None
    """Whether the mean meets the threshold in the metric's direction; None with no mean."""
    picture: Markup
    sub_scores: tuple[tuple[str, Estimate], ...]


@dataclass(frozen=True)
class Panel:
    """A titled chart."""

    title: str
    chart: Markup
    note: str = ""


def meets(mean: float | None, summary: MetricSummary) -> bool | None:
    """Whether `mean` meets the metric's threshold in its direction (the CLI's gate)."""
    if mean is None:
        return None
    return mean >= summary.threshold if summary.higher_is_better else mean <= summary.threshold


def cards(report: Report) -> list[Card]:
    """One card per metric, in the report's order."""
    return [
        Card(
            name=name,
            summary=summary,
            meets=meets(summary.mean, summary),
            picture=range_bar(
                summary.mean,
                summary.ci_low,
                summary.ci_high,
                threshold=summary.threshold,
                title=f"{name}: mean, 95% interval and threshold",
            ),
            sub_scores=tuple(summary.sub_scores.items()),
        )
        for name, summary in report.metric_summary.items()
    ]


@dataclass
class SampleTally:
    """What the page needs from every sample besides its own entry, gathered one sample at a
    time: each metric's scores over the scored samples, each pipeline step's figures, and the
    statuses, outcomes and categories present (for the filters)."""

    count: int = 0
    scores: dict[str, ValueCounts] = field(default_factory=dict)
    step_latencies: dict[str, ValueCounts] = field(default_factory=dict)
    step_calls: dict[str, int] = field(default_factory=dict)
    step_cost: dict[str, float] = field(default_factory=dict)
    statuses: set[SampleStatus] = field(default_factory=set)
    outcomes: set[Outcome] = field(default_factory=set)
    categories: set[str] = field(default_factory=set)

    def add(self, result: SampleResult, outcome: Outcome | None = None) -> None:
        """Count one sample's result in, with its outcome where the caller already has it."""
        self.count += 1
        self.statuses.add(result.status)
        self.outcomes.add(outcome or sample_outcome(result).outcome)
        if result.category is not None:
            self.categories.add(result.category)
        if result.status is SampleStatus.SCORED:
            for name, score in result.scores.items():
                if score is not None:
                    self.scores.setdefault(name, ValueCounts()).add(score)
        for step in result.steps:
            self.step_latencies.setdefault(step.name, ValueCounts()).add(step.latency_ms)
            self.step_calls[step.name] = self.step_calls.get(step.name, 0) + step.judge_calls
            self.step_cost[step.name] = self.step_cost.get(step.name, 0.0) + step.cost_usd


def distributions(report: Report, tally: SampleTally) -> list[Panel]:
    """A histogram of each metric's per-sample scores, over the scored samples."""
    panels = []
    for name, summary in report.metric_summary.items():
        scores = tally.scores.get(name, ValueCounts())
        chart = histogram(
            scores,
            threshold=summary.threshold,
            higher_is_better=summary.higher_is_better,
            title=name,
        )
        panels.append(Panel(name, chart, f"{len(scores)} scored"))
    return panels


def _groups(report: Report) -> dict[str, dict[str, dict[str, GroupStats]]]:
    if report.breakdowns:
        return report.breakdowns
    # Reports written before `breakdowns` existed carry only seed 001's per-category means.
    groups: dict[str, dict[str, GroupStats]] = {}
    for category, row in report.per_category_breakdown.items():
        count = int(row.get("count") or 0)
        groups[category] = {
            name: GroupStats(
                mean=None if (value := row.get(name)) is None else float(value),
                ci_low=None,
                ci_high=None,
                scored=count,
                not_scored=0,
            )
            for name in report.metric_summary
        }
    return {"category": groups}


def breakdown_panels(report: Report) -> dict[str, list[Panel]]:
    """Per grouping key ("category", then each `group_by` key): a bar chart per metric with a
    bar per group. Keys with fewer than two groups are left out: nothing to compare."""
    found: dict[str, list[Panel]] = {}
    for key, groups in _groups(report).items():
        if len(groups) < 2:
            continue
        panels = []
        for name, summary in report.metric_summary.items():
            bars = [
                Bar(
                    label=group,
                    value=stats.mean,
                    ci_low=stats.ci_low,
                    ci_high=stats.ci_high,
                    note=f"{stats.scored} scored",
                )
                for group, by_metric in groups.items()
                if (stats := by_metric.get(name)) is not None
            ]
            chart = bar_panel(bars, threshold=summary.threshold, title=f"{name} by {key}")
            panels.append(Panel(name, chart))
        found[key] = panels
    return found


@dataclass(frozen=True)
class BaselineRow:
    """One metric compared with one baseline: the report's own paired comparison, and how to
    say it honestly."""

    metric: str
    baseline: str
    comparison: MetricComparison
    higher_is_better: bool = True

    @property
    def significant(self) -> bool:
        """Whether the paired 95 % interval of the difference excludes 0."""
        return significant(self.comparison)

    @property
    def better(self) -> bool | None:
        """Whether the system beats the baseline in the metric's direction; None unless the
        interval excludes 0, since a change within the noise is neither."""
        difference = self.comparison.difference
        if difference is None or not self.significant:
            return None
        return (difference > 0) == self.higher_is_better

    @property
    def change(self) -> str:
        """ "better", "worse", "no significant change", or "not compared" (no paired samples)."""
        if self.comparison.difference is None:
            return "not compared"
        if self.better is None:
            return "no significant change"
        return "better" if self.better else "worse"

    @property
    def relative(self) -> str | None:
        """The relative change of the mean ("+25.0 %"); None where a ratio would mislead."""
        return relative_change(self.comparison.system_mean, self.comparison.baseline_mean)

    @property
    def relative_note(self) -> str:
        """Why `relative` is None, for the "—" a person sees in its place; "" when it is not."""
        system_mean, baseline_mean = self.comparison.system_mean, self.comparison.baseline_mean
        if system_mean is None or baseline_mean is None:
            return "no relative change: one of the two means is missing"
        if self.relative is None:
            return (
                f"no relative change: the baseline mean {baseline_mean:.3f} is within "
                f"{RELATIVE_FLOOR:g} of 0, where a ratio overstates a small move; read the "
                "difference instead"
            )
        return ""

    @property
    def note(self) -> str:
        """The comparison in one phrase, for a chart's caption or a summary line."""
        difference = self.comparison.difference
        text = f"vs {self.baseline}: "
        text += "no paired samples" if difference is None else f"{difference:+.3f}, {self.change}"
        if self.relative is not None and difference is not None:
            text += f" ({self.relative})"
        p_value = self.comparison.p_value
        if p_value is not None:
            text += ", p < 0.001" if p_value < 0.001 else f", p = {p_value:.3f}"
        return text


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _baselines(report: Report) -> dict[str, dict[str, float | None]]:
    """Each baseline's metric means by its name, from the report's `baseline_comparison`."""
    block = report.baseline_comparison
    return {} if block is None else block.means


def _comparison(report: Report, baseline: str, metric: str) -> MetricComparison:
    """The stored paired comparison, or the two means alone for a report that has none."""
    block = report.baseline_comparison
    stats = None if block is None else block.comparison(baseline, metric)
    if stats is not None:
        return stats
    improvements = {} if block is None else block.improvement_over_baseline
    return MetricComparison(
        system_mean=report.metric_summary[metric].mean,
        baseline_mean=_number(_baselines(report)[baseline].get(metric)),
        difference=None,
        ci_low=None,
        ci_high=None,
        p_value=None,
        paired_samples=0,
        improvement=improvements.get(baseline, {}).get(metric),
    )


def baseline_rows(report: Report) -> list[BaselineRow]:
    """Every metric against every baseline, metric by metric; none without baselines."""
    return [
        BaselineRow(metric, name, _comparison(report, name, metric), summary.higher_is_better)
        for metric, summary in report.metric_summary.items()
        for name in _baselines(report)
    ]


def baseline_view(report: Report) -> tuple[list[Panel], list[BaselineRow]]:
    """Charts of the system against each baseline per metric, and the table beside them."""
    rows = baseline_rows(report)
    if not rows:
        return [], []
    system = report.pipeline or "system"
    panels: list[Panel] = []
    for metric, summary in report.metric_summary.items():
        mine = [row for row in rows if row.metric == metric]
        bars = [Bar(system, summary.mean, kind="system", note="system under test")]
        bars += [
            Bar(row.baseline, row.comparison.baseline_mean, kind="baseline", note="baseline")
            for row in mine
        ]
        chart = bar_panel(bars, threshold=summary.threshold, title=f"{metric}: system vs baselines")
        panels.append(Panel(metric, chart, "; ".join(row.note for row in mine)))
    return panels, rows


def answers_line(answers: AnswerVerdicts) -> str:
    """The answer verdicts in one line, the same in the terminal and Markdown: "Answers: 4
    of 50 answers have an unsupported or contradicted claim (PARTIALLY_SUPPORTED counts as
    supported) · 2 not judged (errors)"."""
    line = f"Answers: {answers.headline()}"
    if answers.errors:
        line += f" · {answers.errors} not judged (errors)"
    return line


def not_applicable_lines(report: Report) -> list[str]:
    """Why each metric did not apply to some samples, a line per metric and reason, the same
    in the terminal and Markdown: "grounding_recall: 5 samples not applicable: no reference
    answer ... (needs the sample field `reference`)". Empty when every metric applied."""
    lines = []
    for name, summary in report.metric_summary.items():
        for reason, count in summary.not_applicable_reasons.items():
            samples = "sample" if count == 1 else "samples"
            lines.append(f"{name}: {count} {samples} not applicable: {reason}")
        unexplained = summary.not_applicable - sum(summary.not_applicable_reasons.values())
        if unexplained > 0:
            # A report written before the reasons were kept says how many, not why.
            lines.append(f"{name}: {unexplained} samples not applicable (no reason stored)")
    return lines


def trend_panels(report: Report, history: Sequence[HistoryPoint]) -> list[Panel]:
    """A line per metric over the stored runs; nothing with fewer than two runs."""
    if len(history) < 2:
        return []
    names = list(report.metric_summary)
    # Metrics earlier runs had and this one has not still get a line; the figures beside the
    # metric means (f1_score, latency_p99_ms) do not: they are not metrics.
    earlier = {n for point in history for n in point.metrics} - RUN_FIGURES
    names += sorted(earlier - set(names))
    labels = [point.run_id or point.timestamp for point in history]
    panels = []
    for name in names:
        values = [point.metrics.get(name) for point in history]
        if all(v is None for v in values):
            continue
        summary = report.metric_summary.get(name)
        chart = trend_chart(
            labels,
            values,
            threshold=summary.threshold if summary else None,
            title=f"{name} over {len(history)} runs",
        )
        panels.append(Panel(name, chart))
    return panels


@dataclass(frozen=True)
class StepRow:
    """A pipeline step over all samples."""

    name: str
    samples: int
    p50: float | None
    p95: float | None
    judge_calls: int
    cost_usd: float


def step_rows(tally: SampleTally) -> list[StepRow]:
    """Each pipeline step's latency percentiles, judge calls and cost over the run."""
    return [
        StepRow(
            name=name,
            samples=len(values),
            p50=values.percentile(50),
            p95=values.percentile(95),
            judge_calls=tally.step_calls[name],
            cost_usd=tally.step_cost[name],
        )
        for name, values in tally.step_latencies.items()
    ]


def latency_source(report: Report) -> tuple[str, str]:
    """What the samples' latency is, as a title and a sentence: the pipeline call's time as
    VERA measured it (the runner times `pipeline.run` for each sample), or the dataset's own
    `latency_ms` field. Neither is how long evaluation took."""
    if report.pipeline:
        return (
            "Pipeline latency, measured by VERA",
            f"The time VERA measured around each call of the pipeline {report.pipeline}, from "
            "query to response; evaluating the response afterwards is not part of it.",
        )
    return (
        "Latency of the system under test, from the dataset",
        "Each sample's latency_ms field, as the dataset gave it: VERA did not measure it, and "
        "it is not how long evaluation took.",
    )


def usage_view(report: Report) -> dict[str, Any]:
    """The judge's calls, tokens and cost from `judge_details.usage`, when the judge kept them."""
    usage = report.judge_details.get("usage")
    if not isinstance(usage, dict):
        return {}
    by_label = usage.get("by_label")
    return {
        "total": usage,
        "by_label": sorted(by_label.items()) if isinstance(by_label, dict) else [],
        "unpriced": list(usage.get("unpriced_models") or []),
    }
