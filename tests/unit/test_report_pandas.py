"""`Report.to_pandas()` and `Report.claims_to_pandas()`: tables that agree with the report."""

import math
import sys

import pytest
from tests.support.extras import without

import vera
from vera import ConfigError, Report, Sample, SampleStatus
from vera._results import CLAIM_COLUMNS, build_report
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._hallucination import HallucinationRate

WHITEBOX = "the report builder, on hand-made results"

# The pandas extra (pip install -e '.[test-all]'); the light test install skips this module.
pd = pytest.importorskip("pandas", reason=without("pandas"))

SAMPLES = [
    Sample(
        id="paris",
        query="What is the capital of France?",
        response="Paris is the capital of France. Paris has ten million cats.",
        contexts=["Paris is the capital of France."],
        category="geo",
        latency_ms=120.0,
        metadata={"team": "x"},
    ),
    Sample(
        id="water",
        query="At what temperature does water boil?",
        response="Water boils at 100 degrees Celsius at sea level.",
        contexts=["At sea level, water boils at 100 degrees Celsius."],
        metadata={"team": "y"},
    ),
    # No response: the sample needs a pipeline and is not scored.
    Sample(id="pending", query="Who wrote Hamlet?", contexts=["Shakespeare wrote Hamlet."]),
]


@pytest.fixture(scope="module")
def report() -> Report:
    return vera.evaluate(SAMPLES, [Faithfulness(), HallucinationRate()], group_by=["team"])


def _none(value: object) -> object:
    """A table cell as the report holds it: pandas shows a missing value as NaN or None."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def test_one_row_per_sample_with_metric_and_group_columns(report: Report) -> None:
    frame = report.to_pandas()
    assert list(frame.columns) == [
        "id",
        "status",
        "category",
        "error",
        "latency_ms",
        "faithfulness",
        "faithfulness_passed",
        "hallucination_rate",
        "hallucination_rate_passed",
        "team",
    ]
    assert list(frame["id"]) == [r.id for r in report.samples] == ["paris", "water", "pending"]
    assert list(frame["status"]) == ["scored", "scored", "needs_pipeline"]


def test_cells_agree_with_the_report(report: Report) -> None:
    frame = report.to_pandas().set_index("id")
    for result in report.samples:
        row = frame.loc[result.id]
        assert _none(row["category"]) == result.category
        assert _none(row["latency_ms"]) == result.latency_ms
        assert _none(row["error"]) == result.error
        assert _none(row["team"]) == result.group_values.get("team")
        for name in report.metric_summary:
            assert _none(row[name]) == result.scores.get(name)
            metric = result.results.get(name)
            assert _none(row[f"{name}_passed"]) == (metric.passed if metric else None)
    # The run really scored something, so the equalities above compared numbers too.
    paris = frame.loc["paris"]
    assert paris["faithfulness"] == report.sample("paris").scores["faithfulness"]
    assert paris["hallucination_rate"] > 0
    assert _none(frame.loc["pending"]["faithfulness"]) is None
    assert (paris["category"], paris["team"]) == ("geo", "x")


def test_one_row_per_claim(report: Report) -> None:
    frame = report.claims_to_pandas()
    assert list(frame.columns) == list(CLAIM_COLUMNS)
    claims = [(r.id, c) for r in report.samples for c in r.claims]
    assert len(frame) == len(claims) >= 3
    for (_, row), (sample_id, claim) in zip(frame.iterrows(), claims, strict=True):
        assert (row["sample_id"], row["claim_id"], row["text"]) == (sample_id, claim.id, claim.text)
        assert row["verdict"] == claim.verdict.value
        assert (row["evidence"], row["reason"]) == (claim.evidence, claim.reason)
        assert _none(row["context_index"]) == claim.context_index
        assert _none(row["quote_found"]) == claim.quote_found
        assert _none(row["agreement"]) == claim.agreement
        assert _none(row["entailment"]) == claim.entailment
        start, end = claim.span if claim.span else (None, None)
        assert (_none(row["span_start"]), _none(row["span_end"])) == (start, end)
    verdicts = set(frame[frame["sample_id"] == "paris"]["verdict"])
    assert "FULLY_SUPPORTED" in verdicts and len(verdicts) == 2


def test_columns_exist_with_no_rows() -> None:
    empty = build_report(
        dataset="d", judge="j", version="v", thresholds={"faithfulness": 0.5}, results=[]
    )
    samples, claims = empty.to_pandas(), empty.claims_to_pandas()
    assert (len(samples), len(claims)) == (0, 0)
    assert list(samples.columns)[-2:] == ["faithfulness", "faithfulness_passed"]
    assert list(claims.columns) == list(CLAIM_COLUMNS)


def test_a_group_key_that_clashes_with_a_column_is_prefixed() -> None:
    report = vera.evaluate(
        [Sample(id="a", response="x", metadata={"status": "draft"})],
        [Faithfulness()],
        group_by=["status"],
    )
    frame = report.to_pandas()
    assert list(frame["status"]) == [SampleStatus.SCORED.value]
    assert list(frame["group_status"]) == ["draft"]


def test_without_pandas_the_error_names_the_install_command(
    report: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    for table in (report.to_pandas, report.claims_to_pandas):
        with pytest.raises(ConfigError, match=r"pip install 'vera-eval\[pandas\]'"):
            table()


def test_the_frame_is_a_real_dataframe(report: Report) -> None:
    assert isinstance(report.to_pandas(), pd.DataFrame)
    assert isinstance(report.claims_to_pandas(), pd.DataFrame)
