"""What the agent metrics share: a sample's made and expected calls, and how two calls match.

Arguments match by one of three modes, all deterministic (no model):

- `exact`: the same JSON value (key order aside): `1` and `1.0`, `"Paris"` and `"paris"` differ;
- `subset`: every expected argument is in the made call with the same value (extra made
  arguments are allowed); nested objects compare the same way;
- `semantic`: `exact` after normalising both sides: text case-folded, whitespace collapsed and
  trimmed; numbers, and text that is a number ("3", "3.0", "1,000"), compared as numbers;
  key order ignored. It does not know synonyms ("NYC" is not "New York").
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vera._types import Sample
from vera._types._results import MetricResult
from vera.datasets._agent_fields import (
    EXPECTED_KEY,
    MADE_CALLS_KEY,
    TRAJECTORY_KEY,
    AgentFieldProblem,
    read_calls,
)
from vera.metrics._base import Metric, not_applicable

ArgumentMode = Literal["exact", "subset", "semantic"]
Call = dict[str, Any]
"""`{"name": str, "arguments": dict | None}`: None where the arguments are not known."""


class ToolCallOptions(BaseModel):
    """Options of `tool_call_accuracy` and `tool_argument_correctness` (`[plugins.NAME]`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arguments: ArgumentMode = "exact"
    """How an expected argument's value is compared with the made one."""
    ordered: bool = True
    """`tool_call_accuracy`: whether the made calls must come in the expected order."""


def calls_of(sample: Sample, key: str) -> list[Call] | None:
    """The calls `sample.metadata[key]` holds, None where it holds none. `key` is one of the
    agent fields; a value put there by hand is checked as a dataset's would be."""
    value = sample.metadata.get(key)
    if value is None:
        return None
    try:
        return read_calls(value, key, names_allowed=key == TRAJECTORY_KEY)
    except AgentFieldProblem as exc:
        raise ValueError(f"sample {sample.id!r}: field {exc.field}: {exc.problem}") from None


def made_and_expected(
    metric: Metric, sample: Sample
) -> tuple[list[Call], list[Call]] | MetricResult:
    """The sample's made calls and its expected calls, or the not-applicable result for the
    one that is missing."""
    expected = calls_of(sample, EXPECTED_KEY)
    if expected is None:
        return not_applicable(
            metric, "no expected tool calls to compare with", fields=(EXPECTED_KEY,)
        )
    made = calls_of(sample, MADE_CALLS_KEY)
    if made is None:
        return no_calls_made(metric, sample)
    return made, expected


def no_calls_made(metric: Metric, sample: Sample) -> MetricResult:
    """Not applicable: the sample records no calls. A conversation's turn says where they are
    scored; a sample row, which field would hold them."""
    if "conversation_id" in sample.metadata:
        reason = "the conversation's tool calls are scored on its last answer, not this turn"
        return not_applicable(metric, reason)
    return not_applicable(metric, "no tool calls recorded", fields=(MADE_CALLS_KEY,))


def calls_match(expected: Call, made: Call, mode: ArgumentMode) -> bool:
    """Whether `made` is the `expected` call: the same name, and its arguments matching in
    `mode`; an expected call without arguments (a trajectory's tool name) matches by name."""
    if expected["name"] != made["name"]:
        return False
    arguments: dict[str, Any] | None = made["arguments"]
    if expected["arguments"] is None:
        return True
    if arguments is None:
        return False
    return _arguments_match(expected["arguments"], arguments, mode)


def _arguments_match(expected: dict[str, Any], made: dict[str, Any], mode: ArgumentMode) -> bool:
    if mode == "subset":
        return all(k in made and values_match(v, made[k], mode) for k, v in expected.items())
    return values_match(expected, made, mode)


def values_match(expected: Any, made: Any, mode: ArgumentMode) -> bool:
    """Whether one argument's value matches in `mode` (see the module's docstring)."""
    if mode == "semantic":
        return bool(_normal(expected) == _normal(made))
    if mode == "subset" and isinstance(expected, dict) and isinstance(made, dict):
        return _arguments_match(expected, made, mode)
    return _canonical(expected) == _canonical(made)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"[+-]?(\d+|\d{1,3}(,\d{3})+)(\.\d+)?([eE][+-]?\d+)?")


def _normal(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = _SPACE.sub(" ", value).strip()
        if _NUMBER.fullmatch(text):
            return float(text.replace(",", ""))
        return text.casefold()
    if isinstance(value, dict):
        return {str(k).casefold(): _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value


def call_text(call: Call) -> str:
    """A call as a reason shows it: `get_weather(city='Paris')`, or `get_weather` by name."""
    arguments = call["arguments"]
    if arguments is None:
        return str(call["name"])
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{call['name']}({shown})"


def listed(calls: list[Call], limit: int = 3) -> str:
    """Calls for a reason, the first `limit` of them."""
    shown = ", ".join(call_text(c) for c in calls[:limit])
    more = len(calls) - limit
    return shown + (f" and {more} more" if more > 0 else "")
