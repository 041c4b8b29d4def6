"""The result of a run: per-sample results aggregated into a `Report`.

The result types themselves (`Report`, `SampleResult`, `MetricSummary`, ...) are plain data in
`vera._types._report`, so that the renderers and the run store can read a report without
importing what produced it; they are re-exported here with `build_report`, which computes one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from vera._results._answers import AnswerTally
from vera._results._turns import TurnTally
from vera._stats._calibration import CalibrationTally
from vera._stats._stats import ValueCounts
from vera._types._claims import Verdict
from vera._types._report import (
    F1_SCORE,
    LATENCY_P99,
    Counts,
    GroupStats,
    InvalidRow,
    LatencySummary,
    MetricSummary,
    Report,
    RunStop,
    SampleResult,
    SampleStatus,
)
from vera._types._results import MetricStatus

ResultSource = Callable[[], Iterable[SampleResult]]
"""Where a streamed run's per-sample results are read from, in dataset order, each call a new
pass (the run store's `iter_results`); a run that keeps them has them in `Report.samples`."""

UNCATEGORISED = "uncategorized"


REASONS_KEPT = 20
"""The most distinct not-applicable reasons a metric's summary keeps; the rest count together."""
OTHER_REASONS = "other reasons"


@dataclass
class _MetricTally:
    """One metric over the run, as samples arrive: its scores and pass/fail counts."""

    scored: ValueCounts = field(default_factory=ValueCounts)
    subs: dict[str, ValueCounts] = field(default_factory=dict)
    not_scored: int = 0
    not_applicable: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    """Why the metric did not apply, by reason (a metric gives few distinct ones)."""
    passed: int = 0
    failed: int = 0

    def add(self, result: SampleResult, name: str) -> None:
        metric = result.results.get(name)
        if result.status is not SampleStatus.SCORED or metric is None or metric.score is None:
            self.not_scored += 1
            if metric is not None and metric.status is MetricStatus.NOT_APPLICABLE:
                self.not_applicable += 1
                # A plugin's reason may differ per sample: past a few, the rest are counted
                # together, so memory does not grow with the samples.
                known = metric.reason in self.reasons or len(self.reasons) < REASONS_KEPT
                self.reasons[metric.reason if known else OTHER_REASONS] += 1
            return
        self.scored.add(metric.score)
        for key, value in metric.sub_scores.items():
            self.subs.setdefault(key, ValueCounts()).add(value)
        if metric.passed:
            self.passed += 1
        else:
            self.failed += 1

    def summary(self, threshold: float, higher_is_better: bool) -> MetricSummary:
        overall = self.scored.estimate()
        return MetricSummary(
            mean=overall.mean,
            ci_low=overall.ci_low,
            ci_high=overall.ci_high,
            scored=len(self.scored),
            not_scored=self.not_scored,
            not_applicable=self.not_applicable,
            not_applicable_reasons=dict(
                sorted(self.reasons.items(), key=lambda item: (-item[1], item[0]))
            ),
            passed=self.passed,
            failed=self.failed,
            threshold=threshold,
            higher_is_better=higher_is_better,
            sub_scores={key: values.estimate() for key, values in sorted(self.subs.items())},
        )


@dataclass
class _GroupTally:
    """The samples of one group (a category, a metadata value): how many, and their scores."""

    members: int = 0
    scores: dict[str, ValueCounts] = field(default_factory=dict)
    scored_members: int = 0

    def add(self, result: SampleResult, names: Sequence[str]) -> None:
        self.members += 1
        if result.status is not SampleStatus.SCORED:
            return
        self.scored_members += 1
        for name in names:
            value = result.scores.get(name)
            if value is not None:
                self.scores.setdefault(name, ValueCounts()).add(value)

    def stats(self, name: str) -> GroupStats:
        values = self.scores.get(name, ValueCounts())
        found = values.estimate()
        return GroupStats(
            mean=found.mean,
            ci_low=found.ci_low,
            ci_high=found.ci_high,
            scored=len(values),
            not_scored=self.members - len(values),
        )

    def category_row(self, names: Sequence[str]) -> dict[str, float | int | None]:
        """Seed 001's per-category row: each metric's mean over the scored samples, and how
        many were scored."""
        row: dict[str, float | int | None] = {
            name: self.scores.get(name, ValueCounts()).mean() for name in names
        }
        row["count"] = self.scored_members
        return row


def _latency_summary(values: ValueCounts) -> LatencySummary | None:
    if not values:
        return None
    return LatencySummary(
        count=len(values),
        p50=values.percentile(50),
        p95=values.percentile(95),
        p99=values.percentile(99),
        mean=values.mean(),
    )


_SUPPORTED = frozenset({Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED})


@dataclass
class _ClaimTally:
    """What the report says about claims over the run: draw agreement, quotes not found, and
    claims not traceable to the response.

    Counted from the claim records rather than kept by the judge, so a resumed run counts the
    samples it did not judge again.
    """

    agreements: int = 0
    agreement_sum: float = 0.0
    unanimous: int = 0
    quotes_checked: bool = False
    supported: int = 0
    supported_unquoted: int = 0
    traced: int = 0
    untraceable: int = 0

    def add(self, result: SampleResult) -> None:
        for claim in result.claims:
            if claim.traceable is not None:
                self.traced += 1
                self.untraceable += not claim.traceable
            if claim.agreement is not None:
                self.agreements += 1
                self.agreement_sum += claim.agreement
                self.unanimous += claim.agreement == 1.0
            if claim.quote_found is not None:
                self.quotes_checked = True
                # A supporting verdict without evidence is NO_EVIDENCE by then (quote_found
                # False, `vera.judges._evidence`): it was given as supported, and counts so.
                demoted = claim.verdict is Verdict.NO_EVIDENCE and claim.quote_found is False
                if claim.verdict in _SUPPORTED or demoted:
                    self.supported += 1
                    self.supported_unquoted += claim.quote_found is False

    def details(self) -> dict[str, Any]:
        """`judge_details` entries: how often the judge's draws agreed (several draws), and
        the supported verdicts whose quote was not found in the cited context out of those
        checked, and the claims that cannot come from the response out of those traced. A
        judge that checks no quote or traces no claim (the offline one) gets no count: 0 would
        claim a check that never ran."""
        found: dict[str, Any] = {}
        if self.agreements:
            found["agreement"] = {
                "claims": self.agreements,
                "mean": self.agreement_sum / self.agreements,
                "unanimous": self.unanimous / self.agreements,
            }
        if self.quotes_checked:
            found["quotes_not_found"] = {
                "supported": self.supported_unquoted,
                "claims": self.supported,
            }
        if self.traced:
            found["untraceable_claims"] = {"untraceable": self.untraceable, "claims": self.traced}
        return found


class ReportBuilder:
    """Aggregates per-sample results into a `Report` as they arrive, one at a time.

    Nothing per sample is kept: each figure's values are counted by distinct value
    (`ValueCounts`), so a run's memory does not grow with its results; the results themselves
    go to the run store as they finish. Failed samples are counted, not averaged. The
    aggregates do not depend on the order the samples arrive in (counts are sorted, sums are
    exact).
    """

    def __init__(
        self,
        thresholds: Mapping[str, float],
        *,
        lower_is_better: Iterable[str] = (),
        group_by: Sequence[str] = (),
    ) -> None:
        self.thresholds = dict(thresholds)
        self.lower = set(lower_is_better)
        self.group_by = tuple(group_by)
        self.names = list(self.thresholds)
        self._metrics = {name: _MetricTally() for name in self.names}
        self._groups: dict[str, dict[str, _GroupTally]] = {
            key: defaultdict(_GroupTally) for key in ("category", *self.group_by)
        }
        self._latency = ValueCounts()
        self._latency_by_category: dict[str, ValueCounts] = defaultdict(ValueCounts)
        self._claims = _ClaimTally()
        self._f1 = ValueCounts()
        self._statuses: Counter[SampleStatus] = Counter()
        self._calibration = CalibrationTally()
        self._turns = TurnTally()
        self._answers = AnswerTally()

    def add(self, result: SampleResult) -> None:
        """Count one sample's result in every aggregate."""
        self._statuses[result.status] += 1
        for name, tally in self._metrics.items():
            tally.add(result, name)
        for key, groups in self._groups.items():
            value = result.category if key == "category" else result.group_values.get(key)
            groups[UNCATEGORISED if value is None else str(value)].add(result, self.names)
        if result.latency_ms is not None:
            self._latency.add(result.latency_ms)
            self._latency_by_category[result.category or UNCATEGORISED].add(result.latency_ms)
        self._claims.add(result)
        self._calibration.add_result(result)
        self._turns.add(result)
        self._answers.add(result)
        precision = result.scores.get("grounding_precision")
        recall = result.scores.get("grounding_recall")
        if result.status is SampleStatus.SCORED and precision is not None and recall is not None:
            total = precision + recall
            self._f1.add(0.0 if total == 0 else 2 * precision * recall / total)

    def counts(self, invalid_rows: int = 0) -> Counts:
        """How many samples ended in each status, and the invalid rows beside them."""
        statuses = self._statuses
        return Counts(
            total=sum(statuses.values()),
            scored=statuses[SampleStatus.SCORED],
            errors=statuses[SampleStatus.ERROR],
            needs_pipeline=statuses[SampleStatus.NEEDS_PIPELINE],
            skipped=statuses[SampleStatus.SKIPPED],
            invalid_rows=invalid_rows,
        )

    def _summaries(self) -> dict[str, MetricSummary]:
        return {
            name: self._metrics[name].summary(threshold, name not in self.lower)
            for name, threshold in self.thresholds.items()
        }

    def _run_figures(
        self, summary: dict[str, MetricSummary], latency: LatencySummary | None
    ) -> dict[str, float | None]:
        """Seed 001's figures beside the metric means: `f1_score` and `latency_p99_ms`, each
        where known; a metric of the same name keeps its place.

        Without a `grounding_f1` metric, F1 is rebuilt from the samples scored on both
        precision and recall: their per-sample F1, averaged (the harmonic mean of the two
        means would differ, as they average over different samples).
        """
        figures: dict[str, float | None] = {}
        if "grounding_f1" in summary:
            figures[F1_SCORE] = summary["grounding_f1"].mean
        elif "grounding_precision" in summary and "grounding_recall" in summary:
            figures[F1_SCORE] = self._f1.mean()
        if latency is not None:
            figures[LATENCY_P99] = latency.p99
        return {key: value for key, value in figures.items() if key not in summary}

    def _breakdowns(self) -> dict[str, dict[str, dict[str, GroupStats]]]:
        return {
            key: {
                value: {name: groups[value].stats(name) for name in self.names}
                for value in sorted(groups)
            }
            for key, groups in self._groups.items()
        }

    def _per_category(self) -> dict[str, dict[str, float | int | None]]:
        categories = self._groups["category"]
        return {
            category: categories[category].category_row(self.names)
            for category in sorted(categories)
            if categories[category].scored_members
        }

    def build(
        self,
        *,
        dataset: str,
        judge: str,
        version: str,
        judge_details: dict[str, Any] | None = None,
        samples: Sequence[SampleResult] = (),
        invalid_rows: Sequence[InvalidRow] = (),
        unrecognised_fields: Iterable[str] = (),
        started: datetime | None = None,
        stopped: RunStop | None = None,
        pipeline: str | None = None,
    ) -> Report:
        """The report of every result added so far. `samples` are the results to keep in it
        (in dataset order), or none when they were streamed to the run store."""
        summary = self._summaries()
        counts = self.counts(len(invalid_rows))
        latency = _latency_summary(self._latency)
        return Report(
            dataset=dataset,
            timestamp=(started or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            judge=judge,
            pipeline=pipeline,
            judge_details={**(judge_details or {}), **self._claims.details()},
            vera_version=version,
            queries_evaluated=counts.scored,
            metrics={
                **{name: s.mean for name, s in summary.items()},
                **self._run_figures(summary, latency),
            },
            metric_summary=summary,
            per_category_breakdown=self._per_category(),
            breakdowns=self._breakdowns(),
            latency=latency,
            latency_by_category={
                category: found
                for category in sorted(self._latency_by_category)
                if (found := _latency_summary(self._latency_by_category[category])) is not None
            },
            counts=counts,
            samples=tuple(samples),
            invalid_rows=tuple(invalid_rows),
            unrecognised_fields=tuple(sorted(unrecognised_fields)),
            stopped=stopped,
            calibration=self._calibration.calibration(),
            conversations=self._turns.summary(),
            answers=self._answers.summary(),
        )


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
    """Aggregate per-sample results into a report that keeps them (see `ReportBuilder`)."""
    builder = ReportBuilder(thresholds, lower_is_better=lower_is_better, group_by=group_by)
    for result in results:
        builder.add(result)
    return builder.build(
        dataset=dataset,
        judge=judge,
        version=version,
        judge_details=judge_details,
        samples=results,
        invalid_rows=invalid_rows,
        unrecognised_fields=unrecognised_fields,
        started=started,
        stopped=stopped,
        pipeline=pipeline,
    )
