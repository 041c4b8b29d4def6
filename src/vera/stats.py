"""Aggregate statistics for reports: means with bootstrap confidence intervals, percentiles.

Pure Python, deterministic (a fixed seed), and NaN-free: an empty input gives None, never NaN.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["Estimate", "bootstrap_ci", "estimate", "percentile"]

RESAMPLES = 1000
CONFIDENCE = 0.95


class Estimate(BaseModel):
    """A mean with its 95 % bootstrap confidence interval; None fields when nothing was scored."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


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

    The seed is fixed so the same scores always give the same interval in a report.
    """
    if not values:
        return None
    if len(set(values)) == 1:
        return values[0], values[0]
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2 * 100
    low, high = percentile(means, tail), percentile(means, 100 - tail)
    assert low is not None and high is not None  # means is not empty
    # Summing can round a hair past the data (3 * x / 3 > x); an interval never leaves it.
    smallest, largest = min(values), max(values)
    return max(low, smallest), min(high, largest)


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95 % bootstrap interval of `values`."""
    interval = bootstrap_ci(values)
    if interval is None:
        return Estimate(mean=None, ci_low=None, ci_high=None, n=0)
    mean = min(max(sum(values) / len(values), min(values)), max(values))
    return Estimate(mean=mean, ci_low=interval[0], ci_high=interval[1], n=len(values))
