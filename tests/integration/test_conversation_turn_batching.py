"""An LLM judge in batched mode verifies the turns of one conversation in one call, through
the loopback server and the real openai SDK: the calls it makes are the calls the dry run
counts, each turn's verdicts are those of judging the turn alone, and a joint reply that
cites another turn's context falls back to a call per turn."""

import json
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_openai, scripted_reply

import vera
from vera.conversations import estimate_conversations, evaluate_conversations
from vera.datasets import consistency_checks, open_dataset
from vera.plan import Settings, build_plan
from vera.results import Report
from vera.run import Bindings, estimate_plan
from vera.types import Sample

JUDGE = "openai:gpt-4o-mini"
TURN_KEYS = ("turn_group", "turn_group_size")


def _settings(loopback: LoopbackServer) -> Settings:
    return Settings(
        judge=JUDGE,
        judge_mode="batched",
        judge_base_url=loopback.openai_url,
        cache=False,
        history=False,
    )


def _alone(samples: list[Sample]) -> list[Sample]:
    """The turn samples without their group and conversation: each judged on its own, as
    before batching (and, no conversation turn, with no consistency pass)."""
    dropped = {*TURN_KEYS, "conversation_id"}
    return [
        s.model_copy(update={"metadata": {k: v for k, v in s.metadata.items() if k not in dropped}})
        for s in samples
    ]


def _verdicts(report: Report) -> dict[str, list[tuple[Any, ...]]]:
    assert all(s.status.value == "scored" for s in report.samples), report.samples
    return {
        s.id: [(c.text, c.verdict, c.context_index, c.evidence) for c in s.claims]
        for s in report.samples
    }


@pytest.fixture
def turns() -> list[Sample]:
    return list(open_dataset("conversations"))


def test_batched_turns_cost_a_call_per_conversation_and_the_dry_run_counts_them(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, turns: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = _settings(loopback)
    groups = {s.metadata["turn_group"] for s in turns}
    estimate = estimate_plan(
        build_plan(metrics=["faithfulness"], settings=settings), Bindings(data=open_dataset(turns))
    )
    assert loopback.request_count == 0
    report = vera.evaluate(turns, ["faithfulness"], JUDGE, settings=settings)
    assert len(report.samples) == len(turns) == 36
    _verdicts(report)
    # One extraction per turn, then one verification per conversation: not 2 per turn; and
    # the same for the consistency pass over the turns with an earlier one.
    checks = consistency_checks(turns)
    check_groups = {s.metadata["turn_group"] for s in checks}
    made = len(turns) + len(groups) + len(checks) + len(check_groups)
    assert loopback.request_count == made < 2 * (len(turns) + len(checks))
    assert estimate.calls == loopback.request_count
    assert report.judge_details["usage"]["calls"] == loopback.request_count
    assert "verify_turns" in report.judge_details["prompt_versions"]


def test_each_turn_gets_the_verdicts_of_judging_it_alone(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, turns: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = _settings(loopback)
    together = vera.evaluate(turns, ["faithfulness"], JUDGE, settings=settings)
    joint_calls = loopback.request_count
    alone = vera.evaluate(_alone(turns), ["faithfulness"], JUDGE, settings=settings)
    assert loopback.request_count - joint_calls == 2 * len(turns)
    assert _verdicts(together) == _verdicts(alone)
    # The planted contradiction ("60") is found in the joint call as in the turn's own.
    contradicted = [
        c for s in together.samples for c in s.claims if c.verdict.value == "CONTRADICTED"
    ]
    assert contradicted


def _cites_the_first_turn(request: Recorded) -> Reply:
    """A model that, asked about several turns at once, cites the first turn's context for
    every claim: evidence the later turns may not rely on."""
    prompt = request.json["messages"][-1]["content"]
    if "Turn 1: judge these claims against" not in prompt:
        return scripted_openai(request)
    reply = scripted_reply(prompt)
    for verdict in reply["verdicts"]:
        verdict["sentence"] = "1.1"
    return ok_openai(json.dumps(reply))


def test_a_joint_reply_citing_another_turns_context_falls_back_to_a_call_per_turn(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, turns: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = _cites_the_first_turn
    settings = _settings(loopback)
    together = vera.evaluate(turns, ["faithfulness"], JUDGE, settings=settings)
    groups = {s.metadata["turn_group"] for s in turns}
    first_turns = {next(s.id for s in turns if s.metadata["turn_group"] == g) for g in groups}
    # Every turn but each conversation's first cited a context it cannot see: asked again alone.
    # The consistency pass's checks, each conversation's first turn left out, fall back too.
    later = len(turns) - len(first_turns)
    checks = consistency_checks(turns)
    check_groups = {s.metadata["turn_group"] for s in checks}
    later_checks = len(checks) - len(check_groups)
    made = len(turns) + len(groups) + later + len(checks) + len(check_groups) + later_checks
    assert loopback.request_count == made
    loopback.default = scripted_openai
    alone = vera.evaluate(_alone(turns), ["faithfulness"], JUDGE, settings=settings)
    assert _verdicts(together) == _verdicts(alone)


def test_a_turn_that_fails_before_verification_does_not_hold_up_its_conversation(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, turns: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    broken = turns[1]
    assert broken.metadata["turn_group"] == turns[0].metadata["turn_group"]

    def garbled_extraction(request: Recorded) -> Reply:
        prompt = request.json["messages"][-1]["content"]
        if "<answer>" in prompt and (broken.response or "") in prompt:
            return ok_openai("not json at all")
        return scripted_openai(request)

    loopback.default = garbled_extraction
    report = vera.evaluate(turns, ["faithfulness"], JUDGE, settings=_settings(loopback))
    status = {s.id: s.status.value for s in report.samples}
    assert status.pop(broken.id) == "error"
    assert set(status.values()) == {"scored"}


def test_the_conversation_estimate_counts_the_batched_calls_of_both_passes(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = _settings(loopback)
    estimate = estimate_conversations("conversations", judge=JUDGE, settings=settings)
    assert loopback.request_count == 0
    result = evaluate_conversations("conversations", judge=JUDGE, settings=settings)
    assert result.consistency is not None
    assert abs(estimate.calls - loopback.request_count) <= 0.05 * loopback.request_count
    # Fewer than two calls a turn in each pass (36 turns, then 24 with an earlier turn).
    assert loopback.request_count < 2 * (36 + 24)


def test_the_dry_run_prices_the_same_verdicts_in_fewer_calls(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, turns: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    plan = build_plan(metrics=["faithfulness"], settings=_settings(loopback))
    run = estimate_plan(plan, Bindings(data=open_dataset(turns)))
    assert [p.name for p in run.passes] == ["dataset responses", "consistency check"]
    assert run.passes[1].samples == len(consistency_checks(turns)) == 24
    # Without their conversation the turns keep their groups but have no consistency pass.
    grouped = [
        s.model_copy(
            update={"metadata": {k: v for k, v in s.metadata.items() if k != "conversation_id"}}
        )
        for s in turns
    ]
    together = estimate_plan(plan, Bindings(data=open_dataset(grouped)))
    alone = estimate_plan(plan, Bindings(data=open_dataset(_alone(turns))))
    assert loopback.request_count == 0
    assert together.calls == run.passes[0].judge_calls < alone.calls == 2 * len(turns)
    # Every claim's verdict is still written, only in one reply per conversation: in the
    # named fields verify_turns asks for, which cost more a verdict than the compact rows of
    # verify_claims (docs/cost.md), so never fewer tokens than alone.
    assert together.completion_tokens >= alone.completion_tokens
