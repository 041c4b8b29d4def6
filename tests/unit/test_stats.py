import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera.stats import bootstrap_ci, estimate, percentile

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
