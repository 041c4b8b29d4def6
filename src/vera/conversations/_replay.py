"""Replaying a conversation through the user's assistant: at each user turn the assistant gets
the history so far (its own earlier answers in place of the recorded ones) and returns the
next turn, which VERA then verifies like any other."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vera.types._conversations import Conversation, Role, Turn
from vera.types._errors import ConfigError

__all__ = ["Assistant", "replay"]

Assistant = Callable[[Sequence[Turn]], Turn | str]
"""The user's assistant: the history in, the next turn out (a `Turn` with the contexts and
tool results it relied on, or its text alone)."""


def replay(conversation: Conversation, assistant: Assistant) -> Conversation:
    """The conversation with every assistant answer produced again by `assistant`.

    The recorded user and system turns are kept; after each user turn, the recorded assistant
    and tool turns up to the next user turn are replaced by what `assistant` returns.
    """
    history: list[Turn] = []
    for turn in conversation.turns:
        if turn.role in (Role.ASSISTANT, Role.TOOL):
            continue  # the recorded answer: the assistant gives its own
        history.append(turn)
        if turn.role is Role.USER:
            history.append(_next_turn(assistant, history, conversation.id))
    return conversation.model_copy(update={"turns": tuple(history)})


def _next_turn(assistant: Assistant, history: Sequence[Turn], conversation_id: str) -> Turn:
    answer = assistant(tuple(history))
    if isinstance(answer, str):
        return Turn(role=Role.ASSISTANT, content=answer)
    if isinstance(answer, Turn) and answer.role is Role.ASSISTANT:
        return answer
    raise ConfigError(
        f"the assistant returned {type(answer).__name__} for conversation {conversation_id!r} "
        f"after turn {len(history)}; expected a str or an assistant Turn"
    )
