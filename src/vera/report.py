"""The result of a run: per-sample results and their aggregates.

`Report.to_dict()` is exactly the JSON that `vera eval --output` writes. Its top level follows
seed 001 (dataset, timestamp, queries_evaluated, metrics, per_category_breakdown) and adds the
samples with their claims, so every number can be traced back to claim verdicts.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vera.datasets.loader import InvalidRow
from vera.metrics.base import MetricResult
from vera.types import Verdict

__all__ = [
    "ClaimRecord",
    "MetricSummary",
    "Report",
    "RunStop",
    "SampleResult",
    "SampleStatus",
    "build_report",
]

UNCATEGORISED = "uncategorized"


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


class MetricSummary(BaseModel):
    """A metric over the run. `mean` is None when no sample could be scored, never NaN."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    scored: int
    not_scored: int
    passed: int
    failed: int
    threshold: float


class Report(BaseModel):
    """Everything a run produced. Serialise it with `to_dict()` or `to_json()`."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    timestamp: str
    judge: str
    judge_details: dict[str, Any] = Field(default_factory=dict)
    """Prompt versions, calls, tokens and cost, for judges that report them."""
    vera_version: str
    queries_evaluated: int
    metrics: dict[str, float | None]
    metric_summary: dict[str, MetricSummary]
    per_category_breakdown: dict[str, dict[str, float | int | None]]
    counts: dict[str, int]
    samples: tuple[SampleResult, ...]
    invalid_rows: tuple[InvalidRow, ...] = ()
    stopped: RunStop | None = None
    """Set when the run stopped early; its unevaluated samples have status "skipped"."""

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


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise_metric(name: str, results: Iterable[SampleResult], threshold: float) -> MetricSummary:
    scored: list[float] = []
    not_scored = passed = failed = 0
    for result in results:
        metric = result.results.get(name)
        if result.status is not SampleStatus.SCORED or metric is None or metric.score is None:
            not_scored += 1
            continue
        scored.append(metric.score)
        if metric.passed:
            passed += 1
        else:
            failed += 1
    return MetricSummary(
        mean=_mean(scored),
        scored=len(scored),
        not_scored=not_scored,
        passed=passed,
        failed=failed,
        threshold=threshold,
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


def build_report(
    *,
    dataset: str,
    judge: str,
    version: str,
    judge_details: dict[str, Any] | None = None,
    thresholds: dict[str, float],
    results: Sequence[SampleResult],
    invalid_rows: Sequence[InvalidRow] = (),
    started: datetime | None = None,
    stopped: RunStop | None = None,
) -> Report:
    """Aggregate per-sample results into a report; failed samples are counted, not averaged."""
    summary = {name: summarise_metric(name, results, t) for name, t in thresholds.items()}
    statuses = [r.status for r in results]
    counts = {
        "total": len(results),
        "scored": statuses.count(SampleStatus.SCORED),
        "errors": statuses.count(SampleStatus.ERROR),
        "needs_pipeline": statuses.count(SampleStatus.NEEDS_PIPELINE),
        "skipped": statuses.count(SampleStatus.SKIPPED),
        "invalid_rows": len(invalid_rows),
    }
    details = dict(judge_details or {})
    agreement = _agreement(results)
    if agreement is not None:
        details["agreement"] = agreement
    timestamp = (started or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Report(
        dataset=dataset,
        timestamp=timestamp,
        judge=judge,
        judge_details=details,
        vera_version=version,
        queries_evaluated=counts["scored"],
        metrics={name: s.mean for name, s in summary.items()},
        metric_summary=summary,
        per_category_breakdown=_per_category(results, list(thresholds)),
        counts=counts,
        samples=tuple(results),
        invalid_rows=tuple(invalid_rows),
        stopped=stopped,
    )
