"""Replaying a conversation through the user's assistant: at each user turn the assistant gets
the history so far (its own earlier answers in place of the recorded ones) and returns the
next turn, which VERA then verifies like any other.

A `Pipeline` (VERA's baselines, a framework's chain, your own) answers one query; as an
assistant (`pipeline_assistant`) it answers each user turn with the history in its state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vera._sync import run_sync
from vera._types._conversations import Conversation, Role, Turn
from vera._types._errors import ConfigError
from vera.pipelines import Pipeline, RagState
from vera.pipelines._user import import_user_module

HISTORY_KEY = "history"
"""The key of `RagState.data` under which `pipeline_assistant` hands a pipeline the
conversation so far (a tuple of `Turn`s, the user turn it answers last)."""

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


def pipeline_assistant(pipeline: Pipeline) -> Assistant:
    """`pipeline` as a conversation's assistant: at each user turn it runs on that turn's
    text, with the history so far in `state.data[HISTORY_KEY]`, and its answer and the
    contexts it retrieved become the next assistant turn (verified against them, and against
    earlier turns' contexts and the user's words, as any turn is)."""

    def answer(history: Sequence[Turn]) -> Turn:
        query = next((t.content for t in reversed(history) if t.role is Role.USER), "")
        state = RagState(query=query, data={HISTORY_KEY: tuple(history)})
        done = run_sync(
            pipeline.run(state),
            inside_a_loop="a pipeline assistant replays conversations from synchronous code; "
            "inside a running event loop, await pipeline.run yourself and pass a plain assistant",
        )
        return Turn(role=Role.ASSISTANT, content=done.response or "", contexts=done.contexts)

    return answer


def load_assistant(spec: str) -> Assistant:
    """The assistant `spec` ("package.module:name", looked for in the current folder first)
    names: a function from the history to the next turn, or a `Pipeline` (through
    `pipeline_assistant`). `vera conversations --assistant` reads it so."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"assistant {spec!r}: use module:function")
    target = getattr(import_user_module(spec, module_name, what="assistant"), attribute, None)
    if isinstance(target, Pipeline):
        return pipeline_assistant(target)
    if callable(target):
        return target  # type: ignore[no-any-return]
    raise ConfigError(
        f"assistant {spec!r}: {module_name} has no callable {attribute!r} (a function from the "
        "history, a sequence of vera.Turn, to the next turn, or a vera Pipeline)"
    )
