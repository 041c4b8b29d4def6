"""An LLM judge over conversations, through the loopback server: each assistant turn is a
sample of the work plan, so the dry run counts the calls the run makes."""

from typing import Any

import pytest
from tests.support.loopback import LoopbackServer
from tests.support.scripted import scripted_openai

import vera
from vera import Bindings, Settings, estimate_conversations, estimate_plan, evaluate_conversations
from vera._plan import build_plan
from vera.datasets import open_dataset

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

JUDGE = "openai:gpt-4o-mini"


@pytest.mark.parametrize("mode", ["single_call", "batched", "per_claim", "truths"])
def test_dry_run_counts_a_conversations_calls(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, mode: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = Settings(
        judge=JUDGE,
        judge_mode=mode,
        judge_base_url=loopback.openai_url,
        cache=False,
        history=False,
    )
    turns = list(open_dataset("conversations"))
    estimate = estimate_plan(
        build_plan(metrics=["faithfulness"], settings=settings),
        Bindings(data=open_dataset(turns)),
    )
    assert loopback.request_count == 0
    report = vera.evaluate("conversations", ["faithfulness"], JUDGE, settings=settings)
    assert len(report.samples) == 36
    assert all(s.status.value == "scored" for s in report.samples), report.samples
    assert abs(estimate.calls - loopback.request_count) <= 0.05 * loopback.request_count
    assert report.judge_details["usage"]["calls"] == loopback.request_count


def test_estimate_conversations_counts_both_passes_calls(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = Settings(
        judge=JUDGE,
        judge_mode="single_call",
        judge_base_url=loopback.openai_url,
        cache=False,
        history=False,
    )
    estimate = estimate_conversations("conversations", judge=JUDGE, settings=settings)
    assert loopback.request_count == 0
    result = evaluate_conversations("conversations", judge=JUDGE, settings=settings)
    assert result.consistency is not None
    # One call a conversation in each pass (12 conversations, each with an earlier assistant
    # turn to check against), not one a turn (36 turns, then 24).
    assert estimate.consistency is not None
    assert (estimate.turns.calls, estimate.consistency.judge_calls) == (12 + 12, 12)
    assert abs(estimate.calls - loopback.request_count) <= 0.05 * loopback.request_count
