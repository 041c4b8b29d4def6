"""Executors: where a pass's samples are evaluated. Each turns rows into results and nothing
else (the `vera.runner.Executor` protocol); the run owns resume, skips, recording and the report.

`local` evaluates in this process (`vera.executors.local`); `ray` on the worker processes of a
Ray cluster (`vera.executors.ray`, the `ray` extra). Each is registered lazily by name, so an
executor's module is imported only when `Settings.executor` chooses it; only `vera.run`
imports this package.
"""

from __future__ import annotations

from collections.abc import Callable

from vera.plan import RunPlan
from vera.registry import Registry
from vera.runner import Executor

__all__ = ["EXECUTORS", "ExecutorFactory", "create_executor"]

ExecutorFactory = Callable[[RunPlan], Executor]
"""Builds an executor for a run of the plan (the Ray executor reads its cluster settings)."""

EXECUTORS: Registry[ExecutorFactory] = Registry("executor", "vera.executors")
EXECUTORS.register("local", "vera.executors.local:LocalExecutor.for_plan")
EXECUTORS.register("ray", "vera.executors.ray:RayExecutor")


def create_executor(plan: RunPlan) -> Executor:
    """The executor `plan.settings.executor` names, for this plan."""
    return EXECUTORS.get(plan.settings.executor)(plan)
