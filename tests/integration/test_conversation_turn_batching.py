"""An LLM judge judges the turns of one conversation together, through the loopback server and
the real openai SDK: batched mode verifies them in one call, single_call mode extracts and
verifies them in one call. The calls it makes are the calls the dry run counts, in every mode;
each turn's verdicts are those of judging the turn alone; a joint reply that cites another
turn's context falls back to a call per turn (batched) or is asked again (single_call), and a
turn the reply still leaves out is an error, never a pass."""

import json
import re
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_openai, scripted_reply, section

import vera
from vera import (
    Bindings,
    Report,
    Sample,
    Settings,
    estimate_conversations,
    estimate_plan,
    evaluate_conversations,
)
from vera._plan import build_plan
from vera.datasets import open_dataset
from vera.datasets._conversations import consistency_checks

WHITEBOX = "how conversations become turn samples and consistency checks"

JUDGE = "openai:gpt-4o-mini"
TURN_KEYS = ("turn_group", "turn_group_size")


def _settings(loopback: LoopbackServer, mode: Any = "batched", **more: Any) -> Settings:
    return Settings(
        judge=JUDGE,
        judge_mode=mode,
        judge_base_url=loopback.openai_url,
        cache=False,
        history=False,
        **more,
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
    claims = section(prompt, "claims").split("\nTurn 2:")[0]
    first_turn = {int(n) for n in re.findall(r"^(\d+)\. ", claims, flags=re.M)}
    for verdict in reply["verdicts"]:
        if verdict["claim"] not in first_turn:
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


# The calls each mode makes on the bundled conversations (36 turns in 12 conversations):
# batched, an extraction a turn and a verification a conversation; single_call, one call a
# conversation; per_claim and truths, each turn on its own.
CALLS = {"batched": 48, "single_call": 12, "per_claim": 75, "truths": 108}


@pytest.fixture
def grouped(turns: list[Sample]) -> list[Sample]:
    """The turns in their groups, without their conversation: the judge's calls for the turns
    alone, with no pass over the conversations (consistency) beside them."""
    return [
        s.model_copy(
            update={"metadata": {k: v for k, v in s.metadata.items() if k != "conversation_id"}}
        )
        for s in turns
    ]


def _conv_01(samples: list[Sample]) -> list[Sample]:
    return [s for s in samples if s.id.startswith("conv-01/")]


@pytest.mark.parametrize("mode", sorted(CALLS))
def test_the_dry_run_counts_the_calls_each_mode_makes(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample], mode: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = _settings(loopback, mode)
    estimate = estimate_plan(
        build_plan(metrics=["faithfulness"], settings=settings),
        Bindings(data=open_dataset(grouped)),
    )
    assert loopback.request_count == 0
    report = vera.evaluate(grouped, ["faithfulness"], JUDGE, settings=settings)
    _verdicts(report)
    assert estimate.calls == loopback.request_count == CALLS[mode]


def test_single_call_judges_a_conversation_in_one_call_with_the_verdicts_of_each_turn_alone(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    settings = _settings(loopback, "single_call")
    together = vera.evaluate(grouped, ["faithfulness"], JUDGE, settings=settings)
    assert loopback.request_count == len({s.metadata["turn_group"] for s in grouped})
    assert "single_call_turns" in together.judge_details["prompt_versions"]
    alone = vera.evaluate(_alone(grouped), ["faithfulness"], JUDGE, settings=settings)
    assert loopback.request_count == 12 + len(grouped)
    assert "single_call_turns" not in alone.judge_details["prompt_versions"]
    assert _verdicts(together) == _verdicts(alone)
    prompt = next(r for r in loopback.requests if "<turns>" in _prompt(r))
    # Each context text is shown once, however many turns may rely on it.
    contexts = _section(_prompt(prompt), "contexts")
    blocks = [b for b in contexts.split("\n\n") if b]
    texts = [b.split("\n", 1)[1] for b in blocks]
    assert len(texts) == len(set(texts))


def test_a_conversation_too_long_for_one_call_splits_and_the_dry_run_counts_the_same(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = scripted_openai
    # Half a reply budget of 240 tokens holds about two turns' claims and verdicts (some 55
    # tokens a turn), not a whole conversation's.
    settings = _settings(loopback, "single_call", judge_max_tokens=240)
    estimate = estimate_plan(
        build_plan(metrics=["faithfulness"], settings=settings),
        Bindings(data=open_dataset(grouped)),
    )
    report = vera.evaluate(grouped, ["faithfulness"], JUDGE, settings=settings)
    _verdicts(report)
    assert 12 < loopback.request_count < len(grouped)
    assert estimate.calls == loopback.request_count
    per_call = [_prompt(r).count("<answer>\n") for r in loopback.requests]
    assert max(per_call) > 1


def _prompt(request: Recorded) -> str:
    return str(request.json["messages"][-1]["content"])


def _section(prompt: str, tag: str) -> str:
    return prompt.rsplit(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0]


def _answers_turns(request: Recorded, change: Any) -> Reply:
    """The scripted reply to a request, its turns changed by `change` where it asks for
    several turns at once."""
    prompt = str(request.json["messages"][1]["content"])  # a re-ask's too: the first ask
    if "<turns>" not in prompt:
        return scripted_openai(request)
    reply = scripted_reply(prompt)
    # A re-ask has four messages: the first ask, the reply and what was wrong with it.
    change(reply["turns"], len(request.json["messages"]))
    return ok_openai(json.dumps(reply))


def test_a_reply_missing_a_turn_is_asked_again_once_and_then_that_turn_is_an_error(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    conversation = _conv_01(grouped)
    assert len(conversation) == 3

    def drop_turn_two(found: list[dict[str, Any]], _: int) -> None:
        found[:] = [t for t in found if t["turn"] != 2]

    loopback.default = lambda r: _answers_turns(r, drop_turn_two)
    report = vera.evaluate(
        conversation, ["faithfulness"], JUDGE, settings=_settings(loopback, "single_call")
    )
    assert loopback.request_count == 2
    reask = _prompt(loopback.requests[1])
    assert "turn 2 is given 0 times" in reask
    status = {s.id: s.status.value for s in report.samples}
    assert status == {
        "conv-01/turn-5": "scored",
        "conv-01/turn-7": "error",
        "conv-01/turn-9": "scored",
    }
    [failed] = [s for s in report.samples if s.status.value == "error"]
    assert "invalid twice" in (failed.error or "")


def test_a_reply_for_a_turn_not_asked_is_asked_again_and_the_answer_kept(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    conversation = _conv_01(grouped)

    def extra_turn_first_time(found: list[dict[str, Any]], messages: int) -> None:
        if messages == 2:  # the first ask: system and user; a re-ask has four messages
            found.append({"turn": 7, "claims": [{"text": "Invented.", "verdict": "NO_EVIDENCE"}]})

    loopback.default = lambda r: _answers_turns(r, extra_turn_first_time)
    report = vera.evaluate(
        conversation, ["faithfulness"], JUDGE, settings=_settings(loopback, "single_call")
    )
    assert loopback.request_count == 2
    assert "turn 7 does not exist: there are 3 turns" in _prompt(loopback.requests[1])
    _verdicts(report)


def test_a_turn_citing_a_context_it_may_not_rely_on_is_asked_again_then_an_error(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    conversation = _conv_01(grouped)

    def cite_the_last_context(request: Recorded) -> Reply:
        prompt = str(request.json["messages"][1]["content"])
        if "<turns>" not in prompt:
            return scripted_openai(request)
        reply = scripted_reply(prompt)
        # The last context is the user's last message: only the last turn may rely on it.
        last = _section(prompt, "contexts").count("\n\n[") + 1
        for claim in reply["turns"][0]["claims"]:
            claim["sentence"] = f"{last}.1"
        return ok_openai(json.dumps(reply))

    loopback.default = cite_the_last_context
    settings = _settings(loopback, "single_call")
    report = vera.evaluate(conversation, ["faithfulness"], JUDGE, settings=settings)
    assert loopback.request_count == 2
    assert "which that turn may not rely on" in _prompt(loopback.requests[1])
    status = {s.id: s.status.value for s in report.samples}
    assert status.pop("conv-01/turn-5") == "error"
    assert set(status.values()) == {"scored"}


def test_a_joint_reply_cut_off_at_max_tokens_is_asked_again_in_halves(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, grouped: list[Sample]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    conversation = _conv_01(grouped)
    cut = []

    def cut_the_first_joint_reply(request: Recorded) -> Reply:
        prompt = _prompt(request)
        if "<turns>" in prompt and not cut:
            cut.append(prompt.count("<answer>\n"))
            return ok_openai('{"turns": [{"turn": 1, "claims": [', finish_reason="length")
        return scripted_openai(request)

    loopback.default = cut_the_first_joint_reply
    report = vera.evaluate(
        conversation, ["faithfulness"], JUDGE, settings=_settings(loopback, "single_call")
    )
    _verdicts(report)
    # Three turns cut off; then the first alone (single_call's own prompt), the other two
    # together.
    asked = [_prompt(r).count("<answer>\n") for r in loopback.requests]
    assert cut == [3] and asked[0] == 3 and sorted(asked[1:]) == [1, 2]
