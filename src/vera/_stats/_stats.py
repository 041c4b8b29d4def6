"""Aggregate statistics for reports: means with bootstrap confidence intervals, percentiles.

Pure Python, deterministic (a fixed seed, and the same figures whatever order the values come
in), and NaN-free: an empty input gives None, never NaN.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

# The result type is plain data in the types layer, so reports can hold it; re-exported here.
from vera._types._report import Estimate

RESAMPLES = 1000
CONFIDENCE = 0.95
BOOTSTRAP_LIMIT = 1000
"""Above this many values the interval is the normal one, which the bootstrap of a mean
converges to: resampling 1000 times in pure Python would take seconds per metric."""
_Z = {0.90: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}
EXACT_DISTINCT = 20_000
"""How many distinct values a `ValueCounts` keeps exactly before it rounds them to its grid."""
_GRID = math.log1p(1e-3)
"""Step of the geometric grid past `EXACT_DISTINCT`: neighbours 0.1 % apart, so a value moves
at most 0.05 % of its size when rounded to the nearest."""
_UNIT_BITS = 1074
"""Every finite float is a whole number of units of 2**-1074, so sums in those units are exact."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0 to 100), interpolating linearly between ranks as numpy does."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError("q must be between 0 and 100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def bootstrap_ci(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean: resample with replacement, take the quantiles.

    The seed is fixed so the same scores always give the same interval in a report. Above
    `BOOTSTRAP_LIMIT` values, the normal interval (mean ± z·sd/√n) stands in for it.
    """
    if not values:
        return None
    # Sorted, so the interval depends on the scores, not on the order samples finished in.
    values = sorted(values)
    if values[0] == values[-1]:
        return values[0], values[0]
    n = len(values)
    smallest, largest = min(values), max(values)
    if n > BOOTSTRAP_LIMIT and confidence in _Z:
        mean = math.fsum(values) / n
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        half = _Z[confidence] * sd / math.sqrt(n)
        return max(mean - half, smallest), min(mean + half, largest)
    means = sorted(sum(pick(values)) / n for pick in _resamplers(n, resamples, seed))
    tail = (1 - confidence) / 2 * 100
    low, high = percentile(means, tail), percentile(means, 100 - tail)
    assert low is not None and high is not None  # means is not empty
    # Summing can round a hair past the data (3 * x / 3 > x); an interval never leaves it.
    return max(low, smallest), min(high, largest)


@lru_cache(maxsize=8)
def _resamplers(n: int, resamples: int, seed: int) -> tuple[Callable[[Sequence[float]], Any], ...]:
    """`resamples` functions that each pick a resample (with replacement) of n values.

    Drawn once per size and shared by every metric of a report, and applied by `itemgetter` in
    C, so a report's intervals cost milliseconds rather than seconds.
    """
    rng = random.Random(seed)
    population = range(n)
    return tuple(itemgetter(*rng.choices(population, k=n)) for _ in range(resamples))


@lru_cache(maxsize=8)
def _estimate_of(shown: str, items: tuple[tuple[float, int], ...]) -> Estimate:
    """`estimate` of the values `items` counts, kept for a few: a report bootstraps the same
    scores several times (a metric, a sub-score equal to it, a group of every sample), 16 ms
    each for 1,000 values. `shown`, the items' repr, is in the key because == takes 0.0 for
    -0.0 and 1 for 1.0, whose intervals print differently."""
    return estimate([value for value, count in items for _ in range(count)])


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95 % bootstrap interval of `values`."""
    interval = bootstrap_ci(values)
    if interval is None:
        return Estimate(mean=None, ci_low=None, ci_high=None, n=0)
    mean = min(max(math.fsum(values) / len(values), min(values)), max(values))
    return Estimate(mean=mean, ci_low=interval[0], ci_high=interval[1], n=len(values))


class ValueCounts:
    """Floats kept as how often each distinct value occurs, so memory follows the number of
    distinct values, not of values.

    Scores from verdict weights take few distinct values: a million of them cost kilobytes,
    and every statistic is exactly what the same values in a list give. Continuous values
    (latencies, similarities) past `EXACT_DISTINCT` distinct ones are rounded to a geometric
    grid 0.1 % apart, a streaming histogram as Prometheus and DDSketch keep: percentiles and the
    interval's width then move by at most 0.05 % of a value, while the count, the sum (so the
    mean), the minimum and the maximum stay exact.
    """

    __slots__ = ("_counts", "_rounded_sum", "largest", "n", "smallest")

    def __init__(self, values: Iterable[float] = ()) -> None:
        self._counts: dict[float, int] = {}
        self._rounded_sum: int | None = None  # exact sum in units, once values are rounded
        self.n = 0
        self.smallest = math.inf
        self.largest = -math.inf
        for value in values:
            self.add(value)

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            raise ValueError(f"a value to aggregate must be a finite number; got {value!r}")
        self.n += 1
        self.smallest = min(self.smallest, value)
        self.largest = max(self.largest, value)
        if self._rounded_sum is not None:
            self._rounded_sum += _units(value)
            value = _on_grid(value)
        counts = self._counts
        counts[value] = counts.get(value, 0) + 1
        if self._rounded_sum is None and len(counts) > EXACT_DISTINCT:
            self._round()

    def _round(self) -> None:
        self._rounded_sum = self._units_sum()
        rounded: dict[float, int] = {}
        for value, count in self._counts.items():
            key = _on_grid(value)
            rounded[key] = rounded.get(key, 0) + count
        self._counts = rounded

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    def items(self) -> list[tuple[float, int]]:
        """Each distinct value (rounded, past `EXACT_DISTINCT`) and its count, ascending."""
        return sorted(self._counts.items())

    def expanded(self) -> list[float]:
        """Every value, ascending: only for a few (`estimate` uses it up to `BOOTSTRAP_LIMIT`)."""
        return [value for value, count in self.items() for _ in range(count)]

    def _units_sum(self) -> int:
        if self._rounded_sum is not None:
            return self._rounded_sum
        return sum(_units(value) * count for value, count in self._counts.items())

    def mean(self) -> float | None:
        """The exact mean, rounded once (as `math.fsum(values) / n`)."""
        if not self.n:
            return None
        return self._units_sum() / (1 << _UNIT_BITS) / self.n

    def variance(self) -> float | None:
        """The sample variance (n - 1 in the denominator); None for fewer than two values."""
        mean = self.mean()
        if mean is None or self.n < 2:
            return None
        squares = sum(_units((value - mean) ** 2) * count for value, count in self.items())
        return squares / (1 << _UNIT_BITS) / (self.n - 1)

    def percentile(self, q: float) -> float | None:
        """As `percentile` over the values."""
        if not self.n:
            return None
        if not 0 <= q <= 100:
            raise ValueError("q must be between 0 and 100")
        rank = (self.n - 1) * q / 100
        low = math.floor(rank)
        below, above = _at_ranks(self.items(), low, min(low + 1, self.n - 1))
        found = below + (above - below) * (rank - low)
        return min(max(found, self.smallest), self.largest)

    def estimate(self) -> Estimate:
        """As `estimate` over the values, without a list of them."""
        if self.n <= BOOTSTRAP_LIMIT:
            items = tuple(self.items())
            return _estimate_of(repr(items), items)
        mean = self.mean()
        assert mean is not None  # n > 0
        low, high = self.smallest, self.largest
        if low != high:
            sd = math.sqrt(self.variance() or 0.0)
            half = _Z[CONFIDENCE] * sd / math.sqrt(self.n)
            low, high = max(mean - half, low), min(mean + half, high)
        bounded = min(max(mean, self.smallest), self.largest)
        return Estimate(mean=bounded, ci_low=low, ci_high=high, n=self.n)


def _units(value: float) -> int:
    numerator, denominator = value.as_integer_ratio()
    return numerator << (_UNIT_BITS - denominator.bit_length() + 1)


def _on_grid(value: float) -> float:
    if value == 0:
        return 0.0
    step = round(math.log(abs(value)) / _GRID)
    return math.copysign(math.exp(step * _GRID), value)


def _at_ranks(items: Sequence[tuple[float, int]], first: int, second: int) -> tuple[float, float]:
    """The values at two ranks (0-based, first <= second) of the expanded, ascending values."""
    found: list[float] = []
    seen = 0
    for value, count in items:
        seen += count
        while len(found) < 2 and (first, second)[len(found)] < seen:
            found.append(value)
        if len(found) == 2:
            break
    return found[0], found[1]
