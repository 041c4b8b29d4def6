"""The three baselines end to end on the bundled legal data, with the offline judge.

`FakeHallucinatingGenerator` is a fake generator written for this test: it answers like the
extractive generator, then adds a sentence no document supports, so the metrics must show the
baselines that verify removing it and the one that does not keeping it.
"""

import itertools

import pytest

import vera
from vera import BASELINES, build_baseline
from vera._baselines import ExtractiveGenerate
from vera._results import compare_reports
from vera.judges import OfflineJudge
from vera.metrics import create_metric
from vera.pipelines import RagState

WHITEBOX = "the report builder, on hand-made results"

INVENTED = "Every party must also hold a $9 million cyber insurance policy with Lloyd's."


class FakeHallucinatingGenerator:
    name = "generate:fake-hallucinating"

    def __init__(self) -> None:
        self.extractive = ExtractiveGenerate(cite=True)

    async def __call__(self, state: RagState) -> RagState:
        state = await self.extractive(state)
        if state.abstained:
            return state
        return state.evolve(response=f"{state.response} {INVENTED}")


@pytest.fixture(scope="module")
def reports() -> dict[str, vera.Report]:
    data = vera.load_dataset("legal")
    samples = [s for s in itertools.islice(data, 20)]
    judge = OfflineJudge()
    metrics = [create_metric(n) for n in ("faithfulness", "hallucination_rate")]
    return {
        name: vera.evaluate(
            samples,
            metrics,
            judge,
            pipeline=build_baseline(
                name, data.documents, judge, generator=FakeHallucinatingGenerator()
            ),
        )
        for name in BASELINES
    }


def test_metrics_separate_the_baselines(reports: dict[str, vera.Report]) -> None:
    naive, simple, full = (reports[n] for n in BASELINES)
    assert all(r.counts["scored"] == 20 for r in reports.values())
    assert naive.metrics["hallucination_rate"] >= 0.2
    assert simple.metrics["hallucination_rate"] < naive.metrics["hallucination_rate"] / 2
    assert full.metrics["hallucination_rate"] == 0.0
    # Faithfulness is the product of the claims' probabilities of support: the verified
    # answers, extracts of the documents, score near 1 and every one passes.
    assert full.metrics["faithfulness"] >= 0.9 > naive.metrics["faithfulness"]
    assert all(r.results["faithfulness"].passed for r in full.samples)

    def invented(report: vera.Report) -> int:
        return sum("cyber insurance" in c.text for r in report.samples for c in r.claims)

    assert invented(naive) > 0 and invented(full) == 0


def test_the_difference_is_significant(reports: dict[str, vera.Report]) -> None:
    result = compare_reports(reports["vera"], reports["naive-rag"])["hallucination_rate"]
    assert result.difference is not None and result.difference < 0
    assert result.ci_high is not None and result.ci_high < 0
    assert result.p_value is not None and result.p_value < 0.01
    assert result.improvement == "-100.0%"


def test_each_step_is_timed_and_verification_costs_no_call_offline(
    reports: dict[str, vera.Report],
) -> None:
    steps = reports["vera"].samples[0].steps
    assert [s.name for s in steps] == [
        "retrieve:bm25@3",
        "generate:fake-hallucinating",
        "verify@0.80",
    ]
    assert all(s.latency_ms >= 0 and s.judge_calls == 0 for s in steps)
