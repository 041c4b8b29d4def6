"""The runner: failures stay with their sample, aggregates never hold NaN, work is shared.

Judges here are fakes written for each test (FakeJudge or small classes named Fake…); they
script what a judge says so the runner's behaviour can be asserted exactly.
"""

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import ClassVar

import pytest

import vera
from vera import Claim, ClaimVerdict, ConfigError, Sample, SampleStatus, aevaluate, evaluate
from vera.metrics import ClaimAnalysis, MetricResult, MetricStatus, Need, create_metric
from vera.metrics._faithfulness import Faithfulness
from vera.testing import FakeJudge

WHITEBOX = "the built-in metric classes behind the names"


def sample(sid: str, response: str | None, category: str | None = None) -> Sample:
    return Sample(id=sid, query="q", response=response, contexts=["ctx"], category=category)


class FakeFlakyJudge(FakeJudge):
    """A fake that fails in scripted ways for particular responses."""

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        text = claims[0].text
        if text == "explodes":
            raise RuntimeError("provider unavailable")
        if text == "garbage":
            return [ClaimVerdict(c.id, "banana") for c in claims]
        if text == "drops one":
            return [ClaimVerdict(claims[0].id, "yes")]
        return await super().verify_claims(claims, contexts)


def test_failures_are_recorded_per_sample_and_the_run_goes_on() -> None:
    judge = FakeFlakyJudge(
        {
            "good": [("good", "SUPPORTED")],
            "half": [("half", "SUPPORTED"), ("bad half", "NO_EVIDENCE")],
            "explodes": [("explodes", "SUPPORTED")],
            "garbage": [("garbage", "SUPPORTED")],
            "drops one": [("drops one", "SUPPORTED"), ("second", "SUPPORTED")],
        }
    )
    samples = [
        sample("a", "good", "x"),
        sample("b", "explodes", "x"),
        sample("c", "garbage", "y"),
        sample("d", "half", "y"),
        sample("e", "drops one", "y"),
        sample("f", None, "y"),
    ]
    report = evaluate(samples, judge=judge)
    statuses = {s.id: s.status for s in report.samples}
    assert statuses == {
        "a": SampleStatus.SCORED,
        "b": SampleStatus.ERROR,
        "c": SampleStatus.ERROR,
        "d": SampleStatus.SCORED,
        "e": SampleStatus.ERROR,
        "f": SampleStatus.NEEDS_PIPELINE,
    }
    assert report.sample("b").error == "RuntimeError: provider unavailable"
    assert "unknown verdict 'banana'" in (report.sample("c").error or "")
    assert "no verdict for claim ids ['c2']" in (report.sample("e").error or "")
    assert "needs a pipeline" in (report.sample("f").error or "")
    # Aggregates use the two scored samples only, and the report counts the rest.
    assert report.metrics["faithfulness"] == pytest.approx((1.0 + 0.5) / 2)
    summary = report.metric_summary["faithfulness"]
    assert (summary.scored, summary.not_scored) == (2, 4)
    assert report.counts.model_dump() == {
        "total": 6,
        "scored": 2,
        "errors": 3,
        "needs_pipeline": 1,
        "skipped": 0,
        "invalid_rows": 0,
    }
    assert report.per_category_breakdown == {
        "x": {"faithfulness": 1.0, "count": 1},
        "y": {"faithfulness": 0.5, "count": 1},
    }


def test_all_failures_give_null_means_never_nan() -> None:
    judge = FakeFlakyJudge({"explodes": [("explodes", "SUPPORTED")]})
    report = evaluate([sample("a", "explodes"), sample("b", None)], judge=judge)
    assert report.metrics == {"faithfulness": None}
    assert report.per_category_breakdown == {}
    text = report.to_json()  # allow_nan=False: would raise on NaN
    assert "NaN" not in text
    assert json.loads(text)["metrics"]["faithfulness"] is None


def test_results_keep_input_order_under_concurrency() -> None:
    class FakeSlowJudge(FakeJudge):
        in_flight = 0
        peak = 0

        async def verify_claims(
            self, claims: Sequence[Claim], contexts: Sequence[str]
        ) -> list[ClaimVerdict]:
            FakeSlowJudge.in_flight += 1
            FakeSlowJudge.peak = max(FakeSlowJudge.peak, FakeSlowJudge.in_flight)
            await asyncio.sleep(0.02 if int(claims[0].text) % 2 else 0.001)
            FakeSlowJudge.in_flight -= 1
            return await super().verify_claims(claims, contexts)

    judge = FakeSlowJudge({str(i): [(str(i), "yes")] for i in range(30)})
    report = evaluate((sample(f"s{i}", str(i)) for i in range(30)), judge=judge, concurrency=4)
    assert [s.id for s in report.samples] == [f"s{i}" for i in range(30)]
    assert 1 < FakeSlowJudge.peak <= 4


class ClaimCount:
    """A user-defined metric: the number of claims, scaled into [0, 1]."""

    name: ClassVar[str] = "claim_count"
    description: ClassVar[str] = "number of claims / 10"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = True
    threshold = 0.0

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        n = len(analysis.claims)
        return MetricResult(
            name=self.name,
            score=min(1.0, n / 10),
            passed=True,
            status=MetricStatus.OK,
            reason=f"{n} claims",
            threshold=self.threshold,
        )


def test_claim_analysis_is_computed_once_per_sample_for_all_metrics() -> None:
    judge = FakeJudge({f"r{i}": [(f"r{i}", "yes"), (f"x{i}", "no")] for i in range(5)})
    report = evaluate(
        [sample(f"s{i}", f"r{i}") for i in range(5)], [Faithfulness(), ClaimCount()], judge
    )
    assert (judge.extract_calls, judge.verify_calls) == (5, 5)
    assert report.metrics == {"faithfulness": 0.5, "claim_count": pytest.approx(0.2)}


def test_five_claim_metrics_cost_the_judge_calls_of_one() -> None:
    judge = FakeJudge({f"r{i}": [(f"r{i}", "yes"), (f"x{i}", "no")] for i in range(4)})
    names = ["faithfulness", "hallucination_rate", "grounding_precision", "claim_count"]
    metrics = [*(create_metric(n) for n in names[:3]), ClaimCount()]
    report = evaluate([sample(f"s{i}", f"r{i}") for i in range(4)], metrics, judge)
    assert (judge.extract_calls, judge.verify_calls) == (4, 4)
    assert report.metrics["hallucination_rate"] == 0.5
    assert report.metrics["grounding_precision"] == 0.5


def test_a_metric_missing_part_of_the_protocol_is_refused_up_front() -> None:
    class Incomplete:
        name = "incomplete"
        threshold = 0.5

        def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
            raise AssertionError("never called")

    with pytest.raises(ConfigError, match="Incomplete is not a metric"):
        evaluate([sample("a", "r")], [Incomplete()], FakeJudge({}))  # type: ignore[list-item]


def test_duplicate_metric_names_are_refused() -> None:
    with pytest.raises(ValueError, match="each metric may appear once"):
        evaluate([sample("a", "r")], [Faithfulness(), Faithfulness(threshold=0.9)], FakeJudge({}))


async def test_evaluate_refuses_inside_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match=r"await vera\.aevaluate"):
        evaluate([sample("a", "r")], judge=FakeJudge({"r": [("r", "yes")]}))
    report = await aevaluate([sample("a", "r")], judge=FakeJudge({"r": [("r", "yes")]}))
    assert report.metrics["faithfulness"] == 1.0


def test_default_judge_is_offline_and_reports_its_name() -> None:
    report = evaluate(
        [
            Sample(
                id="p", response="Paris is in France.", contexts=["Paris is the capital of France."]
            )
        ]
    )
    assert report.judge == "offline"
    assert report.sample("p").claims[0].evidence == "Paris is the capital of France."


def test_progress_callback_sees_every_sample() -> None:
    seen: list[str] = []
    judge = FakeJudge({"r": [("r", "yes")]})
    evaluate(
        [sample("a", "r"), sample("b", None)], judge=judge, progress=lambda r: seen.append(r.id)
    )
    assert sorted(seen) == ["a", "b"]


def test_every_name_of_the_front_is_defined() -> None:
    # vera's names are pinned with the other public modules', in test_public_surfaces.py
    for name in vera.__all__:
        assert hasattr(vera, name), name
    from vera.judges import Judge, OfflineJudge

    assert vera.metrics.create_metric("faithfulness").name == "faithfulness"
    assert isinstance(OfflineJudge(), Judge)
    assert isinstance(FakeJudge({}), Judge)


def test_an_error_reading_samples_is_raised_as_itself() -> None:
    def rows() -> Iterator[Sample]:
        yield sample("a", "r")
        raise vera.DatasetRowError("d.jsonl", "line 2", "response", "expected a string")

    with pytest.raises(vera.DatasetRowError, match=r"d\.jsonl: line 2, field 'response'"):
        evaluate(rows(), judge=FakeJudge({"r": [("r", "yes")]}))


def test_a_metric_that_returns_nan_fails_its_sample_only() -> None:
    class FakeNanMetric(ClaimCount):
        name: ClassVar[str] = "nan_metric"

        def score(self, sample: Sample, analysis: ClaimAnalysis | None) -> MetricResult:
            value = float("nan") if sample.id == "b" else 1.0
            return MetricResult(
                name=self.name,
                score=value,
                passed=True,
                status=MetricStatus.OK,
                reason="",
                threshold=0.0,
            )

    judge = FakeJudge({"r": [("r", "yes")]})
    report = evaluate([sample("a", "r"), sample("b", "r")], [FakeNanMetric()], judge)
    assert report.sample("b").status is SampleStatus.ERROR
    assert "finite number" in (report.sample("b").error or "")
    assert report.metrics == {"nan_metric": 1.0}
    assert "NaN" not in report.to_json()


class KeyRevoked(vera.RunStopError):
    """Stands in for a provider's rejected key (AuthenticationError is one)."""


class FakeRevokedKeyJudge(FakeJudge):
    """A fake judge whose key stops working at the third sample it sees."""

    def __init__(self) -> None:
        super().__init__({"A fact.": [("A fact.", "yes")]})
        self.seen = 0

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        self.seen += 1
        if self.seen >= 3:
            raise KeyRevoked("the key was rejected")
        return await super().extract_claims(response, query=query)


def test_a_run_stop_error_keeps_finished_samples_and_skips_the_rest() -> None:
    judge = FakeRevokedKeyJudge()
    samples = [sample(f"s{i}", "A fact.") for i in range(6)]
    seen: list[str] = []
    report = evaluate(samples, judge=judge, concurrency=1, progress=lambda r: seen.append(r.id))
    statuses = [r.status for r in report.samples]
    assert statuses == [SampleStatus.SCORED] * 2 + [SampleStatus.SKIPPED] * 4
    assert judge.seen == 3  # nothing started after the stop
    assert report.stopped is not None and report.stopped.planned is False
    assert report.stopped.reason == "the key was rejected"
    assert report.counts["skipped"] == 4 and report.metric_summary["faithfulness"].scored == 2
    assert "the run stopped (the key was rejected)" in (report.samples[5].error or "")
    assert seen == [f"s{i}" for i in range(6)]  # progress hears of every sample
