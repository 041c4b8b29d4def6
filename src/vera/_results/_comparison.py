"""Is a difference between two pipelines real? Paired comparisons on the same samples.

For each metric, only samples scored in both reports count, paired by id. The mean of the
per-sample differences gets a 95 % paired bootstrap interval, and a two-sided p-value from a
sign-flip permutation test (under "no difference", each paired difference is as likely to
have either sign). Both are seeded, so the same reports give the same figures.
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vera._results._outcome import SampleOutcome, sample_outcome
from vera._stats._stats import BOOTSTRAP_LIMIT, bootstrap_ci
from vera._types import (
    BaselineComparison,
    MeasuredPlan,
    MetricComparison,
    Verdict,
    describe_differences,
)
from vera._types._report import ClaimRecord, MetricSummary, Report, SampleResult, SampleStatus

PERMUTATIONS = 2000


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


SIGNIFICANCE = 0.05


def significant(comparison: MetricComparison) -> bool:
    """Whether the change is more than noise: the paired 95 % interval of the difference
    excludes 0 and the permutation p-value is under `SIGNIFICANCE` (one pair's "interval" is
    a single point, which excludes 0 at p = 1). Only then is a change shown as better or
    worse, and coloured; the same test as the regression gate's."""
    low, high, p_value = comparison.ci_low, comparison.ci_high, comparison.p_value
    if low is None or high is None or p_value is None or p_value >= SIGNIFICANCE:
        return False
    return low > 0 or high < 0


Pairs = Iterable[tuple[SampleResult, SampleResult]]
"""Two results of one sample (system, baseline), in sample-id order: from memory
(`pairs_in_memory`) or read from the run store (`RunStore.paired`)."""


def pairs_in_memory(
    system: Report, baseline: Report
) -> Iterator[tuple[SampleResult, SampleResult]]:
    """The samples both reports hold, paired by id, in id order."""
    theirs = {r.id: r for r in baseline.samples}
    ours = {r.id: r for r in system.samples}
    for sample_id in sorted(set(ours) & set(theirs)):
        yield ours[sample_id], theirs[sample_id]


def _score(result: SampleResult, metric: str) -> float | None:
    return result.scores.get(metric) if result.status is SampleStatus.SCORED else None


def _differences(metrics: Iterable[str], pairs: Pairs) -> dict[str, array[float]]:
    """Per metric, system minus baseline over the pairs both scored: read once, kept as
    floats only (8 bytes a pair), whatever the size of a result."""
    found: dict[str, array[float]] = {metric: array("d") for metric in metrics}
    for ours, theirs in pairs:
        _add_differences(found, ours, theirs)
    return found


def _add_differences(
    found: dict[str, array[float]], ours: SampleResult, theirs: SampleResult
) -> None:
    for metric, differences in found.items():
        mine, other = _score(ours, metric), _score(theirs, metric)
        if mine is not None and other is not None:
            differences.append(mine - other)


def _p_value(differences: Sequence[float], seed: int = 0) -> float:
    observed = abs(sum(differences))
    if observed == 0:
        return 1.0
    if len(differences) > BOOTSTRAP_LIMIT:
        return _normal_p_value(differences, observed)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(PERMUTATIONS):
        flipped = sum(d if rng.random() < 0.5 else -d for d in differences)
        if abs(flipped) >= observed - 1e-12:
            extreme += 1
    # Counting the observed arrangement itself keeps the estimate from ever being 0.
    return (extreme + 1) / (PERMUTATIONS + 1)


def _normal_p_value(differences: Sequence[float], observed: float) -> float:
    """The sign-flip test's p-value from the normal law it converges to (as `bootstrap_ci`
    takes the normal interval above `BOOTSTRAP_LIMIT` values): under "no difference" the
    flipped sum has mean 0 and variance the sum of squares. Permuting 2000 times in pure
    Python would take seconds per thousand pairs."""
    spread = math.sqrt(math.fsum(d * d for d in differences))
    return math.erfc(observed / spread / math.sqrt(2))


def compare_reports(
    system: Report, baseline: Report, pairs: Pairs | None = None
) -> dict[str, MetricComparison]:
    """Per metric both reports have: means, paired difference with interval and p-value.

    The pairs are `pairs` (a streamed run's, read from its store), else the samples both
    reports hold. Only metrics count: the figures seed 001 adds to `metrics` (`f1_score`,
    `latency_p99_ms`) have no per-sample scores to pair.
    """
    shared = _shared_metrics(system, baseline)
    found = _differences(shared, pairs_in_memory(system, baseline) if pairs is None else pairs)
    return _comparisons(system, baseline, found)


def _shared_metrics(system: Report, baseline: Report) -> list[str]:
    return [m for m in system.metric_summary if m in baseline.metric_summary]


def _comparisons(
    system: Report, baseline: Report, found: dict[str, array[float]]
) -> dict[str, MetricComparison]:
    """Each metric's comparison from its paired differences (`_differences`)."""
    comparisons = {}
    for metric in found:
        differences = found[metric]
        interval = bootstrap_ci(differences)
        system_mean = system.metric_summary[metric].mean
        baseline_mean = baseline.metric_summary[metric].mean
        comparisons[metric] = MetricComparison(
            system_mean=system_mean,
            baseline_mean=baseline_mean,
            difference=sum(differences) / len(differences) if differences else None,
            ci_low=interval[0] if interval else None,
            ci_high=interval[1] if interval else None,
            p_value=_p_value(differences) if differences else None,
            paired_samples=len(differences),
            improvement=improvement(system_mean, baseline_mean),
        )
    return comparisons


def baseline_comparison(
    system: Report,
    baselines: dict[str, Report],
    *,
    pairs: Callable[[str], Pairs] | None = None,
) -> BaselineComparison:
    """Seed 001's `baseline_comparison` block, for any number of baselines; `pairs(name)`
    reads the system's results paired with baseline `name`'s (from the run store), else the
    reports' samples pair.

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
        compared = compare_reports(system, baseline, pairs(name) if pairs else None)
        improvements[key] = {metric: c.improvement for metric, c in compared.items()}
        significance[key] = {metric: c.model_dump() for metric, c in compared.items()}
    block["improvement_over_baseline"] = improvements
    block["significance"] = significance
    return BaselineComparison.model_validate(block)


def most_changed(before: Report, after: Report, top: int = 5) -> list[str]:
    """The `top` samples whose scores moved most between two runs, with their claims' verdicts
    after, as lines a person can read."""
    moves: _Kept[ScoreMove] = _Kept(top)
    for ours, theirs in pairs_in_memory(after, before):
        for move in _score_moves(theirs, ours):
            moves.offer(move.rank, move)
    return _moved_lines(moves.smallest(), moves.offered, top)


@dataclass(frozen=True)
class ScoreMove:
    """One metric's score of a sample that both runs scored and that moved, with the claims
    the later run made (what `most_changed` lists)."""

    sample_id: str
    metric: str
    before: float
    after: float
    claims: tuple[ClaimRecord, ...]

    @property
    def rank(self) -> tuple[float, str, str]:
        """Largest move first, then by sample id and metric (a total order: ties never depend
        on the order the pairs came in)."""
        return (-abs(self.after - self.before), self.sample_id, self.metric)


def _score_moves(before: SampleResult, after: SampleResult) -> Iterator[ScoreMove]:
    for metric, score in after.scores.items():
        was = before.scores.get(metric)
        if score is not None and was is not None and score != was:
            yield ScoreMove(after.id, metric, was, score, after.claims)


def _moved_lines(moves: Sequence[ScoreMove], total: int, top: int) -> list[str]:
    lines = []
    for move in moves[:top]:
        lines.append(f"{move.sample_id} · {move.metric} {move.before:.3f} -> {move.after:.3f}")
        lines.extend(f"    {claim.verdict.value}: {claim.text}" for claim in move.claims)
    if total > top:
        left = total - top
        lines.append(
            f"… and {left} more score change{'' if left == 1 else 's'}: vera view's compare page "
            "lists every changed sample (or --top N)"
        )
    return lines


_T = TypeVar("_T")


class _Kept(Generic[_T]):
    """The `size` items of smallest rank among all offered, in a heap of `size` entries: what
    keeps a top-N bounded whatever the number of pairs. Ranks must be distinct."""

    def __init__(self, size: int) -> None:
        self.size = max(size, 0)
        self.offered = 0
        self._heap: list[tuple[_Descending, _T]] = []

    def offer(self, rank: tuple[Any, ...], item: _T) -> None:
        self.offered += 1
        if self.size == 0:
            return
        entry = (_Descending(rank), item)
        if len(self._heap) < self.size:
            heapq.heappush(self._heap, entry)
        elif rank < self._heap[0][0].rank:
            heapq.heapreplace(self._heap, entry)

    def smallest(self) -> list[_T]:
        """The kept items, smallest rank first."""
        return [item for _, item in sorted(self._heap, key=lambda entry: entry[0].rank)]


@dataclass(frozen=True)
class _Descending:
    """A rank ordered backwards, so that `heapq`'s min-heap keeps the largest on top, the one
    the next smaller rank replaces."""

    rank: tuple[Any, ...]

    def __lt__(self, other: _Descending) -> bool:
        return bool(self.rank > other.rank)


_CLAIM_GOODNESS = {
    Verdict.FULLY_SUPPORTED: 3,
    Verdict.PARTIALLY_SUPPORTED: 2,
    Verdict.NO_EVIDENCE: 1,
    Verdict.CONTRADICTED: 0,
}
# Keyed by `vera._results.Outcome`'s values (a StrEnum, so they hash alike): that module
# is imported only when a change is computed (see `verdict_changes`). An error ranks above a
# fail so that pass -> fail is the worst move of all.
_OUTCOME_GOODNESS = {
    "pass": 4,
    "pass_with_unsupported": 3,
    "not_gated": 2,
    "not_scored": 1,
    "fail": 0,
}


@dataclass(frozen=True)
class ClaimChange:
    """One claim of a sample in both runs whose verdict moved, or a claim only one run made."""

    text: str
    """The claim as the later run stated it (the earlier run's words for a removed claim)."""
    before: Verdict | None
    """None: the earlier run did not make this claim (it was added)."""
    after: Verdict | None
    """None: the later run did not make this claim (it was removed)."""

    @property
    def kind(self) -> str:
        """One of "added", "removed" and "changed"."""
        if self.before is None:
            return "added"
        return "removed" if self.after is None else "changed"


@dataclass(frozen=True)
class ScoreChange:
    """One metric's score of a sample that differs between two runs (None: not scored)."""

    metric: str
    before: float | None
    after: float | None


@dataclass(frozen=True)
class SampleChange:
    """A sample in both runs whose claims' verdicts or metric scores differ. A badge that moved
    only because the two runs' thresholds differ is not a change of the sample."""

    id: str
    before: SampleOutcome
    after: SampleOutcome
    claims: tuple[ClaimChange, ...]
    """The changed claims: the later run's in its order, then the removed ones."""
    unchanged_claims: int
    """Claims both runs made with the same verdict."""
    scores: tuple[ScoreChange, ...] = ()
    """The metrics whose score differs, in the later run's order, then those it lacks."""

    @property
    def shift(self) -> int:
        """How far the badge moved: below 0 worse (pass -> fail is the lowest), above 0 better."""
        return _OUTCOME_GOODNESS[self.after.outcome] - _OUTCOME_GOODNESS[self.before.outcome]

    @property
    def claim_shift(self) -> int:
        """The verdicts' moves summed over the claims both runs made (below 0: worse); added
        and removed claims have no earlier or later verdict to move from, so count 0."""
        return sum(
            _CLAIM_GOODNESS[c.after] - _CLAIM_GOODNESS[c.before]
            for c in self.claims
            if c.before is not None and c.after is not None
        )

    @property
    def direction(self) -> str:
        """Whether the sample got "worse" or "better": by its badge, else by its claims'
        verdicts; "changed" when neither moved (a claim only added or removed)."""
        for shift in (self.shift, self.claim_shift):
            if shift:
                return "worse" if shift < 0 else "better"
        return "changed"

    @property
    def rank(self) -> tuple[int, int, str]:
        """Where the change is listed: worst first (`verdict_changes`)."""
        return (self.shift, self.claim_shift, self.id)


def _claim_key(text: str) -> str:
    """A claim's text as claims are paired across runs: case, spacing and the punctuation
    around it do not matter ("Paris is in France." pairs with "paris is in  France")."""
    return " ".join(text.casefold().split()).strip(" .,;:!?\"'")


def _claim_changes(
    before: Sequence[ClaimRecord], after: Sequence[ClaimRecord]
) -> tuple[list[ClaimChange], int]:
    """The claims that changed between two results of one sample, and how many did not. Claims
    with the same text pair in order, so a claim stated twice pairs twice."""
    earlier: dict[str, list[ClaimRecord]] = {}
    for claim in before:
        earlier.setdefault(_claim_key(claim.text), []).append(claim)
    changes: list[ClaimChange] = []
    unchanged = 0
    for claim in after:
        waiting = earlier.get(_claim_key(claim.text))
        was = waiting.pop(0) if waiting else None
        if was is not None and was.verdict is claim.verdict:
            unchanged += 1
            continue
        changes.append(ClaimChange(claim.text, was.verdict if was else None, claim.verdict))
    removed = (claim for left in earlier.values() for claim in left)
    changes += [ClaimChange(claim.text, claim.verdict, None) for claim in removed]
    return changes, unchanged


def _score_changes(before: SampleResult, after: SampleResult) -> list[ScoreChange]:
    """Each metric whose score differs between two results of one sample (a score one of them
    lacks included); a pass or fail that differs with the same score is the threshold's doing,
    not the sample's, and is not listed."""
    old, new = _sample_scores(before), _sample_scores(after)
    names = [*new, *(name for name in old if name not in new)]
    return [
        ScoreChange(name, old.get(name), new.get(name))
        for name in names
        if old.get(name) != new.get(name)
    ]


def _sample_scores(result: SampleResult) -> dict[str, float | None]:
    if result.status is not SampleStatus.SCORED:
        return {}
    return {name: r.score for name, r in result.results.items()}


def verdict_changes(
    before: Iterable[SampleResult], after: Iterable[SampleResult]
) -> list[SampleChange]:
    """The samples of two runs, paired by id, whose claims' verdicts or metric scores changed;
    claims pair by their normalised text. A sample whose verdicts and scores are the same is
    not changed, even where its badge (`sample_outcome`) differs because the runs' thresholds
    do (`run_differences` says so). Worst change first: by how far the badge fell (pass ->
    fail first), then by how far the claims' verdicts fell, then by id; the improvements come
    last. Samples only one run has do not pair and are left out."""
    earlier = {result.id: result for result in before}
    found = []
    for result in after:
        was = earlier.get(result.id)
        change = None if was is None else _sample_change(was, result)
        if change is not None:
            found.append(change)
    found.sort(key=lambda c: c.rank)
    return found


def _sample_change(before: SampleResult, after: SampleResult) -> SampleChange | None:
    """How one sample changed between two runs; None where its verdicts and scores did not."""
    claims, unchanged = _claim_changes(before.claims, after.claims)
    scores = _score_changes(before, after)
    if not claims and not scores:
        return None
    old, new = sample_outcome(before), sample_outcome(after)
    return SampleChange(after.id, old, new, tuple(claims), unchanged, tuple(scores))


@dataclass(frozen=True)
class RunComparison:
    """Run B (the system) against run A (the baseline) from one pass over their pairs
    (`compare_paired`): what `vera compare` and `vera view`'s compare page show."""

    metrics: dict[str, MetricComparison]
    """Per metric both runs have, as `compare_reports` gives it."""
    changed: int
    """Paired samples whose claims' verdicts or scores changed (`verdict_changes`)."""
    worse: int
    better: int
    changes: tuple[SampleChange, ...]
    """The worst of those changes, worst first, as many as were asked for."""
    moves: tuple[ScoreMove, ...]
    """The largest score moves, largest first, as many as were asked for."""
    moved: int
    """Every score move, the kept ones included."""

    def moved_lines(self) -> list[str]:
        """The kept score moves as `most_changed` writes them."""
        return _moved_lines(self.moves, self.moved, len(self.moves))


def compare_paired(
    system: Report, baseline: Report, pairs: Pairs, *, top: int = 5, changes: int = 0
) -> RunComparison:
    """`compare_reports`, the counts of `verdict_changes` with its `changes` worst and
    `most_changed`'s `top` largest score moves, in one pass over `pairs` (system, baseline;
    in sample-id order, as `RunStore.paired` reads them): only the paired differences (8
    bytes a pair and metric) and the kept changes stay in memory, whatever the runs' size."""
    found: dict[str, array[float]] = {m: array("d") for m in _shared_metrics(system, baseline)}
    kept: _Kept[SampleChange] = _Kept(changes)
    moves: _Kept[ScoreMove] = _Kept(top)
    worse = better = 0
    for ours, theirs in pairs:
        _add_differences(found, ours, theirs)
        change = _sample_change(theirs, ours)
        if change is not None:
            kept.offer(change.rank, change)
            worse += change.direction == "worse"
            better += change.direction == "better"
        for move in _score_moves(theirs, ours):
            moves.offer(move.rank, move)
    return RunComparison(
        metrics=_comparisons(system, baseline, found),
        changed=kept.offered,
        worse=worse,
        better=better,
        changes=tuple(kept.smallest()),
        moves=tuple(moves.smallest()),
        moved=moves.offered,
    )


def _rule(summary: MetricSummary) -> str:
    return f"{'≥' if summary.higher_is_better else '≤'} {summary.threshold:g}"


def measured_plan(report: Report) -> MeasuredPlan:
    """What `report`'s run measured: its fingerprint's parts, or, for a run stored before
    fingerprints, the judge and the metrics' pass rules its report holds."""
    if report.fingerprint is not None:
        return report.fingerprint.plan()
    rules = {name: _rule(summary) for name, summary in report.metric_summary.items()}
    return MeasuredPlan(judge=report.judge, metrics=rules)


def run_differences(before: Report, after: Report) -> list[str]:
    """What differs between two runs beyond their samples' answers, a line each (see
    `vera._types.describe_differences`): the test set, judge, metrics and their thresholds,
    the system answering and the gates. A change between such runs may be the setting's and
    not the system's; the badges of samples whose scores did not move may differ by the
    thresholds alone. A run stored before fingerprints is compared by its judge and metrics,
    and a line says what could not be compared. Empty when none differs."""
    found = describe_differences(measured_plan(before), measured_plan(after))
    unknown = [
        label for label, report in (("A", before), ("B", after)) if report.fingerprint is None
    ]
    if unknown:
        found.append(
            f"{' and '.join(unknown)} stored no fingerprint (a run from before fingerprints): "
            "only the judges and the metrics were compared, not the test sets, systems or gates"
        )
    return found
