"""A comparison with a baseline that measured nothing is no comparison: the run is incomplete
(exit 3), naming the baseline, never a pass with "—" in its comparison."""

from __future__ import annotations

import vera
from vera.pipelines._user import as_pipeline

WHITEBOX = "the loader of a user's pipeline spec"


def broken(query: str) -> str:
    raise RuntimeError("the baseline's retriever is down")


def half_broken(query: str) -> str:
    if len(query) % 2:
        raise RuntimeError("flaky")
    return "I do not know."


def test_a_baseline_that_scored_nothing_makes_the_run_incomplete() -> None:
    result = vera.run_evaluation(
        "example", baselines={"broken": as_pipeline(broken)}, history=False
    )
    assert result.report.counts.scored == 28  # the system itself is complete
    assert result.baseline_shortfalls == ("baseline broken: no sample could be scored",)
    assert result.incomplete == "baseline broken: no sample could be scored"
    assert result.exit_code == 3
    assert result.remedy is not None and "drop that --baseline" in result.remedy


def test_a_baseline_beyond_the_error_budget_is_named_and_max_errors_lets_it_pass() -> None:
    strict = vera.run_evaluation(
        "example", baselines={"flaky": as_pipeline(half_broken)}, history=False
    )
    [why] = strict.baseline_shortfalls
    assert why.startswith("baseline flaky: ") and "(--max-errors allows 0)" in why
    assert strict.exit_code == 3
    lenient = vera.run_evaluation(
        "example", baselines={"flaky": as_pipeline(half_broken)}, history=False, max_errors="100%"
    )
    assert lenient.baseline_shortfalls == () and lenient.incomplete is None


def test_a_healthy_baseline_leaves_the_run_complete() -> None:
    result = vera.run_evaluation("example", baselines=["naive-rag"], history=False)
    assert result.baseline_shortfalls == () and result.incomplete is None
