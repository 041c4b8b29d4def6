"""Pipelines: async steps over a `RagState`, composed with `then` and `map`, timed per step.

A pipeline is a functor over its output: `p.map(f)` applies the pure function `f` to what `p`
produces, so `p.map(identity)` behaves as `p` and `p.map(f).map(g)` as `p.map(g ∘ f)`
(`vera.pipelines._laws` checks both, and that verification distributes over composition).
Every step's latency, and the judge calls and cost of steps that use a judge, are recorded in
the state's `trace`, so a report can say where a pipeline spends its time and money.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from vera._types import Context

# A report stores step records, so the type is plain data in the types layer; re-exported here.
from vera._types._report import StepRecord
from vera.providers._cost import metered


@dataclass(frozen=True)
class RagState:
    """What flows through a pipeline: the query, what was retrieved, and the answer so far.

    `trace` records the steps run; `outcome()` is the state without it, which is what two
    pipelines must agree on to be equivalent.
    """

    query: str
    contexts: tuple[Context, ...] = ()
    response: str | None = None
    abstained: bool = False
    data: Mapping[str, Any] = field(default_factory=dict)
    trace: tuple[StepRecord, ...] = ()

    def evolve(self, **changes: Any) -> RagState:
        """A copy with `changes` applied."""
        return replace(self, **changes)

    def outcome(self) -> RagState:
        """This state without its trace: what the pipeline produced, not how long it took."""
        return replace(self, trace=())

    @property
    def latency_ms(self) -> float:
        return sum(record.latency_ms for record in self.trace)


Step = Callable[[RagState], Awaitable[RagState]]
"""One stage: takes the state, returns the next one. Steps must not mutate their input."""


@dataclass(frozen=True)
class DryStep:
    """What a step would do without calling anything: the state after it (a stand-in answer
    where a model would write one), the generator calls it makes, and the judge work it asks
    for (priced by the judge's own plan of calls)."""

    state: RagState
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge_work: tuple[Any, ...] = ()
    """`vera.judges.JudgeWork` items (typed loosely: pipelines sit below judges)."""


@runtime_checkable
class DryRunnable(Protocol):
    """A step that can say what it would cost: VERA's own steps are; a step of yours that is
    not counts as free in a dry run, and the estimate says so."""

    def dry_run(self, state: RagState) -> DryStep: ...


def identity(state: RagState) -> RagState:
    """The identity function on states (for the functor laws)."""
    return state


@dataclass(frozen=True)
class _Stage:
    name: str
    run: Step


class Pipeline:
    """A sequence of named async steps, run in order on one query at a time.

    Pipelines are values: `then` and `map` return new pipelines and never change this one, so
    one pipeline can be shared by concurrent queries.
    """

    def __init__(self, stages: Sequence[_Stage] = (), *, name: str = "pipeline") -> None:
        self._stages = tuple(stages)
        self.name = name

    @classmethod
    def of(cls, step: Step, *, name: str | None = None) -> Pipeline:
        """A one-step pipeline."""
        label = name or getattr(step, "name", None) or getattr(step, "__name__", "step")
        return cls((_Stage(str(label), step),), name=str(label))

    @property
    def step_names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self._stages)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps, in order (what `vera eval --dry-run` prices)."""
        return tuple(stage.run for stage in self._stages)

    def then(self, other: Pipeline | Step, *, name: str | None = None) -> Pipeline:
        """This pipeline followed by `other` (a pipeline or a step)."""
        following = other if isinstance(other, Pipeline) else Pipeline.of(other, name=name)
        return Pipeline(
            (*self._stages, *following._stages),
            name=f"{self.name} >> {following.name}",
        )

    def map(self, f: Callable[[RagState], RagState], *, name: str = "map") -> Pipeline:
        """This pipeline with the pure function `f` applied to its output."""

        async def mapped(state: RagState) -> RagState:
            return f(state)

        return Pipeline((*self._stages, _Stage(name, mapped)), name=self.name)

    def renamed(self, name: str) -> Pipeline:
        """The same steps under another name (the name reports show)."""
        return Pipeline(self._stages, name=name)

    async def run(self, query: str | RagState) -> RagState:
        """Run every step in order; each one's wall time is appended to the trace."""
        state = query if isinstance(query, RagState) else RagState(query=query)
        for stage in self._stages:
            started = time.perf_counter()
            with metered() as spent:
                state = await stage.run(state)
            elapsed = (time.perf_counter() - started) * 1000
            record = StepRecord(
                name=stage.name, latency_ms=elapsed, judge_calls=spent.calls, cost_usd=spent.cost
            )
            state = state.evolve(trace=(*state.trace, record))
        return state

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, steps={list(self.step_names)})"
