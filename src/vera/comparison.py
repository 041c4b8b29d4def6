"""Is a difference between two pipelines real? Paired comparisons on the same samples.

For each metric, only samples scored in both reports count, paired by id. The mean of the
per-sample differences gets a 95 % paired bootstrap interval, and a two-sided p-value from a
sign-flip permutation test (under "no difference", each paired difference is as likely to
have either sign). Both are seeded, so the same reports give the same figures.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from vera.report import Report, SampleStatus
from vera.stats import bootstrap_ci

__all__ = [
    "MetricComparison",
    "baseline_comparison",
    "compare_reports",
    "improvement",
    "most_changed",
    "relative_change",
    "significant",
]

PERMUTATIONS = 2000


class MetricComparison(BaseModel):
    """System minus baseline on one metric, over the samples both scored."""

    model_config = ConfigDict(frozen=True)

    system_mean: float | None
    baseline_mean: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    paired_samples: int
    improvement: str | None
    """Relative change of the mean, as seed 001 writes it ("+41.5%")."""


def improvement(system: float | None, baseline: float | None) -> str | None:
    """The relative change from `baseline` to `system` ("+41.5%"); None when undefined."""
    if system is None or baseline is None or baseline == 0:
        return None
    return f"{(system - baseline) / abs(baseline) * 100:+.1f}%"


RELATIVE_FLOOR = 0.05
"""The smallest baseline mean, in size, a relative change is shown against: below it a ratio
overstates a small move (0.010 to 0.000 is not a "-100 %" change worth a headline)."""


def relative_change(system: float | None, baseline: float | None) -> str | None:
    """The relative change to show a person ("+41.5 %"); None where it would mislead: no
    means, or a baseline mean within `RELATIVE_FLOOR` of 0 (show the difference instead)."""
    if system is None or baseline is None or abs(baseline) < RELATIVE_FLOOR:
        return None
    return f"{(system - baseline) / abs(baseline) * 100:+.1f} %"


def significant(comparison: MetricComparison) -> bool:
    """Whether the paired 95 % interval of the difference excludes 0: only then is a change
    shown as better or worse (coloured); otherwise it is within the judge's noise."""
    low, high = comparison.ci_low, comparison.ci_high
    return low is not None and high is not None and (low > 0 or high < 0)


def _scores(report: Report, metric: str) -> dict[str, float]:
    return {
        r.id: score
        for r in report.samples
        if r.status is SampleStatus.SCORED and (score := r.scores.get(metric)) is not None
    }


def _p_value(differences: Sequence[float], seed: int = 0) -> float:
    observed = abs(sum(differences))
    if observed == 0:
        return 1.0
    rng = random.Random(seed)
    extreme = 0
    for _ in range(PERMUTATIONS):
        flipped = sum(d if rng.random() < 0.5 else -d for d in differences)
        if abs(flipped) >= observed - 1e-12:
            extreme += 1
    # Counting the observed arrangement itself keeps the estimate from ever being 0.
    return (extreme + 1) / (PERMUTATIONS + 1)


def compare_reports(system: Report, baseline: Report) -> dict[str, MetricComparison]:
    """Per metric both reports have: means, paired difference with interval and p-value.

    Only metrics count: the figures seed 001 adds to `metrics` (`f1_score`, `latency_p99_ms`)
    have no per-sample scores to pair.
    """
    comparisons = {}
    for metric, summary in system.metric_summary.items():
        theirs_summary = baseline.metric_summary.get(metric)
        if theirs_summary is None:
            continue
        ours, theirs = _scores(system, metric), _scores(baseline, metric)
        shared = sorted(set(ours) & set(theirs))
        differences = [ours[i] - theirs[i] for i in shared]
        interval = bootstrap_ci(differences)
        system_mean, baseline_mean = summary.mean, theirs_summary.mean
        comparisons[metric] = MetricComparison(
            system_mean=system_mean,
            baseline_mean=baseline_mean,
            difference=sum(differences) / len(differences) if differences else None,
            ci_low=interval[0] if interval else None,
            ci_high=interval[1] if interval else None,
            p_value=_p_value(differences) if differences else None,
            paired_samples=len(shared),
            improvement=improvement(system_mean, baseline_mean),
        )
    return comparisons


def baseline_comparison(system: Report, baselines: dict[str, Report]) -> dict[str, Any]:
    """Seed 001's `baseline_comparison` block, for any number of baselines.

    Each baseline's metric means under its name ("naive_rag"), then
    `improvement_over_baseline` and `significance` keyed by baseline. Metrics only: the
    figures beside the means in `Report.metrics` (`f1_score`, `latency_p99_ms`) are left out.
    """
    block: dict[str, Any] = {}
    improvements: dict[str, dict[str, str | None]] = {}
    significance: dict[str, dict[str, Any]] = {}
    for name, baseline in baselines.items():
        key = name.replace("-", "_")
        block[key] = {metric: s.mean for metric, s in baseline.metric_summary.items()}
        compared = compare_reports(system, baseline)
        improvements[key] = {metric: c.improvement for metric, c in compared.items()}
        significance[key] = {metric: c.model_dump() for metric, c in compared.items()}
    block["improvement_over_baseline"] = improvements
    block["significance"] = significance
    return block


def most_changed(before: Report, after: Report, top: int = 5) -> list[str]:
    """The `top` samples whose scores moved most between two runs, with their claims' verdicts
    after, as lines a person can read."""
    old = {r.id: r for r in before.samples}
    moves: list[tuple[float, str, str, float, float]] = []
    for result in after.samples:
        previous = old.get(result.id)
        if previous is None:
            continue
        for metric, score in result.scores.items():
            was = previous.scores.get(metric)
            if score is not None and was is not None and score != was:
                moves.append((abs(score - was), result.id, metric, was, score))
    moves.sort(key=lambda m: (-m[0], m[1], m[2]))
    lines = []
    by_id = {r.id: r for r in after.samples}
    for _, sample_id, metric, was, score in moves[:top]:
        lines.append(f"{sample_id} · {metric} {was:.3f} -> {score:.3f}")
        lines.extend(
            f"    {claim.verdict.value}: {claim.text}" for claim in by_id[sample_id].claims
        )
    return lines
