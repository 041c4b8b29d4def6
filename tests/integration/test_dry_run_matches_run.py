"""The dry run's count of an LLM judge's calls is the count a real run makes over HTTP.

The run goes to the loopback server, whose scripted model answers every prompt; the dry run
runs the same judge against a recording model. Both read the same work plan.
"""

from typing import Any

import pytest
from tests.support.loopback import LoopbackServer
from tests.support.scripted import scripted_openai

import vera
from vera import Bindings, Sample, Settings, estimate_plan
from vera._plan import build_plan
from vera.datasets import open_dataset
from vera.metrics import Rubric

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

JUDGE = "openai:gpt-4o-mini"
SHARED = ["Paris is the capital of France.", "Lyon is a city in France."]
SAMPLES = [
    Sample(
        id="a",
        query="Where is Paris?",
        response="Paris is in France. Paris has a river.",
        contexts=SHARED,
        reference="Paris is in France. Paris is the capital.",
    ),
    Sample(
        id="b",
        query="Where is Lyon?",
        response="Lyon is in France. Lyon is large. Lyon has two rivers.",
        contexts=SHARED,  # the same context set: truths are asked for once
    ),
    Sample(
        id="c",
        query="How long is the refund window?",
        response="The refund window is 60 days.",
        contexts=["The refund window is 30 days."],
        reference="The refund window is 30 days.",
    ),
]
METRICS = ["faithfulness", "context_relevance", "answer_correctness", "context_recall"]


@pytest.mark.parametrize(
    ("mode", "draws"),
    [("batched", 1), ("batched", 2), ("per_claim", 1), ("truths", 1), ("single_call", 2)],
)
def test_the_dry_run_counts_the_calls_a_real_run_makes(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, mode: Any, draws: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = Settings(
        judge=JUDGE,
        judge_mode=mode,
        judge_samples=draws,
        judge_temperature=0.5 if draws > 1 else 0.0,
        judge_base_url=loopback.openai_url,
        cache=False,
        history=False,
    )
    estimate = estimate_plan(
        build_plan(metrics=METRICS, settings=settings), Bindings(data=open_dataset(SAMPLES))
    )
    assert loopback.request_count == 0  # the dry run called nothing
    report = vera.evaluate(SAMPLES, METRICS, JUDGE, settings=settings, concurrency=1)
    assert all(s.status.value == "scored" for s in report.samples), report.samples
    assert loopback.request_count > len(SAMPLES)
    assert estimate.calls == loopback.request_count
    assert report.judge_details["usage"]["calls"] == estimate.calls


@pytest.mark.parametrize("batch_rubrics", [True, False], ids=["batched", "alone"])
def test_the_dry_run_counts_the_rubrics_calls_ridden_or_alone(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, batch_rubrics: bool
) -> None:
    """A claim-scope and an answer-scope rubric: their checklists, then their items in each
    sample's verification call (batched) or in a call each: counted alike by the dry run and
    the run."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    rubric = Rubric(name="plain", criteria="Never says 'must'. Names no 'river'.", scope="claim")
    whole = Rubric(name="whole", criteria="Answers the question.")
    metrics: list[Any] = ["faithfulness", rubric, whole]
    options: dict[str, Any] = {
        "judge_base_url": loopback.openai_url,
        "judge_replies": "compact",  # a hosted model on loopback: rubrics ride compact calls
        "judge_batch_rubrics": batch_rubrics,
        "cache": False,
        "history": False,
        "concurrency": 1,
    }
    estimate = estimate_plan(*vera.plan_evaluation(SAMPLES, metrics, JUDGE, **options))
    assert loopback.request_count == 0
    report = vera.evaluate(SAMPLES, metrics, JUDGE, **options)
    assert all(s.status.value == "scored" for s in report.samples), report.samples
    # The checklists, then per sample an extraction and a verification, and alone a call for
    # each rubric.
    assert loopback.request_count == 2 + len(SAMPLES) * (2 if batch_rubrics else 4)
    assert estimate.calls == loopback.request_count
