"""Paired comparisons between a system's report and a baseline's."""

import math
import random

import pytest

from vera import Report, SampleResult, SampleStatus
from vera._results import build_report, compare_reports, improvement, pairs_in_memory
from vera.metrics import MetricResult, MetricStatus

WHITEBOX = "the report builder, on hand-made results"


def report(scores: dict[str, float]) -> Report:
    results = [
        SampleResult(
            id=sid,
            status=SampleStatus.SCORED,
            scores={"m": score},
            results={
                "m": MetricResult(
                    name="m", score=score, passed=True, status=MetricStatus.OK, reason="",
                    threshold=0.5,
                )
            },
        )
        for sid, score in scores.items()
    ]  # fmt: skip
    return build_report(dataset="d", judge="j", version="v", thresholds={"m": 0.5}, results=results)


def test_a_consistent_gain_is_significant_with_an_interval_above_zero() -> None:
    system = report({f"s{i}": 0.9 for i in range(30)})
    baseline = report({f"s{i}": 0.6 + (i % 3) * 0.05 for i in range(30)})
    result = compare_reports(system, baseline)["m"]
    assert result.paired_samples == 30
    assert result.difference == pytest.approx(0.9 - 0.65)
    assert result.ci_low is not None and result.ci_low > 0
    assert result.p_value is not None and result.p_value < 0.01
    assert result.improvement == "+38.5%"


def test_no_difference_is_not_significant_and_pairs_only_shared_samples() -> None:
    values = {f"s{i}": (i % 5) / 4 for i in range(20)}
    system = report({**values, "only-here": 1.0})
    baseline = report(values)
    result = compare_reports(system, baseline)["m"]
    assert result.paired_samples == 20
    assert result.difference == 0.0 and result.p_value == 1.0


def test_noise_around_zero_is_not_significant() -> None:
    system = report({f"s{i}": 0.5 + (0.1 if i % 2 else -0.1) for i in range(40)})
    baseline = report({f"s{i}": 0.5 for i in range(40)})
    result = compare_reports(system, baseline)["m"]
    assert result.p_value is not None and result.p_value > 0.5
    assert result.ci_low is not None and result.ci_low < 0 < (result.ci_high or 0)


def test_improvement_is_written_like_seed_001() -> None:
    assert improvement(0.92, 0.65) == "+41.5%"
    assert improvement(0.07, 0.28) == "-75.0%"
    assert improvement(0.5, 0.0) is None and improvement(None, 0.5) is None


@pytest.mark.slow
def test_many_pairs_take_the_normal_p_value_the_permutations_converge_to() -> None:
    # 1500 pairs, above BOOTSTRAP_LIMIT: a small noisy gain, near the 5 % line.
    differences = [((i * 7919) % 101 - 50) / 100 + 0.015 for i in range(1500)]
    system = report({f"s{i:04}": 0.5 + d for i, d in enumerate(differences)})
    baseline = report({f"s{i:04}": 0.5 for i in range(1500)})
    result = compare_reports(system, baseline)["m"]
    spread = math.sqrt(sum(d * d for d in differences))
    expected = math.erfc(abs(sum(differences)) / spread / math.sqrt(2))
    assert 0.01 < expected < 0.1
    assert result.p_value == pytest.approx(expected, rel=1e-6)
    # The permutation test on the same differences agrees within its own noise.
    assert result.p_value == pytest.approx(_permutation_p_value(differences), abs=0.02)


def _permutation_p_value(differences: list[float]) -> float:
    observed = abs(sum(differences))
    rng = random.Random(1)
    extreme = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in differences)) >= observed - 1e-12
        for _ in range(2000)
    )
    return (extreme + 1) / 2001


def test_pairs_given_compare_as_the_samples_they_pair() -> None:
    system = report({f"s{i}": 0.9 - (i % 4) * 0.1 for i in range(30)})
    baseline = report({f"s{i}": 0.6 + (i % 3) * 0.05 for i in range(30)})
    in_memory = compare_reports(system, baseline)
    bare_system = system.model_copy(update={"samples": ()})
    bare_baseline = baseline.model_copy(update={"samples": ()})
    assert compare_reports(bare_system, bare_baseline)["m"].paired_samples == 0
    streamed = compare_reports(bare_system, bare_baseline, pairs_in_memory(system, baseline))
    assert streamed == in_memory
