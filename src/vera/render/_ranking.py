"""Which failing samples are worst, for the lists the terminal and Markdown summaries cut
short (the HTML report lists every sample, failing first as well: `samples.order_key`).

A metric's score says nothing by itself: a hallucination rate of 0.0 is the best there is, a
faithfulness of 0.0 the worst. So a sample is never ranked by its raw scores. It is ranked by
how many metrics it fails, an unfaithful answer verdict counting as one (failing first), then
by its worst margin: how far its score sits on the wrong side of (or past) each metric's
threshold, in that metric's direction
(`MetricSummary.higher_is_better`). A faithfulness of 0.2 against ≥ 0.5 has margin -0.3; a
hallucination rate of 0.6 against ≤ 0.2 has margin -0.4 and is worse.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from vera._types._report import MetricSummary, SampleResult, SampleStatus

WorstKey = tuple[int, float, int]
"""(minus the failed metrics, the worst margin, the read order): smaller is worse."""


def failed_metrics(result: SampleResult) -> int:
    """What the sample fails: each metric that missed its threshold, and an unfaithful
    answer verdict (`SampleResult.verdict`) as one more."""
    unfaithful = result.verdict is not None and result.verdict.passed is False
    return sum(1 for r in result.results.values() if r.passed is False) + unfaithful


def margin(result: SampleResult, summaries: Mapping[str, MetricSummary]) -> float:
    """The sample's worst margin over its scored metrics, in each metric's direction: below 0
    where a score misses its threshold; infinite when no metric scored it."""
    margins = []
    for name, found in result.results.items():
        summary = summaries.get(name)
        if found.score is None or not math.isfinite(found.score):
            continue
        higher = summary.higher_is_better if summary is not None else True
        over = found.score - found.threshold
        margins.append(over if higher else -over)
    return min(margins, default=math.inf)


def worst_key(result: SampleResult, summaries: Mapping[str, MetricSummary], index: int) -> WorstKey:
    """Where the sample ranks, worst first (see the module's docstring)."""
    return (-failed_metrics(result), margin(result, summaries), index)


@dataclass
class FailingSamples:
    """The `shown` worst failing samples of a run read once, and how many failed in all,
    holding no more than a few times `shown` samples however many there are."""

    summaries: Mapping[str, MetricSummary]
    shown: int
    total: int = 0
    _kept: list[tuple[WorstKey, SampleResult]] = field(default_factory=list)

    def add(self, result: SampleResult, index: int) -> None:
        if result.status is not SampleStatus.SCORED or not failed_metrics(result):
            return
        self.total += 1
        self._kept.append((worst_key(result, self.summaries, index), result))
        if len(self._kept) > 4 * max(self.shown, 1):
            self._kept = heapq.nsmallest(self.shown, self._kept, key=lambda pair: pair[0])

    def worst(self) -> list[SampleResult]:
        """The failing samples to show, worst first."""
        kept = heapq.nsmallest(self.shown, self._kept, key=lambda pair: pair[0])
        return [result for _, result in kept]

    @property
    def left_out(self) -> int:
        return max(self.total - self.shown, 0)

    @classmethod
    def of(
        cls, results: Iterable[SampleResult], summaries: Mapping[str, MetricSummary], shown: int
    ) -> FailingSamples:
        found = cls(summaries, shown)
        for index, result in enumerate(results):
            found.add(result, index)
        return found


EVERY_SAMPLE = (
    "every sample is in the JSON and HTML reports (-o report.json or -o report.html; from the "
    "run history, vera report RUN_ID -o report.html)"
)
EVERY_INVALID_ROW = "every invalid row is in the JSON report's invalid_rows (-o report.json)"


def more_line(left_out: int, one: str, many: str, where: str = EVERY_SAMPLE) -> str:
    """What a cut list says of the rest: how many (`one` or `many` of what it lists), and
    `where` every one of them is."""
    return f"… and {left_out} more {one if left_out == 1 else many}: {where}"
