"""The local executor: a pass's samples evaluated in this process, `concurrency` at a time."""

from __future__ import annotations

import asyncio

from vera._plan import RunPlan
from vera._run._runner import PassSink, PassWork, Rows, Usage, skipped_result
from vera._types import Sample
from vera._types._errors import RunStopError


class LocalExecutor:
    """Evaluates each row in this event loop, at most `work.concurrency` at once."""

    name = "local"

    @classmethod
    def for_plan(cls, plan: RunPlan) -> LocalExecutor:
        """The executor for a run of `plan` (it needs nothing of it)."""
        return cls()

    async def execute(self, rows: Rows, work: PassWork, sink: PassSink) -> Usage | None:
        slots = asyncio.Semaphore(work.concurrency)

        async def evaluate(index: int, sample: Sample) -> None:
            try:
                try:
                    result = await work.score(sample)
                except RunStopError as exc:
                    sink.stopped(exc)
                    result = skipped_result(sample, exc, work.group_by)
                sink.finished(index, result)
            finally:
                slots.release()

        async with asyncio.TaskGroup() as group:
            while True:
                await slots.acquire()
                row = next(rows, None)
                if row is None:
                    slots.release()
                    break
                group.create_task(evaluate(*row))
        return None
