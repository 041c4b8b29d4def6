"""A conversation replayed through the user's assistant: it gets the history (its own earlier
answers included) and returns the next turn, which is verified like a recorded one."""

from collections.abc import Sequence

import pytest

import vera
from vera import (
    ConfigError,
    Context,
    Conversation,
    ToolResult,
    Turn,
    Verdict,
    build_baseline,
    evaluate_conversations,
    pipeline_assistant,
)
from vera._conversations import HISTORY_KEY, replay
from vera._types import Role, SourceKind
from vera.judges import OfflineJudge
from vera.pipelines import Pipeline, RagState

WHITEBOX = "the conversations' own parts"

RECORDED = Conversation(
    id="seats",
    turns=(
        Turn(role="system", content="You are a support assistant."),
        Turn(role="user", content="How many seats does ACME have?"),
        Turn(role="assistant", content="(recorded answer, replaced)"),
        Turn(role="user", content="And how many are in use?"),
        Turn(role="assistant", content="(recorded answer, replaced)"),
    ),
)
TOOL = "Account ACME: 12 seats, 9 seats in use."


class Assistant:
    """An explicit fake of the user's system: answers from a tool, wrongly the second time."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def __call__(self, history: Sequence[Turn]) -> Turn | str:
        self.seen.append([t.content for t in history])
        if len(self.seen) == 1:
            return Turn(
                role="assistant",
                content="ACME has 12 seats.",
                tool_results=(ToolResult(text=TOOL, tool_name="get_account", call_id="c1"),),
            )
        return "ACME has 11 seats in use."


def test_the_assistant_gets_the_history_with_its_own_answers() -> None:
    assistant = Assistant()
    replayed = replay(RECORDED, assistant)
    assert [t.role for t in replayed.turns] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
    ]
    assert assistant.seen[1] == [
        "You are a support assistant.",
        "How many seats does ACME have?",
        "ACME has 12 seats.",
        "And how many are in use?",
    ]


def test_replayed_turns_are_verified_against_the_tools_they_saw() -> None:
    [score] = evaluate_conversations(RECORDED, assistant=Assistant()).conversations
    first, second = score.turns
    assert first.claims[0].source_kind is SourceKind.TOOL
    assert first.claims[0].tool_name == "get_account"
    assert second.claims[0].verdict is Verdict.CONTRADICTED
    assert second.claims[0].source_kind is SourceKind.EARLIER_TURN
    assert score.first_unfaithful_turn == 5


def test_a_wrong_answer_type_and_a_sample_pipeline_are_refused() -> None:
    with pytest.raises(ConfigError, match="expected a str or an assistant Turn"):
        replay(RECORDED, lambda history: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="assistant="):
        evaluate_conversations(RECORDED, pipeline=lambda q: q)


class Recorder:
    """An explicit fake pipeline step: answers from a small corpus, and keeps the history it
    was handed at each user turn."""

    def __init__(self) -> None:
        self.histories: list[tuple[str, ...]] = []

    async def __call__(self, state: RagState) -> RagState:
        self.histories.append(tuple(t.content for t in state.data[HISTORY_KEY]))
        found = [c for c in CORPUS if "seats" in c.text]
        return state.evolve(response="ACME has 12 seats, and 9 seats are in use.", contexts=found)


CORPUS = (Context(text=TOOL, id="acme"), Context(text="Support answers within 4 hours."))


def test_a_pipeline_answers_each_user_turn_with_the_history_in_its_state() -> None:
    step = Recorder()
    pipeline = Pipeline.of(step, name="recorder")
    [score] = evaluate_conversations(RECORDED, assistant=pipeline_assistant(pipeline)).conversations
    assert step.histories == [
        ("You are a support assistant.", "How many seats does ACME have?"),
        (
            "You are a support assistant.",
            "How many seats does ACME have?",
            "ACME has 12 seats, and 9 seats are in use.",
            "And how many are in use?",
        ),
    ]
    # The second answer repeats the first word for word: nothing new to verify, no sample.
    [first] = score.turns
    assert first.turn == 3
    # The contexts the pipeline retrieved are the turn's own.
    assert {c.source_kind for c in first.claims} == {SourceKind.RETRIEVED}
    assert all(c.verdict is Verdict.FULLY_SUPPORTED for c in first.claims)


def test_a_baseline_replays_a_conversation() -> None:
    pipeline = build_baseline("naive-rag", CORPUS, OfflineJudge())
    [score] = evaluate_conversations(RECORDED, assistant=pipeline_assistant(pipeline)).conversations
    assert [t.turn for t in score.turns] == [3]
    [claim] = score.turns[0].claims
    assert claim.source_kind is SourceKind.RETRIEVED and claim.verdict is Verdict.FULLY_SUPPORTED


def test_a_pipeline_or_baseline_over_recorded_turns_is_refused_naming_the_assistant() -> None:
    def answer(query: str) -> str:
        return "An answer without the history."

    with pytest.raises(ConfigError, match="pipeline_assistant"):
        vera.evaluate("conversations", ["faithfulness"], pipeline=answer)
    with pytest.raises(ConfigError, match="conversation turns") as refused:
        vera.evaluate("conversations", ["faithfulness"], baselines=["naive-rag"])
    # It names the route that does compare with a baseline, turn by turn with the history.
    assert "vera conversations DATA --baseline NAME" in str(refused.value)
    assert "evaluate_conversations(data, baselines=[NAME])" in str(refused.value)
    # A turn after an ordinary first sample is refused by the runner, turn by turn.
    plain = {"id": "plain", "query": "What does Pro cost?", "response": "20 dollars."}
    seats = {"id": "seats", "messages": [t.model_dump(mode="json") for t in RECORDED.turns]}
    report = vera.evaluate([plain, seats], ["faithfulness"], pipeline=answer)
    status = {s.id: (s.status.value, s.error or "") for s in report.samples}
    assert status.pop("plain")[0] == "scored"
    assert status and all(v == "error" and "pipeline_assistant" in e for v, e in status.values())
    assert all("baselines=[name]" in e for _, e in status.values())
