"""Executors: where a pass's samples are evaluated. Each turns rows into results and nothing
else (the `Executor` protocol); the run owns resume, skips, recording and the report.

`local` evaluates in this process (`_local.py`); `ray` on the worker processes of a Ray
cluster (`_ray.py`, the `ray` extra). Each is registered lazily by name, so an executor's
module is imported only when `Settings.executor` chooses it; plugins register theirs under the
`vera.executors` entry-point group (a factory taking the `RunPlan`, returning an `Executor`).
"""

from __future__ import annotations

from collections.abc import Callable

from vera._plan._plan import RunPlan
from vera._registry import Registry
from vera._run._runner import Executor

ExecutorFactory = Callable[[RunPlan], Executor]
"""Builds an executor for a run of the plan (the Ray executor reads its cluster settings)."""

EXECUTORS: Registry[ExecutorFactory] = Registry("executor", "vera.executors")
EXECUTORS.register("local", "vera._run._local:LocalExecutor.for_plan")
EXECUTORS.register("ray", "vera._run._ray:RayExecutor")


def create_executor(plan: RunPlan) -> Executor:
    """The executor `plan.settings.executor` names, for this plan."""
    return EXECUTORS.get(plan.settings.executor)(plan)
