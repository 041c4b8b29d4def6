"""Tool-call metrics: did the agent make the calls it should have, with the right arguments.

    tool_call_accuracy        = matched expected calls / max(expected calls, made calls)
    tool_argument_correctness = matching expected arguments / expected arguments,
                                over the expected calls the agent made a call of that name for

A call matches when its name is the expected one and its arguments match by the `arguments`
mode (`exact`, `subset`, `semantic`: see `vera.metrics._agent_calls`). Order-aware matching
(`ordered`, the default) counts the longest run of expected calls made in their order (a
longest common subsequence); unordered matching pairs each expected call with any unused
made call. Both need no judge. Where the sample has no expected calls, or records no made
calls, the metrics are not applicable; so too when nothing was expected and nothing made.
"""

from __future__ import annotations

from typing import Any, ClassVar

from vera._types import Sample
from vera._types._results import ClaimAnalysis, MetricResult, Need
from vera.metrics._agent_calls import (
    ArgumentMode,
    Call,
    ToolCallOptions,
    call_text,
    calls_match,
    listed,
    made_and_expected,
    values_match,
)
from vera.metrics._base import MetricOptions, not_applicable, scored


class ToolCallAccuracy(MetricOptions):
    """Share of the expected tool calls the agent made, penalised by the calls it added."""

    name: ClassVar[str] = "tool_call_accuracy"
    description: ClassVar[str] = (
        "expected tool calls made, by name and arguments, / max(expected, made); inputs: "
        "the calls made, expected_tool_calls; no judge"
    )
    needs: ClassVar[frozenset[Need]] = frozenset()
    options_model: ClassVar[type[ToolCallOptions]] = ToolCallOptions

    options: ToolCallOptions = ToolCallOptions()

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        compared = made_and_expected(self, sample)
        if isinstance(compared, MetricResult):
            return compared
        made, expected = compared
        if not expected and not made:
            return not_applicable(self, "no tool call expected and none made: nothing to compare")
        mode = self.options.arguments
        pairing = _ordered_pairs if self.options.ordered else _unordered_pairs
        pairs = pairing(expected, made, mode)
        missing = [c for i, c in enumerate(expected) if i not in {e for e, _ in pairs}]
        extra = [c for j, c in enumerate(made) if j not in {m for _, m in pairs}]
        order = " in order" if self.options.ordered else ""
        reason = f"{len(pairs)} of {len(expected)} expected calls made{order}"
        reason += _differences(missing, extra, mode)
        return scored(
            self,
            len(pairs) / max(len(expected), len(made)),
            reason,
            sub_scores=_shares(len(pairs), len(expected), len(made)),
            details={"missing": missing, "unexpected": extra, "arguments": mode},
        )


def _differences(missing: list[Call], extra: list[Call], mode: ArgumentMode) -> str:
    """What a reason says of the unmatched calls: an expected call the agent made out of
    order, or with other arguments, is said so; the rest are missing or not expected."""
    unexpected = list(extra)
    said: list[str] = []
    absent: list[Call] = []
    for call in missing:
        twin = next((m for m in unexpected if m["name"] == call["name"]), None)
        if twin is None:
            absent.append(call)
            continue
        unexpected.remove(twin)
        if calls_match(call, twin, mode):
            said.append(f"{call_text(call)} made out of order")
        elif twin["arguments"] is None:
            said.append(
                f"{call_text(call)} made, but its arguments are unknown "
                "(not recorded, or no JSON object)"
            )
        else:
            said.append(f"{call_text(call)} made with other arguments: {call_text(twin)}")
    if absent:
        said.append(f"missing {listed(absent)}")
    reason = ": " + "; ".join(said) if said else ""
    if unexpected:
        count = len(unexpected)
        reason += f"; {count} call{'s' if count > 1 else ''} not expected: {listed(unexpected)}"
    return reason


def _shares(matched: int, expected: int, made: int) -> dict[str, float]:
    shares = {"recall": matched / expected} if expected else {}
    return {**shares, "precision": matched / made} if made else shares


def _ordered_pairs(
    expected: list[Call], made: list[Call], mode: ArgumentMode
) -> list[tuple[int, int]]:
    """The longest common subsequence of matching calls, as (expected, made) index pairs."""
    rows, cols = len(expected), len(made)
    best = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            if calls_match(expected[i], made[j], mode):
                best[i][j] = best[i + 1][j + 1] + 1
            else:
                best[i][j] = max(best[i + 1][j], best[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < rows and j < cols:
        if calls_match(expected[i], made[j], mode) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _unordered_pairs(
    expected: list[Call], made: list[Call], mode: ArgumentMode
) -> list[tuple[int, int]]:
    """Each expected call paired with the first unused made call that matches it."""
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for i, call in enumerate(expected):
        j = next(
            (j for j, m in enumerate(made) if j not in used and calls_match(call, m, mode)), None
        )
        if j is not None:
            used.add(j)
            pairs.append((i, j))
    return pairs


class ToolArgumentCorrectness(MetricOptions):
    """Share of the expected arguments whose values the agent's call of that tool matches."""

    name: ClassVar[str] = "tool_argument_correctness"
    description: ClassVar[str] = (
        "expected argument values matched in calls of the expected tools; inputs: the "
        "calls made, expected_tool_calls; no judge"
    )
    needs: ClassVar[frozenset[Need]] = frozenset()
    options_model: ClassVar[type[ToolCallOptions]] = ToolCallOptions

    options: ToolCallOptions = ToolCallOptions()

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        compared = made_and_expected(self, sample)
        if isinstance(compared, MetricResult):
            return compared
        made, expected = compared
        checked = [c for c in expected if c["arguments"]]
        if not checked:
            return not_applicable(self, "the expected calls name no arguments to check")
        wrong: list[str] = []
        total = right = calls = 0
        used: set[int] = set()
        for call in checked:
            j = _closest(call, made, used, self.options.arguments)
            if j is None:
                continue
            used.add(j)
            calls += 1
            total += len(call["arguments"])
            found = _argument_misses(call, made[j], self.options.arguments)
            right += len(call["arguments"]) - len(found)
            wrong += found
        if not calls:
            names = ", ".join(sorted({c["name"] for c in checked}))
            return not_applicable(self, f"the agent made no call of an expected tool ({names})")
        reason = f"{right} of {total} expected arguments match over {calls} call"
        reason += "s" if calls > 1 else ""
        if wrong:
            reason += (
                ": "
                + "; ".join(wrong[:3])
                + (f" and {len(wrong) - 3} more" if len(wrong) > 3 else "")
            )
        return scored(self, right / total, reason, details={"mismatched": wrong})


def _closest(call: Call, made: list[Call], used: set[int], mode: ArgumentMode) -> int | None:
    """The unused made call of `call`'s tool with the fewest mismatched arguments."""
    same = [j for j, m in enumerate(made) if j not in used and m["name"] == call["name"]]
    return min(same, key=lambda j: len(_argument_misses(call, made[j], mode)), default=None)


def _argument_misses(call: Call, made: Call, mode: ArgumentMode) -> list[str]:
    """Each expected argument the made call gets wrong, said as a reason says it."""
    given: dict[str, Any] = made["arguments"] or {}
    misses = []
    for key, value in call["arguments"].items():
        if key not in given:
            misses.append(f"{call['name']} {key}: expected {value!r}, missing")
        elif not values_match(value, given[key], mode):
            misses.append(f"{call['name']} {key}: expected {value!r}, made {given[key]!r}")
    return misses
