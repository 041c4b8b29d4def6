"""Aggregates over per-sample results: intervals, groups, latency, and never a NaN."""

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera import Report, SampleResult, SampleStatus
from vera._results import baseline_comparison, build_report, compare_reports, regression_failures
from vera.metrics import MetricResult, MetricStatus
from vera.render._junit import render_junit
from vera.render._view import HistoryPoint, trend_panels

WHITEBOX = "the report builder, on hand-made results"


def result(
    sid: str,
    score: float | None,
    *,
    status: SampleStatus = SampleStatus.SCORED,
    category: str | None = None,
    latency: float | None = None,
    team: str | None = None,
) -> SampleResult:
    metric = MetricResult(
        name="m",
        score=score,
        passed=None if score is None else score >= 0.5,
        status=MetricStatus.OK if score is not None else MetricStatus.NOT_APPLICABLE,
        reason="",
        threshold=0.5,
        sub_scores={} if score is None else {"half": score / 2},
    )
    return SampleResult(
        id=sid,
        status=status,
        category=category,
        latency_ms=latency,
        scores={"m": score} if status is SampleStatus.SCORED else {},
        results={"m": metric} if status is SampleStatus.SCORED else {},
        group_values={"team": team},
    )


def test_latency_percentiles_overall_and_per_category() -> None:
    results = [
        result(str(i), 1.0, latency=float(ms), category="a" if i < 5 else "b")
        for i, ms in enumerate([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000])
    ]
    report = build_report(
        dataset="d", judge="j", version="v", thresholds={"m": 0.5}, results=results
    )
    assert report.latency is not None
    assert (report.latency.p50, report.latency.p95, report.latency.p99) == pytest.approx(
        (550.0, 955.0, 991.0)
    )
    assert report.latency_by_category["a"].p50 == 300.0


def test_groups_count_scored_and_not_scored() -> None:
    results = [
        result("1", 1.0, team="x"),
        result("2", 0.0, team="x"),
        result("3", None, team="y"),
        result("4", None, status=SampleStatus.ERROR, team="y"),
        result("5", 0.5),
    ]
    report = build_report(
        dataset="d", judge="j", version="v", thresholds={"m": 0.5}, results=results,
        group_by=["team"],
    )  # fmt: skip
    team = report.breakdowns["team"]
    assert (team["x"]["m"].mean, team["x"]["m"].scored) == (0.5, 2)
    assert (team["y"]["m"].mean, team["y"]["m"].not_scored) == (None, 2)
    assert team["uncategorized"]["m"].scored == 1
    summary = report.metric_summary["m"]
    assert (summary.scored, summary.not_scored, summary.not_applicable) == (3, 2, 1)
    assert summary.sub_scores["half"].mean == pytest.approx(0.25)


def _numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return [value] if isinstance(value, float) else []


rows = st.lists(
    st.tuples(
        st.one_of(st.none(), st.floats(min_value=0, max_value=1)),
        st.sampled_from(list(SampleStatus)),
        st.sampled_from([None, "a", "b"]),
        st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)),
    ),
    max_size=25,
)


@given(rows)
def test_aggregates_never_hold_nan(data: list[tuple[Any, SampleStatus, Any, Any]]) -> None:
    results = [
        result(str(i), score, status=status, category=category, latency=latency, team=category)
        for i, (score, status, category, latency) in enumerate(data)
    ]
    report = build_report(
        dataset="d", judge="j", version="v", thresholds={"m": 0.5}, results=results,
        group_by=["team"],
    )  # fmt: skip
    text = report.to_json()  # strict JSON: raises on NaN or infinity
    assert all(math.isfinite(n) for n in _numbers(json.loads(text)))


# Seed 001's figures beside the metric means: f1_score and latency_p99_ms.


def multi(
    sid: str, scores: dict[str, float | None], *, latency: float | None = None
) -> SampleResult:
    """A scored sample with several metrics; None is a metric that does not apply."""
    results = {
        name: MetricResult(
            name=name,
            score=score,
            passed=None if score is None else score >= 0.5,
            status=MetricStatus.OK if score is not None else MetricStatus.NOT_APPLICABLE,
            reason="",
            threshold=0.5,
        )
        for name, score in scores.items()
    }
    return SampleResult(
        id=sid, status=SampleStatus.SCORED, scores=scores, results=results, latency_ms=latency
    )


def build(results: list[SampleResult], *names: str) -> Report:
    thresholds = dict.fromkeys(names, 0.5)
    return build_report(dataset="d", judge="j", version="v", thresholds=thresholds, results=results)


def test_latency_p99_is_in_metrics_when_latency_is_known() -> None:
    timed = build([multi("a", {"m": 1.0}, latency=100.0), multi("b", {"m": 0.0})], "m")
    assert timed.latency is not None
    assert timed.metrics == {"m": 0.5, "latency_p99_ms": timed.latency.p99}
    untimed = build([multi("a", {"m": 1.0})], "m")
    assert untimed.latency is None and untimed.metrics == {"m": 1.0}
    for report in (timed, untimed):
        assert list(report.metric_summary) == ["m"]


def test_f1_score_is_the_grounding_f1_mean_when_it_ran() -> None:
    report = build(
        [
            multi("a", {"grounding_f1": 0.8, "grounding_precision": 1.0}),
            multi("b", {"grounding_f1": 0.4, "grounding_precision": 0.0}),
        ],
        "grounding_f1",
        "grounding_precision",
    )
    assert report.metrics["f1_score"] == pytest.approx(0.6)
    assert "f1_score" not in report.metric_summary


def test_f1_score_without_grounding_f1_averages_per_sample_f1() -> None:
    results = [
        multi("a", {"grounding_precision": 1.0, "grounding_recall": 0.5}),
        multi("b", {"grounding_precision": 0.5, "grounding_recall": None}),  # no reference
        multi("c", {"grounding_precision": 0.5, "grounding_recall": 0.0}),
    ]
    report = build(results, "grounding_precision", "grounding_recall")
    # Sample a: F1 = 2 * 1 * 0.5 / 1.5 = 2/3; sample c: 0; b has no recall, as grounding_f1
    # would not score it either. (The harmonic mean of the means, 0.364, is not this.)
    assert report.metrics["f1_score"] == pytest.approx(1 / 3)
    assert set(report.metric_summary) == {"grounding_precision", "grounding_recall"}


def test_f1_score_is_none_when_no_sample_has_both_halves() -> None:
    report = build(
        [multi("a", {"grounding_precision": 1.0, "grounding_recall": None})],
        "grounding_precision",
        "grounding_recall",
    )
    assert "f1_score" in report.metrics and report.metrics["f1_score"] is None


@pytest.mark.parametrize(
    "names", [("grounding_precision",), ("grounding_recall",), ("m",)], ids=["p", "r", "none"]
)
def test_no_f1_score_without_both_halves(names: tuple[str, ...]) -> None:
    report = build([multi("a", dict.fromkeys(names, 1.0))], *names)
    assert "f1_score" not in report.metrics


def test_a_metric_named_like_a_figure_keeps_its_own_mean() -> None:
    results = [multi("a", {"f1_score": 0.25, "grounding_f1": 0.9}, latency=5.0)]
    report = build(results, "f1_score", "grounding_f1")
    assert report.metrics["f1_score"] == 0.25
    assert report.metrics["latency_p99_ms"] == 5.0


def _timed_grounding(scores: list[float]) -> Report:
    results = [
        multi(f"s{i}", {"grounding_f1": s, "m": s}, latency=100.0 + i) for i, s in enumerate(scores)
    ]
    return build(results, "grounding_f1", "m")


def test_comparisons_cover_metrics_only() -> None:
    system = _timed_grounding([0.9] * 10)
    baseline = _timed_grounding([0.5] * 10)
    assert {"f1_score", "latency_p99_ms"} <= set(system.metrics)
    compared = compare_reports(system, baseline)
    assert set(compared) == {"grounding_f1", "m"}
    assert compared["m"].paired_samples == 10
    block = baseline_comparison(system, {"naive-rag": baseline})
    assert set(block["significance"]["naive_rag"]) == {"grounding_f1", "m"}
    assert set(block["improvement_over_baseline"]["naive_rag"]) == {"grounding_f1", "m"}
    assert block["naive_rag"] == {"grounding_f1": 0.5, "m": 0.5}
    # The baseline as a new run against the system as the previous one: a drop on each metric.
    failures = regression_failures(baseline, system, "run-1")
    assert [line.split(":")[0] for line in failures] == ["grounding_f1", "m"]


def test_report_views_skip_the_figures() -> None:
    report = _timed_grounding([0.9, 0.8])
    junit = render_junit(report)
    assert 'name="vera.m"' in junit and 'name="vera.grounding_f1"' in junit
    assert "f1_score" not in junit and "latency_p99_ms" not in junit
    history = [HistoryPoint(f"r{i}", f"t{i}", dict(report.metrics)) for i in range(2)]
    history.append(HistoryPoint("old", "t", {"retired_metric": 0.5, "f1_score": 0.5}))
    assert [p.title for p in trend_panels(report, history)] == [
        "grounding_f1",
        "m",
        "retired_metric",
    ]
