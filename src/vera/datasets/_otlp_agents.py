"""Agent traces in OTLP/JSON: tool spans, sessions and GenAI chat spans, as conversations.

`vera.datasets._otlp` reads a file's spans; this module keeps what an agent trace adds beside
its root span and its retrievers. A tool span (an OpenInference TOOL span or an OpenTelemetry
GenAI `execute_tool` span) becomes the assistant's call and a tool message with its result, as
`vera.datasets._otlp_tools` reads them (with the calls LLM spans asked for). A trace's
session is OpenInference's `session.id` or GenAI's `gen_ai.conversation.id`. A GenAI chat
span's `gen_ai.input.messages` and `gen_ai.output.messages` (or the flattened
`gen_ai.prompt.N.*` / `gen_ai.completion.N.*` of earlier conventions) give the query and the
answer where the root span has no `input.value` / `output.value`; so do the same messages
carried by the span's GenAI events (`_event_messages`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vera._json import loads_bounded
from vera._types._conversations import INTERMEDIATE_KEY
from vera.datasets._otlp_tools import ToolCalls

SESSION_KEYS = ("session.id", "gen_ai.conversation.id")
_INDEXED = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(role|content)")


@dataclass
class AgentSpans:
    """What one trace says beyond a RAG sample: its tool calls, session and chat messages."""

    tools: ToolCalls = field(default_factory=ToolCalls)
    chats: list[tuple[int, Any, Any]] = field(default_factory=list)
    session: str | None = None

    def add(
        self,
        name: str,
        start: int,
        attributes: dict[str, Any],
        events: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> None:
        """Keep what an agent trace needs of one span (nothing from other spans); its
        attributes first, then its GenAI events for what they lack."""
        session = next((attributes[k] for k in SESSION_KEYS if attributes.get(k)), None)
        if session is not None and self.session is None:
            self.session = str(session)
        operation = attributes.get("gen_ai.operation.name")
        if attributes.get("openinference.span.kind") == "TOOL" or operation == "execute_tool":
            self.tools.add_tool(name, start, attributes)
        inputs = attributes.get("gen_ai.input.messages") or _indexed(attributes, "prompt")
        outputs = attributes.get("gen_ai.output.messages") or _indexed(attributes, "completion")
        from_events = _event_messages(events)
        inputs, outputs = _json(inputs) or from_events[0], _json(outputs) or from_events[1]
        self.tools.add_llm(name, start, attributes, outputs)
        if inputs is not None or outputs is not None:
            self.chats.append((start, inputs, outputs))

    @property
    def is_agent(self) -> bool:
        """Whether the trace is read as a conversation rather than one RAG sample."""
        return bool(self.tools or self.session or self.chats)

    def query(self) -> str | None:
        """The last user message of the first chat span, where the root names no query."""
        for _, inputs, _ in sorted(self.chats, key=lambda c: c[0]):
            users = [m for m in _messages(inputs) if m.get("role") == "user"]
            if users:
                return message_text(users[-1])
        return None

    def answer(self) -> str | None:
        """The last chat span's assistant text, where the root names no response."""
        for _, _, outputs in sorted(self.chats, key=lambda c: c[0], reverse=True):
            for message in reversed(_messages(outputs)):
                text = message_text(message)
                if text:
                    return text
        return None

    def steps(self, answer: str) -> list[dict[str, Any]]:
        """The trace's tool calls with their results and its intermediate assistant messages
        (each chat span's text other than the final `answer`, marked `intermediate`), in
        start order; a span's text before the calls it asked for."""
        said = [
            (start, text)
            for start, _, outputs in self.chats
            for text in [_text_of(outputs)]
            if text and text.strip() != answer.strip()
        ]
        steps = [
            *self.tools.steps(),
            *(
                (
                    start,
                    0,
                    {"role": "assistant", "content": text, "metadata": {INTERMEDIATE_KEY: True}},
                )
                for start, text in said
            ),
        ]
        return [message for _, _, message in sorted(steps, key=lambda s: (s[0], s[1]))]


_DETAILS_EVENTS = ("gen_ai.client.inference.operation.details",)
_ROLE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
}


def _event_messages(events: Sequence[tuple[str, dict[str, Any]]]) -> tuple[Any, Any]:
    """A chat span's input and output messages from its events (None where they hold none):

    - the current conventions' `gen_ai.client.inference.operation.details` event, with
      `gen_ai.input.messages` and `gen_ai.output.messages` as on the span;
    - the earlier `gen_ai.content.prompt` / `gen_ai.content.completion` events, with
      `gen_ai.prompt` / `gen_ai.completion` (a JSON message list);
    - one event a message: `gen_ai.system.message`, `gen_ai.user.message`,
      `gen_ai.assistant.message` (`content`) in, `gen_ai.choice` (`message`, or `content`) out.
    """
    inputs: list[Any] = []
    outputs: list[Any] = []
    for name, attributes in events:
        if name in _DETAILS_EVENTS:
            inputs += _messages(_json(attributes.get("gen_ai.input.messages")))
            outputs += _messages(_json(attributes.get("gen_ai.output.messages")))
        elif name == "gen_ai.content.prompt":
            inputs += _messages(_json(attributes.get("gen_ai.prompt")))
        elif name == "gen_ai.content.completion":
            outputs += _messages(_json(attributes.get("gen_ai.completion")))
        elif name in _ROLE_EVENTS:
            inputs.append({"role": _ROLE_EVENTS[name], "content": attributes.get("content")})
        elif name == "gen_ai.choice":
            message = _json(attributes.get("message"))
            found = message if isinstance(message, dict) else {}
            outputs.append({"role": "assistant", "content": attributes.get("content"), **found})
    return inputs or None, outputs or None


def _indexed(attributes: dict[str, Any], kind: str) -> list[dict[str, Any]] | None:
    """The flattened form earlier GenAI conventions (and OpenLLMetry) write:
    `gen_ai.prompt.N.role` / `.content`, `gen_ai.completion.N.content`."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _INDEXED.fullmatch(key)
        if match and match[1] == kind:
            found.setdefault(int(match[2]), {})[match[3]] = value
    if not found:
        return None
    default = "user" if kind == "prompt" else "assistant"
    return [{"role": default, **found[n]} for n in sorted(found)]


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return loads_bounded(value)
        except ValueError:  # not JSON, or refused by the guarded reader: no messages
            return None
    return value


def _text_of(outputs: Any) -> str:
    """A chat span's assistant text: its output messages' texts, joined."""
    return "\n".join(t for t in (message_text(m) for m in _messages(outputs)) if t)


def _messages(value: Any) -> list[dict[str, Any]]:
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def message_text(message: dict[str, Any]) -> str:
    """A GenAI semantic-convention message's text: its text `parts`, or a plain `content`."""
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [
            p.get("content")
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
        ]
        return "\n".join(t for t in texts if t)
    content = message.get("content")
    return content if isinstance(content, str) else ""
