"""Conversations: a sequence of turns, each assistant turn with what it could rely on.

A `Conversation` is the multi-turn form of a `Sample`. Its assistant turns are what VERA
verifies: each carries the contexts retrieved for it and the tool results it saw. A tool's
result is a turn of its own (role `tool`, with the tool's name and call id), as in the message
lists of OpenAI's chat API; readers fold it into the assistant turn that follows it.

Every type here is a frozen pydantic model, like the rest of the types layer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vera._types._samples import Context

_FROZEN = ConfigDict(frozen=True, extra="forbid")

SOURCE_KIND_KEY = "source_kind"
"""The key of a turn context's `metadata` that names its `SourceKind`."""
INTERMEDIATE_KEY = "intermediate"
"""The key of an assistant turn's `metadata` that marks an agent's intermediate message (text
between tool calls), verified only with `agent_steps`."""


class Role(StrEnum):
    """Who spoke a turn."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class SourceKind(StrEnum):
    """Where a context an assistant turn is verified against came from: what a verdict names
    as the source that supports (or contradicts) a claim."""

    RETRIEVED = "retrieved"
    """Retrieved for this turn."""
    TOOL = "tool"
    """A tool result this turn saw."""
    EARLIER_TURN = "earlier-turn"
    """Retrieved for, or returned by a tool to, an earlier turn."""
    USER = "user"
    """What the user said: support from it is the user's word, not a source's."""
    ASSISTANT = "assistant"
    """The assistant's own earlier turn: contradicting it is an inconsistency."""


class ToolCall(BaseModel):
    """A tool call an assistant turn made."""

    model_config = _FROZEN

    name: str
    id: str | None = None
    arguments: str = ""
    """The call's arguments, as the JSON text the model wrote."""


class ToolResult(BaseModel):
    """What a tool returned, with the tool's name and the id of the call it answers."""

    model_config = _FROZEN

    text: str
    tool_name: str | None = None
    call_id: str | None = None


class Turn(BaseModel):
    """One turn of a conversation.

    `contexts` and `tool_results` belong to assistant turns: what was retrieved for the turn,
    and what tools returned before it. A `tool` turn holds one tool result in `content`, with
    `tool_name` and `call_id`. `human_faithful` is a person's label of an assistant turn.
    """

    model_config = _FROZEN

    role: Role
    content: str = ""
    contexts: tuple[Context, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_name: str | None = None
    call_id: str | None = None
    human_faithful: bool | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("contexts", mode="before")
    @classmethod
    def _contexts_from_strings(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(Context(text=v) if isinstance(v, str) else v for v in value)
        return value

    @field_validator("tool_results", mode="before")
    @classmethod
    def _results_from_strings(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(ToolResult(text=v) if isinstance(v, str) else v for v in value)
        return value


class Conversation(BaseModel):
    """A conversation VERA verifies turn by turn: each assistant turn against its own contexts
    and tool results, earlier turns' ones, and what the user said (see docs/conversations.md).
    """

    model_config = _FROZEN

    id: str
    turns: tuple[Turn, ...] = Field(min_length=1)
    category: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def assistant_turns(self) -> list[int]:
        """The indices of the assistant turns with something to verify, in order."""
        return [
            i for i, t in enumerate(self.turns) if t.role is Role.ASSISTANT and t.content.strip()
        ]
