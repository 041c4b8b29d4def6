"""`estimate_plan`: the dry run of a plan, priced by the judge's own plan of calls."""

from typing import Any

import pytest

from vera import Bindings, RunEstimate, Sample, Settings, estimate_plan
from vera._plan import build_plan
from vera.datasets import open_dataset
from vera.providers import Price, PriceTable
from vera.providers._managed import CHARS_PER_TOKEN

WHITEBOX = "the providers' own clients, retries, cache and batches"

# The metric that needs each piece of judge work, to ask for exactly that piece.
NEED_METRICS = {
    "claims": "faithfulness",
    "relevance": "context_relevance",
    "reference_in_response": "answer_correctness",
    "reference_in_contexts": "context_recall",
}


def estimate_run(
    rows: list[Sample],
    judge: str,
    prices: PriceTable | None = None,
    *,
    metrics: tuple[str, ...] = ("faithfulness",),
    mode: Any = "batched",
    draws: int = 1,
) -> RunEstimate:
    settings = Settings(judge=judge, judge_mode=mode, judge_samples=draws, history=False)
    plan = build_plan(metrics=list(metrics), settings=settings)
    return estimate_plan(plan, Bindings(data=open_dataset(rows)), prices)


def sample(sid: str, response: str | None, context: str = "c" * 400) -> Sample:
    return Sample(id=sid, query="q" * 40, response=response, contexts=[context])


def test_offline_costs_nothing() -> None:
    estimate = estimate_run([sample("a", "One. Two.")], "offline")
    assert (estimate.calls, estimate.cost_usd) == (0, 0.0)


def test_llm_estimate_scales_with_text_and_counts_two_calls_per_sample() -> None:
    prices = PriceTable({"openai:m": Price(input=1.0, output=1.0)})
    short = estimate_run([sample("a", "Paris is in France.")], "openai:m", prices)
    long = estimate_run([sample("a", "Paris is in France. " * 20, "c" * 4000)], "openai:m", prices)
    assert short.calls == 2 and long.calls == 2
    assert long.prompt_tokens - short.prompt_tokens >= 3600 // CHARS_PER_TOKEN
    assert long.completion_tokens > short.completion_tokens
    assert short.cost_usd == pytest.approx((short.prompt_tokens + short.completion_tokens) / 1e6)


def test_samples_without_response_are_not_counted_and_unknown_price_is_none() -> None:
    estimate = estimate_run([sample("a", None), sample("b", "Text here.")], "openai:llama")
    assert (estimate.samples, estimate.calls, estimate.cost_usd) == (1, 2, None)


def test_calls_follow_the_judge_mode_and_draws() -> None:
    rows = [sample("a", "Paris is in France. It has 2 million people."), sample("b", "Lyon.")]
    rows.append(sample("c", "Nice is sunny.", context="x" * 100))

    def calls(mode: str, draws: int = 1) -> int:
        return estimate_run(rows, "openai:m", mode=mode, draws=draws).calls

    claims = 2 + 1 + 1  # the offline segmenter's count on each response
    assert calls("batched") == 2 * 3
    assert calls("batched", draws=3) == 3 + 3 * 3
    assert calls("single_call") == 3
    assert calls("single_call", draws=2) == 3 + 3
    assert calls("per_claim") == 3 + claims
    assert calls("truths") == 3 + 2 + 3  # two distinct context sets
    single = estimate_run(rows, "openai:m", mode="single_call")
    batched = estimate_run(rows, "openai:m")
    assert single.prompt_tokens < batched.prompt_tokens


def test_calls_follow_the_judge_work_the_metrics_need() -> None:
    from vera.metrics import Need

    with_reference = Sample(
        id="r", query="q", response="A is 1. B is 2.", contexts=["c", "d"], reference="A is 1."
    )
    rows = [with_reference, sample("n", "No reference here.")]

    def calls(*needs: Need) -> int:
        metrics = tuple(NEED_METRICS[need.value] for need in needs) or ("abstention",)
        return estimate_run(rows, "openai:m", metrics=metrics).calls

    assert calls(Need.CLAIMS) == 4
    assert calls(Need.CLAIMS, Need.RELEVANCE) == 4 + 2
    # The reference is split once (1), checked in the response both ways (2) and in the
    # contexts (1); the sample without a reference costs nothing more.
    assert calls(Need.CLAIMS, Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS) == 4 + 4
    assert calls(Need.REFERENCE_IN_RESPONSE) == 1 + 1 + 2
    assert calls() == 0
