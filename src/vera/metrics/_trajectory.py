"""Trajectory match: does the agent's sequence of tool calls match a reference trajectory.

Modes, as LangChain's agentevals defines its trajectory match evaluators:

- `strict`: the same calls in the same order, no more and no fewer;
- `unordered`: the same calls in any order (each reference call matched by a distinct made
  call, and each made call by a distinct reference call);
- `subset`: every made call is in the reference (the agent did nothing the reference does
  not: it may skip some);
- `superset`: every reference call was made (the agent may make more).

Score 1 or 0, with the first difference as the reason. A reference call given as a bare
tool name matches any arguments; else arguments compare by `arguments` (`exact` by default
as in agentevals, or `subset`, `semantic`, `ignore`). The reference is the sample's
`reference_trajectory`, else its `expected_tool_calls`.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from vera._types import Sample
from vera._types._results import ClaimAnalysis, MetricResult, Need
from vera.datasets._agent_fields import EXPECTED_KEY, MADE_CALLS_KEY, TRAJECTORY_KEY
from vera.metrics._agent_calls import (
    ArgumentMode,
    Call,
    call_text,
    calls_match,
    calls_of,
    no_calls_made,
)
from vera.metrics._base import MetricOptions, not_applicable, scored

TrajectoryMode = Literal["strict", "unordered", "subset", "superset"]


class TrajectoryOptions(BaseModel):
    """Options of `trajectory_match` (`[plugins.trajectory_match]`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: TrajectoryMode = "strict"
    arguments: ArgumentMode | Literal["ignore"] = "exact"


class TrajectoryMatch(MetricOptions):
    """1 when the agent's tool calls match the reference trajectory in the chosen mode."""

    name: ClassVar[str] = "trajectory_match"
    description: ClassVar[str] = (
        "1 if the calls made match the reference trajectory (strict, unordered, subset, "
        "superset), else 0; inputs: the calls made, reference_trajectory; no judge"
    )
    needs: ClassVar[frozenset[Need]] = frozenset()
    options_model: ClassVar[type[TrajectoryOptions]] = TrajectoryOptions

    options: TrajectoryOptions = TrajectoryOptions()

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        reference = calls_of(sample, TRAJECTORY_KEY)
        if reference is None:
            reference = calls_of(sample, EXPECTED_KEY)
        if reference is None:
            return not_applicable(
                self, "no reference trajectory to compare with", fields=(TRAJECTORY_KEY,)
            )
        made = calls_of(sample, MADE_CALLS_KEY)
        if made is None:
            return no_calls_made(self, sample)
        if not reference and not made:
            return not_applicable(self, "an empty reference and no call made: nothing to compare")
        difference = first_difference(reference, made, self.options)
        mode = self.options.mode
        if difference is None:
            reason = f"{len(made)} calls match the reference ({mode})"
            return scored(self, 1.0, reason, details={"mode": mode})
        return scored(self, 0.0, f"{mode}: {difference}", details={"mode": mode})


def first_difference(
    reference: list[Call], made: list[Call], options: TrajectoryOptions
) -> str | None:
    """What first keeps `made` from matching `reference` in `options.mode`; None if it does."""
    if options.mode == "strict":
        return _strict(reference, made, options)
    if options.mode in ("superset", "unordered"):
        missing = _unmatched(reference, made, options, reference_first=True)
        if missing is not None:
            return f"missing {call_text(missing)}"
    if options.mode in ("subset", "unordered"):
        extra = _unmatched(made, reference, options, reference_first=False)
        if extra is not None:
            return f"made {call_text(extra)}, which the reference does not have"
    return None


def _match(reference: Call, made: Call, options: TrajectoryOptions) -> bool:
    if options.arguments == "ignore":
        return bool(reference["name"] == made["name"])
    return calls_match(reference, made, options.arguments)


def _strict(reference: list[Call], made: list[Call], options: TrajectoryOptions) -> str | None:
    for step, (want, got) in enumerate(zip(reference, made, strict=False), start=1):
        if not _match(want, got, options):
            return f"step {step}: expected {call_text(want)}, made {call_text(got)}"
    if len(made) > len(reference):
        beyond = call_text(made[len(reference)])
        return f"step {len(reference) + 1}: made {beyond}, beyond the reference"
    if len(made) < len(reference):
        return f"step {len(made) + 1}: missing {call_text(reference[len(made)])}"
    return None


def _unmatched(
    wanted: list[Call], pool: list[Call], options: TrajectoryOptions, *, reference_first: bool
) -> Call | None:
    """The first call of `wanted` with no distinct match in `pool` (None when each has one).
    `reference_first` says whether `wanted` holds the reference calls."""
    used: set[int] = set()
    for call in wanted:
        for j, other in enumerate(pool):
            pair = (call, other) if reference_first else (other, call)
            if j not in used and _match(*pair, options):
                used.add(j)
                break
        else:
            return call
    return None
