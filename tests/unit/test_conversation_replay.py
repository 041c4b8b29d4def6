"""A conversation replayed through the user's assistant: it gets the history (its own earlier
answers included) and returns the next turn, which is verified like a recorded one."""

from collections.abc import Sequence

import pytest

from vera import ConfigError, Conversation, ToolResult, Turn, Verdict
from vera.conversations import evaluate_conversations, replay
from vera.types import Role, SourceKind

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
