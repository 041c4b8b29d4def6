"""CI gates: what makes `vera eval` exit 1, each failure saying what failed and by how much.

- every metric's mean against its threshold, in the metric's direction (`--threshold` and
  the metrics' own thresholds);
- per-metric and per-category thresholds and latency limits from `[gates]` in `vera.toml`;
- with a stored run to compare with, a significant drop on any metric: the paired difference
  over the same sample ids has its 95 % interval entirely on the bad side and p < 0.05, so the
  judge's own noise does not fail a build.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from vera._results._comparison import Pairs, compare_reports, significant
from vera._types._report import Report


class GateConfig(BaseModel):
    """The `[gates]` table of `vera.toml`.

    [gates]
    faithfulness = 0.85            # a metric's mean, in its direction
    hallucination_rate = 0.05
    latency_p95_ms = 2000
    [gates.categories.unanswerable]
    abstention = 1.0
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    latency_p95_ms: float | None = Field(default=None, gt=0)
    latency_p99_ms: float | None = Field(default=None, gt=0)
    categories: dict[str, dict[str, float]] = Field(default_factory=dict)

    @property
    def metrics(self) -> dict[str, float]:
        """The per-metric thresholds: every other key of the table."""
        extra = self.model_extra or {}
        return {k: float(v) for k, v in extra.items() if isinstance(v, int | float)}


def _misses(name: str, mean: float, mark: float, higher_is_better: bool) -> str | None:
    if higher_is_better and mean < mark:
        return f"{name}: mean {mean:.3f} is below {mark:.3f} (short by {mark - mean:.3f})"
    if not higher_is_better and mean > mark:
        return f"{name}: mean {mean:.3f} is above {mark:.3f} (over by {mean - mark:.3f})"
    return None


def gate_failures(report: Report, config: GateConfig | None = None) -> list[str]:
    """Every gate the report fails, as lines a person can act on; empty when all pass."""
    config = config or GateConfig()
    failures: list[str] = []
    for name, summary in report.metric_summary.items():
        mark = config.metrics.get(name, summary.threshold)
        if summary.mean is None:
            if summary.not_scored > summary.not_applicable:
                failures.append(f"{name}: no sample could be scored")
            continue
        missed = _misses(name, summary.mean, mark, summary.higher_is_better)
        if missed:
            failures.append(missed)
    unknown = sorted(set(config.metrics) - set(report.metric_summary))
    failures.extend(
        f"{name}: gated in vera.toml but not computed (add -m {name})" for name in unknown
    )
    failures.extend(_category_failures(report, config.categories))
    latency = report.latency
    for label, limit in (("p95", config.latency_p95_ms), ("p99", config.latency_p99_ms)):
        value = getattr(latency, label) if latency is not None else None
        if limit is not None and value is not None and value > limit:
            failures.append(f"latency {label}: {value:.0f} ms is above {limit:.0f} ms")
    return failures


def _category_failures(report: Report, categories: Mapping[str, Mapping[str, float]]) -> list[str]:
    failures = []
    groups = report.breakdowns.get("category", {})
    for category, marks in categories.items():
        for name, mark in marks.items():
            stats = groups.get(category, {}).get(name)
            summary = report.metric_summary.get(name)
            if stats is None or stats.mean is None or summary is None:
                failures.append(f"{name} [{category}]: no scored sample in this category")
                continue
            missed = _misses(f"{name} [{category}]", stats.mean, mark, summary.higher_is_better)
            if missed:
                failures.append(missed)
    return failures


def regression_failures(
    report: Report, previous: Report, run_id: str, *, pairs: Pairs | None = None
) -> list[str]:
    """Metrics that got significantly worse than in `previous` (paired over shared samples:
    `pairs`, read from the run store, else the reports' samples)."""
    failures = []
    for name, c in compare_reports(report, previous, pairs).items():
        summary = report.metric_summary.get(name)
        if summary is None or c.difference is None or c.p_value is None:
            continue
        worse = -c.difference if summary.higher_is_better else c.difference
        if worse > 0 and significant(c):
            failures.append(
                f"{name}: {c.baseline_mean:.3f} -> {c.system_mean:.3f} against run {run_id} "
                f"(change {c.difference:+.3f}, 95% CI {c.ci_low:+.3f} to {c.ci_high:+.3f}, "
                f"p={c.p_value:.3f}, {c.paired_samples} paired samples)"
            )
    return failures
