"""The result of a run: per-sample results aggregated into a `Report`.

The result types themselves (`Report`, `SampleResult`, `MetricSummary`, ...) are plain data in
`vera.types.report`, so that the renderers and the run store can read a report without
importing what produced it; they are re-exported here with `build_report`, which computes one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from vera.stats import estimate, percentile
from vera.types.claims import Verdict
from vera.types.report import (
    CLAIM_COLUMNS,
    SAMPLE_COLUMNS,
    ClaimRecord,
    GroupStats,
    InvalidRow,
    LatencySummary,
    MetricSummary,
    Report,
    RunStop,
    SampleResult,
    SampleStatus,
)
from vera.types.results import MetricStatus

__all__ = [
    "CLAIM_COLUMNS",
    "F1_SCORE",
    "LATENCY_P99",
    "RUN_FIGURES",
    "SAMPLE_COLUMNS",
    "ClaimRecord",
    "GroupStats",
    "LatencySummary",
    "MetricSummary",
    "Report",
    "RunStop",
    "SampleResult",
    "SampleStatus",
    "build_report",
]

UNCATEGORISED = "uncategorized"
F1_SCORE = "f1_score"
LATENCY_P99 = "latency_p99_ms"
RUN_FIGURES = frozenset({F1_SCORE, LATENCY_P99})
"""Keys of `Report.metrics` that seed 001's format puts beside the metric means but that are
not metrics: they have no per-sample scores, threshold or direction, and are never in
`Report.metric_summary`. Code that treats every key of `metrics` as a metric must skip them."""


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise_metric(
    name: str, results: Iterable[SampleResult], threshold: float, higher_is_better: bool = True
) -> MetricSummary:
    scored: list[float] = []
    subs: dict[str, list[float]] = defaultdict(list)
    not_scored = not_applicable = passed = failed = 0
    for result in results:
        metric = result.results.get(name)
        if result.status is not SampleStatus.SCORED or metric is None or metric.score is None:
            not_scored += 1
            if metric is not None and metric.status is MetricStatus.NOT_APPLICABLE:
                not_applicable += 1
            continue
        scored.append(metric.score)
        for key, value in metric.sub_scores.items():
            subs[key].append(value)
        if metric.passed:
            passed += 1
        else:
            failed += 1
    overall = estimate(scored)
    return MetricSummary(
        mean=overall.mean,
        ci_low=overall.ci_low,
        ci_high=overall.ci_high,
        scored=len(scored),
        not_scored=not_scored,
        not_applicable=not_applicable,
        passed=passed,
        failed=failed,
        threshold=threshold,
        higher_is_better=higher_is_better,
        sub_scores={key: estimate(values) for key, values in sorted(subs.items())},
    )


def _group_stats(members: Sequence[SampleResult], name: str) -> GroupStats:
    values = [
        s
        for r in members
        if r.status is SampleStatus.SCORED and (s := r.scores.get(name)) is not None
    ]
    stats = estimate(values)
    return GroupStats(
        mean=stats.mean,
        ci_low=stats.ci_low,
        ci_high=stats.ci_high,
        scored=len(values),
        not_scored=len(members) - len(values),
    )


def _breakdown(
    results: Sequence[SampleResult], metric_names: Sequence[str], key: str
) -> dict[str, dict[str, GroupStats]]:
    groups: dict[str, list[SampleResult]] = defaultdict(list)
    for result in results:
        value = result.category if key == "category" else result.group_values.get(key)
        groups[UNCATEGORISED if value is None else str(value)].append(result)
    return {
        value: {name: _group_stats(groups[value], name) for name in metric_names}
        for value in sorted(groups)
    }


def _latency(results: Iterable[SampleResult]) -> LatencySummary | None:
    values = [r.latency_ms for r in results if r.latency_ms is not None]
    if not values:
        return None
    return LatencySummary(
        count=len(values),
        p50=percentile(values, 50),
        p95=percentile(values, 95),
        p99=percentile(values, 99),
        mean=sum(values) / len(values),
    )


def _per_category(
    results: Sequence[SampleResult], metric_names: Sequence[str]
) -> dict[str, dict[str, float | int | None]]:
    groups: dict[str, list[SampleResult]] = defaultdict(list)
    for result in results:
        if result.status is SampleStatus.SCORED:
            groups[result.category or UNCATEGORISED].append(result)
    breakdown: dict[str, dict[str, float | int | None]] = {}
    for category in sorted(groups):
        members = groups[category]
        row: dict[str, float | int | None] = {}
        for name in metric_names:
            row[name] = _mean([s for r in members if (s := r.scores.get(name)) is not None])
        row["count"] = len(members)
        breakdown[category] = row
    return breakdown


def _agreement(results: Sequence[SampleResult]) -> dict[str, float | int] | None:
    """How often the judge's draws agreed, over all claims judged with several draws."""
    rates = [c.agreement for r in results for c in r.claims if c.agreement is not None]
    if not rates:
        return None
    return {
        "claims": len(rates),
        "mean": sum(rates) / len(rates),
        "unanimous": sum(1 for rate in rates if rate == 1.0) / len(rates),
    }


_SUPPORTED = frozenset({Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED})


def _quotes_not_found(results: Sequence[SampleResult]) -> dict[str, int] | None:
    """Supported verdicts whose quote was not found in the cited context (or was never given),
    out of the supported verdicts whose quote was checked.

    Counted from the claim records rather than kept by the judge, so a resumed run counts the
    samples it did not judge again. None when no quote was checked at all (the offline judge,
    say): a count of 0 would then claim a check that never ran.
    """
    checked = [c for r in results for c in r.claims if c.quote_found is not None]
    if not checked:
        return None
    supported = [c for c in checked if c.verdict in _SUPPORTED]
    return {
        "supported": sum(1 for c in supported if c.quote_found is False),
        "claims": len(supported),
    }


def _grounding_f1(
    summary: dict[str, MetricSummary], results: Sequence[SampleResult]
) -> tuple[bool, float | None]:
    """Grounding F1 over the run, and whether it is known.

    `grounding_f1` scores each sample's F1 and averages those, so without it the same figure is
    rebuilt from the samples scored on both precision and recall: their per-sample F1, averaged.
    (The harmonic mean of the two means would differ: the means average over different samples,
    precision over all, recall only over those with a reference.)
    """
    if "grounding_f1" in summary:
        return True, summary["grounding_f1"].mean
    if "grounding_precision" not in summary or "grounding_recall" not in summary:
        return False, None
    f1s = []
    for result in results:
        p = result.scores.get("grounding_precision")
        r = result.scores.get("grounding_recall")
        if result.status is SampleStatus.SCORED and p is not None and r is not None:
            f1s.append(0.0 if p + r == 0 else 2 * p * r / (p + r))
    return True, _mean(f1s)


def _latency_by_category(results: Sequence[SampleResult]) -> dict[str, LatencySummary]:
    by_category: dict[str, list[SampleResult]] = defaultdict(list)
    for result in results:
        by_category[result.category or UNCATEGORISED].append(result)
    return {
        category: found
        for category in sorted(by_category)
        if (found := _latency(by_category[category])) is not None
    }


def _counts(results: Sequence[SampleResult], invalid_rows: Sequence[InvalidRow]) -> dict[str, int]:
    statuses = [r.status for r in results]
    return {
        "total": len(results),
        "scored": statuses.count(SampleStatus.SCORED),
        "errors": statuses.count(SampleStatus.ERROR),
        "needs_pipeline": statuses.count(SampleStatus.NEEDS_PIPELINE),
        "skipped": statuses.count(SampleStatus.SKIPPED),
        "invalid_rows": len(invalid_rows),
    }


def _run_figures(
    summary: dict[str, MetricSummary],
    results: Sequence[SampleResult],
    latency: LatencySummary | None,
) -> dict[str, float | None]:
    """Seed 001's figures beside the metric means: `f1_score` and `latency_p99_ms`, each where
    known. A metric of the same name keeps its place; these never replace one."""
    figures: dict[str, float | None] = {}
    known, f1 = _grounding_f1(summary, results)
    if known:
        figures[F1_SCORE] = f1
    if latency is not None:
        figures[LATENCY_P99] = latency.p99
    return {key: value for key, value in figures.items() if key not in summary}


def build_report(
    *,
    dataset: str,
    judge: str,
    version: str,
    judge_details: dict[str, Any] | None = None,
    thresholds: dict[str, float],
    results: Sequence[SampleResult],
    lower_is_better: Iterable[str] = (),
    group_by: Sequence[str] = (),
    invalid_rows: Sequence[InvalidRow] = (),
    unrecognised_fields: Iterable[str] = (),
    started: datetime | None = None,
    stopped: RunStop | None = None,
    pipeline: str | None = None,
) -> Report:
    """Aggregate per-sample results into a report; failed samples are counted, not averaged."""
    lower = set(lower_is_better)
    summary = {
        name: summarise_metric(name, results, t, higher_is_better=name not in lower)
        for name, t in thresholds.items()
    }
    names = list(thresholds)
    counts = _counts(results, invalid_rows)
    details = dict(judge_details or {})
    agreement = _agreement(results)
    if agreement is not None:
        details["agreement"] = agreement
    quotes_not_found = _quotes_not_found(results)
    if quotes_not_found is not None:
        details["quotes_not_found"] = quotes_not_found
    timestamp = (started or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    latency = _latency(results)
    return Report(
        dataset=dataset,
        timestamp=timestamp,
        judge=judge,
        pipeline=pipeline,
        judge_details=details,
        vera_version=version,
        queries_evaluated=counts["scored"],
        metrics={
            **{name: s.mean for name, s in summary.items()},
            **_run_figures(summary, results, latency),
        },
        metric_summary=summary,
        per_category_breakdown=_per_category(results, names),
        breakdowns={key: _breakdown(results, names, key) for key in ("category", *group_by)},
        latency=latency,
        latency_by_category=_latency_by_category(results),
        counts=counts,
        samples=tuple(results),
        invalid_rows=tuple(invalid_rows),
        unrecognised_fields=tuple(sorted(unrecognised_fields)),
        stopped=stopped,
    )
