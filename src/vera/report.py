"""The result of a run: per-sample results and their aggregates.

`Report.to_dict()` is exactly the JSON that `vera eval --output` writes. Its top level follows
seed 001 (dataset, timestamp, queries_evaluated, metrics, per_category_breakdown) and adds the
samples with their claims, so every number can be traced back to claim verdicts.
"""

from __future__ import annotations

import importlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vera.datasets.validate import InvalidRow
from vera.errors import ConfigError
from vera.metrics.base import MetricResult, MetricStatus
from vera.pipelines.core import StepRecord
from vera.stats import Estimate, estimate, percentile
from vera.types import Context, Verdict

__all__ = [
    "CLAIM_COLUMNS",
    "F1_SCORE",
    "LATENCY_P99",
    "RUN_FIGURES",
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
SAMPLE_COLUMNS = ("id", "status", "category", "error", "latency_ms")
CLAIM_COLUMNS = (
    "sample_id",
    "claim_id",
    "text",
    "verdict",
    "evidence",
    "context_index",
    "reason",
    "quote_found",
    "agreement",
    "entailment",
    "span_start",
    "span_end",
)


class SampleStatus(StrEnum):
    """What happened to a sample. Only SCORED samples count in the aggregates."""

    SCORED = "scored"
    ERROR = "error"
    NEEDS_PIPELINE = "needs_pipeline"
    SKIPPED = "skipped"
    """Not evaluated because the run stopped (see `Report.stopped`)."""


class RunStop(BaseModel):
    """Why a run stopped before its end. `planned` is True for a limit the user set (a budget),
    False for a failure that every later sample would have hit (a rejected key)."""

    model_config = ConfigDict(frozen=True)

    reason: str
    planned: bool


class ClaimRecord(BaseModel):
    """A claim with the verdict it received: the unit every score is explained by."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    span: tuple[int, int] | None
    verdict: Verdict
    evidence: str
    context_index: int | None
    reason: str
    quote_found: bool | None = None
    agreement: float | None = None
    entailment: float | None = None
    """The judge's probability that the contexts support the claim, from judges that give one
    (`offline:learned`, `nli:`, `cascade`); None from the others."""


class SampleResult(BaseModel):
    """One sample's outcome: scores, claims, or the error that stopped it."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: SampleStatus
    category: str | None = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    results: dict[str, MetricResult] = Field(default_factory=dict)
    claims: tuple[ClaimRecord, ...] = ()
    error: str | None = None
    latency_ms: float | None = None
    group_values: dict[str, str | None] = Field(default_factory=dict)
    """The sample's values of the run's `group_by` metadata keys."""
    steps: tuple[StepRecord, ...] = ()
    """With a pipeline: each step's latency, judge calls and cost for this sample."""
    response: str | None = None
    """The response that was judged, so its claims can be shown in place."""
    contexts: tuple[Context, ...] = ()
    """With a pipeline: the contexts it retrieved (stored datasets keep their own)."""


class MetricSummary(BaseModel):
    """A metric over the run. `mean` is None when no sample could be scored, never NaN.

    `ci_low`/`ci_high` bound the mean with 95 % confidence (percentile bootstrap over the
    scored samples); `sub_scores` aggregates the metric's further figures the same way.
    """

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    scored: int
    not_scored: int
    not_applicable: int = 0
    """Of `not_scored`, the samples the metric does not apply to (no reference, …)."""
    passed: int
    failed: int
    threshold: float
    higher_is_better: bool = True
    sub_scores: dict[str, Estimate] = Field(default_factory=dict)


class GroupStats(BaseModel):
    """One metric within one group of samples (a category, a metadata value)."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    scored: int
    not_scored: int


class LatencySummary(BaseModel):
    """Percentiles of the samples' latency in milliseconds, over those that report one."""

    model_config = ConfigDict(frozen=True)

    count: int
    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None


class Report(BaseModel):
    """Everything a run produced. Serialise it with `to_dict()` or `to_json()`."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    timestamp: str
    judge: str
    pipeline: str | None = None
    """The pipeline that produced the responses; None when they came with the dataset."""
    judge_details: dict[str, Any] = Field(default_factory=dict)
    """Prompt versions, calls, tokens and cost, for judges that report them."""
    vera_version: str
    queries_evaluated: int
    metrics: dict[str, float | None]
    """Seed 001's `metrics` block: each metric's mean, plus `f1_score` (grounding F1) and
    `latency_p99_ms` where known. Those two are not metrics (see `RUN_FIGURES`); iterate
    `metric_summary` for the metrics alone."""
    metric_summary: dict[str, MetricSummary]
    per_category_breakdown: dict[str, dict[str, float | int | None]]
    """Seed 001's shape: per category, each metric's mean and the count of scored samples."""
    breakdowns: dict[str, dict[str, dict[str, GroupStats]]] = Field(default_factory=dict)
    """By grouping key ("category", and each `group_by` metadata key), then value, then
    metric: mean, confidence interval and counts."""
    latency: LatencySummary | None = None
    latency_by_category: dict[str, LatencySummary] = Field(default_factory=dict)
    counts: dict[str, int]
    samples: tuple[SampleResult, ...]
    invalid_rows: tuple[InvalidRow, ...] = ()
    stopped: RunStop | None = None
    """Set when the run stopped early; its unevaluated samples have status "skipped"."""
    baseline_comparison: dict[str, Any] | None = None
    """With baselines: each baseline's metric means, the improvement over each (seed 001's
    "+41.5%"), and a paired 95 % interval and p-value per metric (`significance`)."""
    categorical_tests: dict[str, str] | None = None
    """With `--check-laws`: seed 001's laws on the evaluated pipeline, each PASS or FAIL."""

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data; what `--output` writes."""
        return self.model_dump(mode="json")

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON text (strict JSON: no NaN can appear)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    def sample(self, sample_id: str) -> SampleResult:
        """The result for one sample id."""
        for result in self.samples:
            if result.id == sample_id:
                return result
        raise KeyError(sample_id)

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one row per sample, for analysis in a notebook.

        Columns: `id`, `status`, `category`, `error`, `latency_ms`; per metric of
        `metric_summary` its score (NaN where not scored) and `<metric>_passed` (True, False or
        None); then each `group_by` key. Needs pandas (`pip install 'vera-eval[pandas]'`).
        """
        pandas = _pandas()
        groups = self._group_keys()
        columns = [*SAMPLE_COLUMNS]
        for name in self.metric_summary:
            columns += [name, f"{name}_passed"]
        group_columns = {key: _free_name(key, columns) for key in groups}
        columns += group_columns.values()
        rows = [_sample_row(r, self.metric_summary, group_columns) for r in self.samples]
        return pandas.DataFrame(rows, columns=columns)

    def claims_to_pandas(self) -> Any:
        """A pandas DataFrame with one row per claim over all samples, with its verdict and
        evidence (`CLAIM_COLUMNS`). Needs pandas (`pip install 'vera-eval[pandas]'`)."""
        pandas = _pandas()
        rows = [_claim_row(r.id, c) for r in self.samples for c in r.claims]
        return pandas.DataFrame(rows, columns=list(CLAIM_COLUMNS))

    def _group_keys(self) -> list[str]:
        # The run's group_by keys are the breakdowns beside "category"; a sample can only
        # hold those, but a report edited by hand might hold more, and they are kept too.
        keys = [k for k in self.breakdowns if k != "category"]
        for result in self.samples:
            keys += [k for k in result.group_values if k not in keys]
        return keys


def _pandas() -> Any:
    # importlib, not `import pandas`: pandas ships no type information, and is optional.
    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise ConfigError(
            "tables of results need pandas: pip install 'vera-eval[pandas]'"
        ) from None


def _free_name(key: str, taken: Sequence[str]) -> str:
    """A group_by key's column name, prefixed where it would clash with another column."""
    return key if key not in taken else f"group_{key}"


def _sample_row(
    result: SampleResult, metrics: Iterable[str], group_columns: dict[str, str]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": result.id,
        "status": result.status.value,
        "category": result.category,
        "error": result.error,
        "latency_ms": result.latency_ms,
    }
    scored = result.status is SampleStatus.SCORED
    for name in metrics:
        metric = result.results.get(name) if scored else None
        row[name] = result.scores.get(name) if scored else None
        row[f"{name}_passed"] = metric.passed if metric is not None else None
    for key, column in group_columns.items():
        row[column] = result.group_values.get(key)
    return row


def _claim_row(sample_id: str, claim: ClaimRecord) -> dict[str, Any]:
    start, end = claim.span if claim.span is not None else (None, None)
    return {
        "sample_id": sample_id,
        "claim_id": claim.id,
        "text": claim.text,
        "verdict": claim.verdict.value,
        "evidence": claim.evidence,
        "context_index": claim.context_index,
        "reason": claim.reason,
        "quote_found": claim.quote_found,
        "agreement": claim.agreement,
        "entailment": claim.entailment,
        "span_start": start,
        "span_end": end,
    }


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
        stopped=stopped,
    )
