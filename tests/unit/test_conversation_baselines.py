"""Baselines over conversations: each replays the same conversations, is verified and scored
like the system, and is compared with it turn by turn (paired by the user turn answered)."""

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.support.cli import run_vera

from vera import (
    ConfigError,
    Conversation,
    ToolResult,
    Turn,
    estimate_conversations,
    evaluate_conversations,
)

TOOL = "Account ACME: 12 seats, 9 seats in use."
SEATS = Conversation(
    id="seats",
    turns=(
        Turn(role="user", content="How many seats does ACME have?"),
        Turn(role="tool", content=TOOL, tool_name="get_account", call_id="c1"),
        Turn(role="assistant", content="ACME has 12 seats."),
        Turn(role="user", content="And how many are in use?"),
        Turn(role="assistant", content="ACME has 9 seats in use."),
    ),
)


def _bot(in_use: int) -> object:
    """An explicit fake assistant: reads the tool, then says how many seats are in use."""

    def answer(history: Sequence[Turn]) -> Turn | str:
        if sum(t.role == "user" for t in history) == 1:
            tool = ToolResult(text=TOOL, tool_name="get_account", call_id="c1")
            return Turn(role="assistant", content="ACME has 12 seats.", tool_results=(tool,))
        return f"ACME has {in_use} seats in use."

    return answer


def _broken(history: Sequence[Turn]) -> str:
    raise RuntimeError("the bot is down")


def test_a_baseline_copying_a_tool_result_wrongly_scores_lower() -> None:
    report = evaluate_conversations(SEATS, baselines={"wrong": _bot(11), "right": _bot(9)})
    assert report.faithful_turns == 1.0
    wrong, right = report.baselines["wrong"], report.baselines["right"]
    assert wrong.faithful_turns == 0.5 and right.faithful_turns == 1.0
    assert wrong.conversations[0].first_unfaithful_turn == 4  # its own replay's numbering
    # The recorded system's turns sit at 3 and 5, the replay's at 2 and 4: paired by the
    # user turn they answer, both pairs are compared.
    faithfulness = wrong.comparison.metrics["faithfulness"]  # type: ignore[union-attr]
    assert faithfulness.paired_samples == 2
    assert faithfulness.difference == pytest.approx(0.5)  # system minus baseline
    assert right.comparison.metrics["faithfulness"].difference == 0  # type: ignore[union-attr]
    assert wrong.incomplete is None and not wrong.errors


def test_a_replayed_system_against_a_baseline_and_the_json_block() -> None:
    report = evaluate_conversations(SEATS, assistant=_bot(11), baselines={"right": _bot(9)})
    right = report.baselines["right"]
    metric = right.comparison.metrics["faithfulness"]  # type: ignore[union-attr]
    assert metric.difference == pytest.approx(-0.5) and metric.paired_samples == 2
    block = json.loads(report.turns_json())["baselines"]["right"]
    assert block["faithful_turns"] == 1.0 and block["scored_turns"] == 2
    assert block["comparison"]["faithfulness"]["paired_samples"] == 2
    assert block["conversations"][0]["id"] == "seats"
    assert "baselines" not in json.loads(evaluate_conversations(SEATS).turns_json())


def test_a_baseline_that_raises_is_incomplete_naming_it() -> None:
    report = evaluate_conversations(SEATS, baselines={"broken": _broken})
    broken = report.baselines["broken"]
    assert broken.comparison is None and broken.faithful_turns is None
    assert broken.errors == ("seats: RuntimeError: the bot is down",)
    assert broken.incomplete is not None and broken.incomplete.startswith("baseline broken:")
    assert report.faithful_turns == 1.0  # the system's scores stand


def test_an_unknown_or_wrong_baseline_is_refused_before_any_run() -> None:
    with pytest.raises(ConfigError, match="unknown baseline 'naive'"):
        evaluate_conversations(SEATS, baselines=["naive"])
    with pytest.raises(ConfigError, match="list of names"):
        evaluate_conversations(SEATS, baselines="naive-rag")  # type: ignore[typeddict-item]
    with pytest.raises(ConfigError, match="drop baselines= from the estimate"):
        estimate_conversations(SEATS, baselines=["naive-rag"])


def test_a_bundled_baseline_retrieves_from_the_conversations_contexts() -> None:
    report = evaluate_conversations(SEATS, baselines=["naive-rag"])
    naive = report.baselines["naive-rag"]
    first = naive.conversations[0].messages[1]
    assert first.role == "assistant" and "12 seats" in first.content
    assert [c.text for c in first.contexts] == [TOOL]


BOT = """
from vera import Turn

TOOL = "Account ACME: 12 seats, 9 seats in use."


def _answer(history, in_use):
    if sum(t.role == "user" for t in history) == 1:
        return Turn(role="assistant", content="ACME has 12 seats.", tool_results=[TOOL])
    return f"ACME has {in_use} seats in use."


def right(history):
    return _answer(history, 9)


def wrong(history):
    return _answer(history, 11)


def broken(history):
    raise RuntimeError("the bot is down")
"""
ROW = {
    "id": "seats",
    "messages": [
        {"role": "user", "content": "How many seats does ACME have?"},
        {"role": "assistant", "content": "(recorded, replaced)"},
        {"role": "user", "content": "And how many are in use?"},
        {"role": "assistant", "content": "(recorded, replaced)"},
    ],
}


@pytest.mark.slow
def test_the_cli_prints_and_writes_each_baseline(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(BOT)
    (tmp_path / "c.jsonl").write_text(json.dumps(ROW) + "\n")
    args = ("conversations", "c.jsonl", "--assistant", "bot:right", "--no-history")
    done = run_vera(tmp_path, *args, "--baseline", "bot:wrong", "-o", "t.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Baseline bot:wrong: faithful turns 0.500" in done.stdout
    assert "faithfulness: system - baseline +0.500" in done.stdout
    assert "2 paired turn(s) of 2" in done.stdout
    block = json.loads((tmp_path / "t.json").read_text())["baselines"]["bot:wrong"]
    assert block["comparison"]["faithfulness"]["difference"] == pytest.approx(0.5)
    broken = run_vera(tmp_path, *args, "--baseline", "bot:wrong", "--baseline", "bot:broken")
    assert broken.returncode == 3, broken.stdout + broken.stderr
    assert "baseline bot:broken: 0 turn(s) scored" in broken.stderr
    assert "RuntimeError: the bot is down" in broken.stderr
    assert "Baseline bot:wrong: faithful turns 0.500" in broken.stdout
    dry = run_vera(tmp_path, "conversations", "c.jsonl", "--baseline", "naive-rag", "--dry-run")
    assert dry.returncode == 2 and "--baseline replays" in dry.stderr


@pytest.mark.slow
def test_vera_conversations_with_the_naive_rag_baseline(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path, "conversations", "conversations", "--baseline", "naive-rag", "--no-history"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Faithful turns: 0.778" in done.stdout
    assert "Baseline naive-rag: faithful turns " in done.stdout
    assert "paired turn(s) of 36" in done.stdout
    # `vera eval --baseline` over the same turns is refused, naming this route.
    refused = run_vera(tmp_path, "eval", "-d", "conversations", "--baseline", "naive-rag")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "vera conversations DATA --baseline NAME" in refused.stderr
