"""Aggregate statistics for reports: means with bootstrap confidence intervals, percentiles.

Pure Python, deterministic (a fixed seed, and the same figures whatever order the values come
in), and NaN-free: an empty input gives None, never NaN.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

# The result type is plain data in the types layer, so reports can hold it; re-exported here.
from vera.types.report import Estimate

__all__ = ["Estimate", "bootstrap_ci", "estimate", "percentile"]

RESAMPLES = 1000
CONFIDENCE = 0.95
BOOTSTRAP_LIMIT = 1000
"""Above this many values the interval is the normal one, which the bootstrap of a mean
converges to: resampling 1000 times in pure Python would take seconds per metric."""
_Z = {0.90: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


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


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95 % bootstrap interval of `values`."""
    interval = bootstrap_ci(values)
    if interval is None:
        return Estimate(mean=None, ci_low=None, ci_high=None, n=0)
    mean = min(max(math.fsum(values) / len(values), min(values)), max(values))
    return Estimate(mean=mean, ci_low=interval[0], ci_high=interval[1], n=len(values))
