"""The agent fields of a row: the tool calls an agent made, and the ones it should have made.

- `tool_calls`: the calls made, on a sample row (a conversation's come from its messages);
- `expected_tool_calls`: the calls the agent should make, each `{"name", "arguments"}`;
- `reference_trajectory`: the reference path, a list of tool names or of calls.

RAGAS's `reference_tool_calls` and DeepEval's `expected_tools` / `tools_called` are read as
the fields they stand for. A call is `{"name": ..., "arguments": {...}}`; `args` (RAGAS,
LangChain), `input_parameters` (DeepEval) and OpenAI's nested
`{"function": {"name", "arguments": "<JSON>"}}` are read too. Arguments may be an object or
its JSON text; a call without them compares by name only. A list given as JSON text (a CSV
cell) is parsed. Each is kept in a row's `metadata` under its own name, normalised to
`[{"name": str, "arguments": dict | None}]`, so the agent metrics read one shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MADE_CALLS_KEY = "tool_calls"
EXPECTED_KEY = "expected_tool_calls"
TRAJECTORY_KEY = "reference_trajectory"
AGENT_FIELDS = (MADE_CALLS_KEY, EXPECTED_KEY, TRAJECTORY_KEY)
"""The agent fields: mappable like sample fields (`--field expected_tool_calls=gold`)."""
AGENT_NAMES = {
    MADE_CALLS_KEY: (MADE_CALLS_KEY, "tools_called"),  # DeepEval's LLMTestCase
    EXPECTED_KEY: (EXPECTED_KEY, "reference_tool_calls", "expected_tools"),  # RAGAS, DeepEval
    TRAJECTORY_KEY: (TRAJECTORY_KEY,),
}
"""Each agent field's accepted names, VERA's own first."""
_ARGUMENT_KEYS = ("arguments", "args", "input_parameters")


class AgentFieldProblem(ValueError):
    """An agent field is malformed: `field` names the place ("expected_tool_calls[1].name")."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


def agent_values(
    row: Mapping[str, Any], fields: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], set[str]]:
    """The agent fields `row` holds, normalised under their own names, and the row keys they
    came from (a mapped column first, as `fields` says, else the field's own name)."""
    found: dict[str, Any] = {}
    used: set[str] = set()
    for field in AGENT_FIELDS:
        mapped = (fields or {}).get(field)
        names = (mapped,) if mapped else AGENT_NAMES[field]
        key = next((name for name in names if row.get(name) is not None), None)
        if key is None:
            continue
        used.add(key)
        found[field] = read_calls(row[key], key, names_allowed=field == TRAJECTORY_KEY)
    return found, used


def read_calls(value: Any, field: str, *, names_allowed: bool = False) -> list[dict[str, Any]]:
    """`value` as a list of calls `{"name", "arguments"}`; `names_allowed` takes a bare tool
    name as a call of any arguments. Raises `AgentFieldProblem` naming the bad entry."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise AgentFieldProblem(field, _EXPECTED_LIST + ", got text that is no JSON") from None
    if not isinstance(value, list | tuple):
        raise AgentFieldProblem(field, f"{_EXPECTED_LIST}, got {type(value).__name__}")
    return [_call(item, f"{field}[{i}]", names_allowed) for i, item in enumerate(value)]


_EXPECTED_LIST = 'expected a list of calls like {"name": "get_weather", "arguments": {...}}'


def _call(item: Any, place: str, names_allowed: bool) -> dict[str, Any]:
    if isinstance(item, str) and names_allowed:
        if not item.strip():
            raise AgentFieldProblem(place, "an empty tool name")
        return {"name": item, "arguments": None}
    if not isinstance(item, Mapping):
        wanted = "a tool name or a call object" if names_allowed else "a call object"
        raise AgentFieldProblem(place, f"expected {wanted}, got {type(item).__name__}")
    nested = item.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else item
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise AgentFieldProblem(f"{place}.name", "missing; a tool call needs its name")
    key = next((k for k in _ARGUMENT_KEYS if k in function), "arguments")
    return {"name": name, "arguments": _arguments(function.get(key), f"{place}.{key}")}


def _arguments(value: Any, place: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise AgentFieldProblem(place, "expected an object or its JSON text") from None
    if not isinstance(value, Mapping):
        raise AgentFieldProblem(place, f"expected an object, got {type(value).__name__}")
    return dict(value)
