import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera import _stats as stats
from vera._stats import ValueCounts, bootstrap_ci, estimate, percentile

WHITEBOX = "the statistics formulas"

scores = st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=60)


def test_percentiles_interpolate_like_numpy() -> None:
    values = [15.0, 20.0, 35.0, 40.0, 50.0]
    assert percentile(values, 50) == 35.0
    assert percentile(values, 40) == pytest.approx(29.0)  # numpy.percentile(values, 40)
    assert percentile(values, 95) == pytest.approx(48.0)
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile(values, 101)


def test_empty_gives_none_and_constant_gives_a_point() -> None:
    assert estimate([]).mean is None and estimate([]).n == 0
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)


def test_interval_is_deterministic_and_narrows_with_more_data() -> None:
    few = [0.0, 1.0] * 5
    many = [0.0, 1.0] * 500
    low_few, high_few = bootstrap_ci(few) or (0, 0)
    low_many, high_many = bootstrap_ci(many) or (0, 0)
    assert bootstrap_ci(few) == (low_few, high_few)
    assert high_many - low_many < (high_few - low_few) / 4
    assert low_many < 0.5 < high_many


@given(scores)
def test_estimate_is_finite_and_brackets_the_mean(values: list[float]) -> None:
    result = estimate(values)
    assert result.mean is not None and result.ci_low is not None and result.ci_high is not None
    assert all(math.isfinite(x) for x in (result.mean, result.ci_low, result.ci_high))
    assert min(values) <= result.ci_low <= result.ci_high <= max(values)


def test_large_samples_use_the_normal_interval_the_bootstrap_converges_to() -> None:
    values = [float(i % 2) for i in range(5000)]
    low, high = bootstrap_ci(values) or (0, 0)
    half = 1.959963984540054 * math.sqrt(0.25 * 5000 / 4999) / math.sqrt(5000)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half))
    small = bootstrap_ci(values[:1000]) or (0, 0)  # bootstrap: close to the normal one
    assert small[0] == pytest.approx(0.5 - half * math.sqrt(5), abs=0.01)


# ValueCounts: the report's streaming aggregates, which must match the list-based figures.

_SCORE_GRID = [0.0, 0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0]


@pytest.mark.parametrize("n", [1, 2, 7, 999, 1000, 1001, 4000])
def test_value_counts_give_the_same_figures_as_the_list(n: int) -> None:
    rng = random.Random(n)
    values = [rng.choice(_SCORE_GRID) for _ in range(n)]
    counted = ValueCounts(values)
    assert counted.estimate() == estimate(values)
    assert counted.mean() == math.fsum(values) / n
    for q in (0, 1, 50, 95, 99, 100):
        assert counted.percentile(q) == percentile(values, q)
    assert counted.expanded() == sorted(values)


def test_an_interval_kept_for_the_same_values_is_theirs() -> None:
    """A report's intervals are kept by the values' repr: a second report's equal values give
    the interval a first computation gives, and values that == takes for others (-0.0 for
    0.0) give their own, which prints differently."""
    rng = random.Random(5)
    values = [rng.choice(_SCORE_GRID) for _ in range(500)]
    first, again = ValueCounts(values).estimate(), ValueCounts(list(values)).estimate()
    assert repr(first) == repr(again) == repr(estimate(values))
    for zeros in ([0.0, 0.0], [-0.0, -0.0], [0.0, 0.0]):
        assert repr(ValueCounts(zeros).estimate()) == repr(estimate(zeros))


def test_value_counts_do_not_depend_on_arrival_order() -> None:
    values = [random.Random(3).random() for _ in range(3000)]
    backwards = ValueCounts(reversed(values))
    assert ValueCounts(values).estimate() == backwards.estimate()
    assert ValueCounts(values).percentile(95) == backwards.percentile(95)


def test_value_counts_keep_memory_bounded_by_distinct_values() -> None:
    rng = random.Random(0)
    values = [rng.lognormvariate(3, 1) for _ in range(3 * stats.EXACT_DISTINCT)]
    counted = ValueCounts(values)
    distinct = len(counted.items())
    assert distinct < stats.EXACT_DISTINCT
    # Count, mean, minimum and maximum stay exact once values are rounded to the grid...
    assert len(counted) == len(values)
    assert counted.mean() == math.fsum(values) / len(values)
    assert (counted.smallest, counted.largest) == (min(values), max(values))
    # ...and percentiles move by at most 0.05 % of the value.
    for q in (50, 95, 99):
        exact = percentile(values, q)
        assert exact is not None
        assert counted.percentile(q) == pytest.approx(exact, rel=5e-4)
    found, exact_estimate = counted.estimate(), estimate(values)
    assert found.mean == exact_estimate.mean
    assert found.ci_low == pytest.approx(exact_estimate.ci_low, rel=5e-4)
    # Adding more values of the same spread adds no new distinct values beyond the grid's.
    counted.add(float(rng.lognormvariate(3, 1)))
    assert len(counted.items()) <= distinct + 1


def test_value_counts_refuse_a_value_that_is_not_a_number() -> None:
    with pytest.raises(ValueError, match="finite number; got nan"):
        ValueCounts([0.5, math.nan])


def test_empty_value_counts_give_no_figures() -> None:
    empty = ValueCounts()
    assert not empty
    assert empty.mean() is None
    assert empty.percentile(50) is None
    assert empty.estimate().mean is None


@pytest.mark.slow
@given(scores)
def test_value_counts_match_the_list_for_any_scores(values: list[float]) -> None:
    counted = ValueCounts(values)
    assert counted.estimate() == estimate(values)
    assert counted.percentile(99) == percentile(values, 99)
