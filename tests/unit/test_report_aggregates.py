"""Aggregates over per-sample results: intervals, groups, latency, and never a NaN."""

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera.metrics.base import MetricResult, MetricStatus
from vera.report import SampleResult, SampleStatus, build_report


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
