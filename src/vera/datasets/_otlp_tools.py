"""The tool calls an agent trace records, as the assistant `tool_calls` of an OpenAI message list.

A trace records a call in two places, and both conventions are read:

- the span that ran the tool: an OpenInference TOOL span (`tool.name`, `tool_call.id`, its
  arguments in `tool_call.function.arguments` or an `input.value` holding a JSON object, its
  result in `output.value`) or an OpenTelemetry GenAI `execute_tool` span (`gen_ai.tool.name`,
  `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`);
- the LLM span whose answer asked for it: OpenInference's
  `llm.output_messages.N.message.tool_calls.M.tool_call.{id,function.name,function.arguments}`,
  a GenAI output message's `tool_call` parts (`id`, `name`, `arguments`), or the flattened
  `gen_ai.completion.N.tool_calls.M.{id,name,arguments}` of earlier conventions (OpenLLMetry).

One call is often in both; they are paired by call id, or (where either has no id) by tool name
in order, so it counts once. Each executed call becomes an assistant message with its
`tool_calls` just before its tool message, at the tool span's start: calls are in the order the
agent ran them. A call the model asked for that no tool span ran comes at its LLM span's start.
`tool.parameters` is not read: OpenInference writes the tool's parameter schema there, not the
arguments of a call.

Arguments that are not a JSON object, where an attribute holds arguments by definition, make
the trace an invalid row naming the span and the attribute (`ToolCalls.problem`), rather than a
call whose arguments silently read as unknown. An undeclared `input.value` is any text the
instrumentation chose (a Python repr, plain words): where it is no JSON object, the arguments
are unknown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vera._json import loads_bounded
from vera._types._conversations import INTERMEDIATE_KEY
from vera.datasets._agent_fields import AGENT_NAMES, EXPECTED_KEY, TRAJECTORY_KEY

_TOOL_NAME_KEYS = ("tool.name", "gen_ai.tool.name", "tool_call.function.name")
_CALL_ID_KEYS = ("tool_call.id", "gen_ai.tool.call.id")
_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "tool_call.function.arguments")
_RESULT_KEYS = ("output.value", "gen_ai.tool.call.result")
# Calls flattened into attributes: OpenInference's LLM span output messages, and the
# `gen_ai.completion.N.tool_calls.M.*` of earlier GenAI conventions (OpenLLMetry).
_FLAT_CALLS = (
    (
        re.compile(
            r"(llm\.output_messages\.\d+\.message\.tool_calls\.\d+\.tool_call)\."
            r"(id|function\.name|function\.arguments)"
        ),
        "function.name",
        "function.arguments",
    ),
    (
        re.compile(r"(gen_ai\.completion\.\d+\.tool_calls\.\d+)\.(id|name|arguments)"),
        "name",
        "arguments",
    ),
)
_INDEX = re.compile(r"\d+")


@dataclass
class _Call:
    """One call: its tool, arguments as JSON text (None where unrecorded) and id."""

    name: str
    arguments: str | None
    call_id: str | None
    paired: bool = False

    def message(self) -> dict[str, Any]:
        """The assistant message that makes this call, as an OpenAI message list holds it;
        an intermediate step, so tool results before it still count for the next answer."""
        function = {"name": self.name, "arguments": self.arguments}
        call: dict[str, Any] = {"type": "function", "function": function}
        if self.call_id is not None:
            call["id"] = self.call_id
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [call],
            "metadata": {INTERMEDIATE_KEY: True},
        }


@dataclass
class ToolCalls:
    """A trace's calls, gathered span by span; `steps` gives them as messages."""

    asked: list[tuple[int, _Call]] = field(default_factory=list)
    ran: list[tuple[int, _Call, dict[str, Any]]] = field(default_factory=list)
    problem: tuple[str, str] | None = None
    """The first malformed attribute: (field, what is wrong and what to do)."""

    def __bool__(self) -> bool:
        return bool(self.ran or self.asked)

    def add_tool(self, span: str, start: int, attributes: dict[str, Any]) -> None:
        """A span that ran a tool: its call and its result."""
        name = str(_first(attributes, _TOOL_NAME_KEYS) or span)
        call_id = _first(attributes, _CALL_ID_KEYS)
        key = next((k for k in _ARGUMENT_KEYS if attributes.get(k) is not None), None)
        arguments = self._arguments(span, key, attributes[key]) if key else None
        if key is None:
            arguments = self._input_arguments(span, attributes)
        call = _Call(name, arguments, str(call_id) if call_id is not None else None)
        result = next((attributes[k] for k in _RESULT_KEYS if attributes.get(k) is not None), "")
        message: dict[str, Any] = {
            "role": "tool",
            "name": name,
            "content": result if isinstance(result, str) else json.dumps(result, sort_keys=True),
        }
        if call.call_id is not None:
            message["tool_call_id"] = call.call_id
        self.ran.append((start, call, message))

    def add_llm(self, span: str, start: int, attributes: dict[str, Any], outputs: Any) -> None:
        """An LLM span: the calls its answer asked for (OpenInference's flattened output
        messages, or GenAI `tool_call` parts of `outputs`)."""
        for pattern, name_key, arguments_key in _FLAT_CALLS:
            found: dict[str, dict[str, Any]] = {}
            for key, value in attributes.items():
                match = pattern.fullmatch(key)
                if match:
                    found.setdefault(match[1], {})[match[2]] = value
            for where in sorted(found, key=_numbers):
                parts = found[where]
                self._ask(span, start, parts.get(name_key), parts, arguments_key, where)
        for where, part in _tool_call_parts(outputs):
            self._ask(span, start, part.get("name"), part, "arguments", where)

    def steps(self) -> list[tuple[int, int, dict[str, Any]]]:
        """Each call's messages as (start, rank, message): an executed call's assistant
        message (rank 1) then its tool message (rank 2) at the tool span's start; a call
        asked for and never run (rank 1) at its LLM span's start."""
        for _, asked_call in self.asked:
            asked_call.paired = False
        steps: list[tuple[int, int, dict[str, Any]]] = []
        for start, call, result in sorted(self.ran, key=lambda r: r[0]):
            asked = self._asked_for(call)
            if asked is not None:
                asked.paired = True
                call = _Call(call.name, asked.arguments or call.arguments, asked.call_id)
                call.call_id = call.call_id or result.get("tool_call_id")
                if call.call_id is not None:
                    result = {**result, "tool_call_id": call.call_id}
            steps += [(start, 1, call.message()), (start, 2, result)]
        steps += [(start, 1, call.message()) for start, call in self.asked if not call.paired]
        return steps

    def _asked_for(self, ran: _Call) -> _Call | None:
        """The unpaired asked call `ran` answers: the same id, else (an id missing on either
        side) the first of the same tool."""
        unpaired = [call for _, call in self.asked if not call.paired]
        if ran.call_id is not None:
            same = next((c for c in unpaired if c.call_id == ran.call_id), None)
            if same is not None:
                return same
        return next(
            (
                c
                for c in unpaired
                if c.name == ran.name and (c.call_id is None or ran.call_id is None)
            ),
            None,
        )

    def _ask(
        self, span: str, start: int, name: Any, parts: dict[str, Any], key: str, where: str
    ) -> None:
        if not isinstance(name, str) or not name:
            self._refuse(span, f"{where}.name", "missing; a tool call needs its tool's name")
            return
        value = parts.get(key)
        arguments = self._arguments(span, f"{where}.{key}", value) if value is not None else None
        call_id = parts.get("id")
        self.asked.append((start, _Call(name, arguments, str(call_id) if call_id else None)))

    def _arguments(self, span: str, key: str, value: Any) -> str | None:
        """`value` as the JSON text of an object, or None (and the trace's problem) if not."""
        if isinstance(value, str):
            if not value.strip():
                return "{}"
            try:
                value = loads_bounded(value)
            except json.JSONDecodeError as exc:
                self._refuse(
                    span, key, f"arguments that are not JSON ({exc.msg}, column {exc.colno})"
                )
                return None
            except ValueError as exc:  # refused by the guarded reader (too deep, too long)
                self._refuse(span, key, f"arguments that cannot be read: {exc}")
                return None
        if not isinstance(value, dict):
            self._refuse(span, key, f"expected a JSON object, got {type(value).__name__}")
            return None
        return json.dumps(value, sort_keys=True)

    def _input_arguments(self, span: str, attributes: dict[str, Any]) -> str | None:
        """A TOOL span's `input.value` as its arguments. Declared JSON
        (`input.mime_type`) must be an object; other text is used where it is a JSON object,
        and is no arguments where not (instrumentations write a tool's input as they like:
        Python reprs, plain text)."""
        value = attributes.get("input.value")
        if not isinstance(value, str):
            return None
        if attributes.get("input.mime_type") == "application/json":
            return self._arguments(span, "input.value", value)
        try:
            parsed = loads_bounded(value) if value.lstrip().startswith("{") else None
        except ValueError:
            return None
        return json.dumps(parsed, sort_keys=True) if isinstance(parsed, dict) else None

    def _refuse(self, span: str, key: str, problem: str) -> None:
        if self.problem is None:
            fix = "fix the instrumentation that writes it, or leave the attribute out"
            self.problem = (key, f"span {span!r}: {problem}; {fix}")


def _tool_call_parts(outputs: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The `tool_call` parts of GenAI output messages, each with its place."""
    for m, message in enumerate(outputs if isinstance(outputs, list) else []):
        parts = message.get("parts") if isinstance(message, dict) else None
        for p, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and part.get("type") == "tool_call":
                yield f"gen_ai.output.messages[{m}].parts[{p}]", part


def _numbers(key: str) -> list[int]:
    """A flattened key's indices, to order `...0.tool_calls.10` after `...0.tool_calls.2`."""
    return [int(n) for n in _INDEX.findall(key)]


def _first(attributes: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attributes[k] for k in keys if attributes.get(k)), None)


def trace_references(attributes: dict[str, Any]) -> dict[str, Any]:
    """The reference fields a root span carries (`expected_tool_calls`,
    `reference_trajectory`, or the names RAGAS and DeepEval give them), as attributes of their
    own or keys of OpenInference's `metadata` (a JSON object); read as a row's fields."""
    metadata = attributes.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = loads_bounded(metadata)
        except ValueError:  # not JSON: metadata of other uses, no references in it
            metadata = None
    places = [attributes, metadata if isinstance(metadata, dict) else {}]
    found: dict[str, Any] = {}
    for name in (*AGENT_NAMES[EXPECTED_KEY], *AGENT_NAMES[TRAJECTORY_KEY]):
        value = next((p[name] for p in places if p.get(name) is not None), None)
        if value is not None:
            found[name] = value
    return found
