"""The Ray executor: one pass's rows evaluated on the worker processes of a Ray cluster.

Chosen with `executor = "ray"` (`--executor ray`); needs the `ray` extra. The run (this
process, the driver) reads the samples and keeps what an earlier run finished; this executor
sends the rows it is handed in batches to N worker actors, a bounded number of batches in
flight, and hands each result back to the pass's sink as batches finish, so the driver owns
the store and the report is built as for a local pass. Each worker builds its judge, metrics
and the pass's pipeline (the system's or a baseline's, by the plan's name for it) from the run
plan, as `vera eval --resume` would: the plan the user gave is what is rebuilt, never code
that stored data names. At most `concurrency` samples are in flight over all the workers. A
batch whose worker fails comes back as ERROR results for its samples: nothing is lost.

Every worker's provider calls (the judge's and a pipeline's generator's) are paced by one
`Quota` actor (the rate limits) and charged to it (the budget): see `vera._run._quota`.
The response cache is the file the settings name; workers on one machine share it (SQLite
takes concurrent writers), and each other machine keeps its own at the same path.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vera._plan._plan import RunPlan
from vera._plan._settings import Settings
from vera._run._experiment import open_plan_data, plan_pipelines
from vera._run._quota import Quota, QuotaClient
from vera._run._runner import (
    PassSink,
    PassWork,
    Rows,
    Usage,
    sample_identity,
    skipped_result,
)
from vera._sample_limits import SampleLimits
from vera._types import Sample
from vera._types._errors import ConfigError, RunStopError
from vera._types._extras import install_hint
from vera._types._report import RunStop, SampleResult, SampleStatus
from vera._types._turns import GROUP_KEY
from vera.judges._base import Judge, as_judge
from vera.judges._registry import create_judge, shared_limits
from vera.metrics._registry import create_metric
from vera.pipelines._core import Pipeline
from vera.providers._cost import merge_summaries

BATCH_SIZE = 32
"""Samples sent to a worker at once (fewer when the dataset is small)."""
IN_FLIGHT_PER_WORKER = 2
"""Batches each worker holds at once: one running, one waiting, so no worker idles."""
INSTALL = install_hint("ray")
_FORWARDED_PREFIXES = ("VERA_",)
_FORWARDED_SUFFIXES = ("_API_KEY", "_BASE_URL")

Batch = list[tuple[int, Sample]]
BatchResult = tuple[list[tuple[int, SampleResult]], RunStop | None]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--executor ray needs Ray: {INSTALL}") from None
    return ray


class _Worker:
    """One worker process: the plan's judge, metrics and the pass's pipeline, built once,
    and its batches, at most `slots` samples at once."""

    def __init__(self, plan_json: str, quota: Any, pipeline_spec: str | None, slots: int) -> None:
        plan = RunPlan.model_validate_json(plan_json)
        settings = plan.settings
        # Inside the block every model built (the judge's, a generator's) shares the quota.
        with shared_limits(QuotaClient(quota, settings)):
            judge = as_judge(create_judge(settings.judge, settings))
            self.work = PassWork(
                [create_metric(m.name, **m.options) for m in plan.metrics],
                judge,
                _worker_pipeline(plan, judge, pipeline_spec),
                pipeline_spec,
                group_by=plan.group_by,
                limits=SampleLimits.of(settings),
                concurrency=slots,
            )
        self.slots = asyncio.Semaphore(slots)
        self.stop: RunStopError | None = None

    def ready(self) -> bool:
        return True

    def usage(self) -> dict[str, Any] | None:
        """This worker's calls, tokens and cost, where its judge keeps a ledger."""
        return self.work.judge.describe().usage

    async def _one(self, index: int, sample: Sample) -> tuple[int, SampleResult]:
        group_by = self.work.group_by
        async with self.slots:
            if self.stop is not None:
                return index, skipped_result(sample, self.stop, group_by)
            try:
                result = await self.work.score(sample)
            except RunStopError as exc:
                self.stop = self.stop or exc
                result = skipped_result(sample, exc, group_by)
            return index, result

    async def run(self, batch: Batch) -> BatchResult:
        """Evaluate a batch; its results by dataset position, and the stop one raised."""
        results = await asyncio.gather(*(self._one(i, s) for i, s in batch))
        stop = self.stop
        return list(results), (
            None if stop is None else RunStop(reason=str(stop), planned=stop.planned)
        )


def _worker_pipeline(plan: RunPlan, judge: Judge, spec: str | None) -> Pipeline | None:
    """The pass's pipeline, rebuilt from the plan's name for it as the driver built it (a
    baseline's corpus from the plan's dataset or documents)."""
    if spec is None:
        return None
    return plan_pipelines(plan, open_plan_data(plan), judge, [spec])[spec]


class _RemoteStop(RunStopError):
    """A run stop a worker heard (a rejected key), told to the driver."""


class _RemotePlannedStop(_RemoteStop):
    """A planned run stop a worker heard (a spent budget), told to the driver."""

    planned = True


def _stop_error(stop: RunStop) -> RunStopError:
    return (_RemotePlannedStop if stop.planned else _RemoteStop)(stop.reason)


def _forwarded_environment() -> dict[str, str]:
    """What workers read from the environment: VERA's variables and provider keys and URLs
    (workers on other machines, or started before they were set, would not have them)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith(_FORWARDED_PREFIXES) or name.endswith(_FORWARDED_SUFFIXES)
    }


def _connect(ray: Any, settings: Settings) -> None:
    """Join `ray_address`, or start a Ray on this machine, unless this process already has."""
    if ray.is_initialized():
        return
    ray.init(
        address=settings.ray_address,
        ignore_reinit_error=True,
        include_dashboard=False,
        log_to_driver=False,
        num_cpus=None if settings.ray_address else os.cpu_count(),
    )


def _interrupt(signum: int, frame: object) -> None:
    signal.raise_signal(signal.SIGINT)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While the pass runs, SIGTERM ends it as Ctrl-C does: results stored so far are kept
    and the CLI prints the `vera eval --resume` that finishes the run. Ray's core replaces
    SIGTERM's handler with its own, which aborts the process with a stack dump and no word."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; its owner decides
        return
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        # None: a handler not set from Python (Ray's), which cannot be put back from here.
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _absolute(value: str | None) -> str | None:
    """A path that exists here, made absolute; anything else (a bundled name) as it is."""
    return str(Path(value).resolve()) if value and Path(value).exists() else value


def _worker_plan(plan: RunPlan) -> str:
    """The plan the workers build from, with the paths they read made absolute (a worker's
    working directory need not be the driver's)."""
    settings = plan.settings
    paths = {
        key: Path(value).resolve()
        for key, value in (
            ("cache_path", settings.cache_path),
            ("judge_prompts_dir", settings.judge_prompts_dir),
        )
        if value is not None
    }
    dataset = plan.dataset.model_copy(update={"source": _absolute(plan.dataset.source)})
    retrieval = plan.retrieval.model_copy(update={"documents": _absolute(plan.retrieval.documents)})
    updates = {"settings": settings.model_copy(update=paths), "dataset": dataset}
    return plan.model_copy(update={**updates, "retrieval": retrieval}).model_dump_json()


def _shares(workers: int, concurrency: int) -> tuple[int, int]:
    """How many workers start and the samples each evaluates at once: never more samples in
    flight over all of them than `concurrency` (a provider's limit is the whole run's)."""
    count = max(1, min(workers, concurrency))
    return count, concurrency // count


@dataclass
class _Cluster:
    """The actors of one pass: the quota and the workers."""

    ray: Any
    quota: Any
    workers: list[Any]

    @classmethod
    def start(cls, ray: Any, plan: RunPlan, work: PassWork) -> _Cluster:
        """A quota and the workers of one pass: as many as asked (one per CPU by default) but
        no more than `work.concurrency`, which they share out as their slots."""
        settings = plan.settings
        cpus = float(ray.cluster_resources().get("CPU", 1))
        count, slots = _shares(settings.ray_workers or max(1, int(cpus)), work.concurrency)
        quota = ray.remote(num_cpus=0)(Quota).remote(
            settings.requests_per_minute, settings.tokens_per_minute, settings.fail_fast
        )
        env = _forwarded_environment()
        options: dict[str, Any] = {"num_cpus": min(1.0, cpus / count), "max_restarts": 0}
        if env:
            options["runtime_env"] = {"env_vars": env}
        actor = ray.remote(_Worker).options(**options)
        plan_json = _worker_plan(plan)
        spec = work.pipeline_spec
        workers = [actor.remote(plan_json, quota, spec, slots) for _ in range(count)]
        cluster = cls(ray, quota, workers)
        try:
            ray.get([w.ready.remote() for w in workers])
        except Exception as exc:
            cluster.stop()
            raise ConfigError(f"the Ray workers could not start: {_first_line(exc)}") from None
        return cluster

    def usage(self) -> dict[str, Any] | None:
        """Every worker's calls, tokens and cost added up; `workers_unreported` counts the
        workers that died first, whose calls are then missing from the figures."""
        found: list[dict[str, Any]] = []
        unreported = 0
        for worker in self.workers:
            try:
                usage = self.ray.get(worker.usage.remote())
            except Exception:  # a dead worker: say so rather than drop it silently
                unreported += 1
                continue
            if usage is not None:
                found.append(usage)
        if not found:
            return None
        merged = merge_summaries(found)
        if unreported:
            merged["workers_unreported"] = unreported
        return merged

    def stop(self) -> None:
        for actor in [*self.workers, self.quota]:
            self.ray.kill(actor)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"


@dataclass
class _Dispatch:
    """Batches in flight on the workers, at most `IN_FLIGHT_PER_WORKER` each, and what to do
    with their results."""

    cluster: _Cluster
    sink: PassSink
    group_by: Sequence[str]
    pending: dict[asyncio.Future[BatchResult], tuple[int, Batch]] = field(default_factory=dict)
    load: dict[int, int] = field(default_factory=dict)
    failed: set[int] = field(default_factory=set)
    """Workers a batch failed on: no more batches go to them while another is left."""

    async def submit(self, batch: Batch) -> None:
        limit = IN_FLIGHT_PER_WORKER * len(self.cluster.workers)
        while len(self.pending) >= limit:
            await self.settle()
        every = range(len(self.cluster.workers))
        alive = [w for w in every if w not in self.failed] or list(every)
        worker = min(alive, key=lambda w: self.load.get(w, 0))
        ref = self.cluster.workers[worker].run.remote(batch)
        self.pending[asyncio.wrap_future(ref.future())] = (worker, batch)
        self.load[worker] = self.load.get(worker, 0) + 1

    async def settle(self) -> None:
        """Wait for at least one batch, and hand each finished one's results on."""
        done, _ = await asyncio.wait(self.pending, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            worker, batch = self.pending.pop(future)
            self.load[worker] -= 1
            try:
                results, stop = future.result()
            except Exception as exc:  # the worker died or failed: the batch errs, not lost
                results, stop = self._failed(batch, exc), None
                self.failed.add(worker)
            if stop is not None:
                self.sink.stopped(_stop_error(stop))
            for index, result in results:
                self.sink.finished(index, result)

    def _failed(self, batch: Batch, exc: BaseException) -> list[tuple[int, SampleResult]]:
        error = f"ray worker failed: {_first_line(exc)}"
        return [
            (
                i,
                SampleResult(
                    **sample_identity(s, self.group_by), status=SampleStatus.ERROR, error=error
                ),
            )
            for i, s in batch
        ]

    async def drain(self) -> None:
        while self.pending:
            await self.settle()

    def abandon(self) -> None:
        """Forget the batches in flight (the pass was interrupted): their actors are killed
        next, and each unread failure would be printed as "Future exception was never
        retrieved" after the resume hint."""
        for future in self.pending:
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # read, so nothing reports it unread
        self.pending.clear()


def _batches(rows: Rows, size: int) -> Iterator[Batch]:
    """The rows in batches of about `size`, each read only when the one before was sent."""
    batch: Batch = []
    for index, sample in rows:
        # A batch full is cut only between groups of turns: the turns of a group wait for
        # each other in one judge (vera.judges._turns), which another worker's turns never reach.
        if len(batch) >= size and not _same_group(batch[-1][1], sample):
            yield batch
            batch = []
        batch.append((index, sample))
    if batch:
        yield batch


def _same_group(before: Sample, sample: Sample) -> bool:
    group = sample.metadata.get(GROUP_KEY)
    return group is not None and before.metadata.get(GROUP_KEY) == group


def _batch_size(total: int | None, workers: int) -> int:
    """`BATCH_SIZE`, or less so that a small dataset still reaches every worker."""
    if not total:
        return BATCH_SIZE
    return max(1, min(BATCH_SIZE, math.ceil(total / (workers * IN_FLIGHT_PER_WORKER))))


def _check_work(plan: RunPlan, work: PassWork) -> None:
    """Refuse what workers cannot rebuild from the plan: objects given from Python."""
    if work.judge.describe().spec != plan.settings.judge.strip():
        raise ConfigError(
            "--executor ray builds the judge from its name in every worker; give the judge "
            "by name (such as 'openai:gpt-4o-mini'), not as an object"
        )
    named = [create_metric(m.name, **m.options).name for m in plan.metrics]
    if [m.name for m in work.metrics] != named:
        raise ConfigError(
            "--executor ray builds the metrics from their registered names in every worker; "
            "give metrics by name"
        )
    if work.pipeline is not None and work.pipeline_spec is None:
        raise ConfigError(
            f"--executor ray builds pipeline {work.pipeline.name!r} from its name in every "
            "worker; give it by name (a baseline, module:function or a URL), not as an object"
        )
    if work.pipeline_spec is not None and plan.dataset.source is None and not plan.quick:
        raise ConfigError(
            f"--executor ray builds pipeline {work.pipeline_spec!r} in every worker from the "
            "plan's dataset, and this one was given from Python: give the dataset by path"
        )


async def _dispatch(cluster: _Cluster, sink: PassSink, rows: Rows, work: PassWork) -> None:
    """Send every batch, and hand on every result. Any exception (an interrupt) abandons
    the batches in flight to the actors' end."""
    dispatch = _Dispatch(cluster, sink, work.group_by)
    size = _batch_size(work.size_hint, len(cluster.workers))
    try:
        for batch in _batches(rows, size):
            await dispatch.submit(batch)
        await dispatch.drain()
    except BaseException:
        dispatch.abandon()
        raise


class RayExecutor:
    """Evaluates a pass's rows on Ray workers that build the judge, metrics and pipeline
    from `plan` (`executor = "ray"`)."""

    name = "ray"

    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan

    async def execute(self, rows: Rows, work: PassWork, sink: PassSink) -> Usage | None:
        """Start the workers, send them the rows in batches, hand back each result; the
        workers' calls, tokens and cost added up (the driver's judge makes none)."""
        _check_work(self.plan, work)
        ray = _import_ray()
        _connect(ray, self.plan.settings)
        with _terminate_as_interrupt():
            cluster = await asyncio.to_thread(_Cluster.start, ray, self.plan, work)
            try:
                await _dispatch(cluster, sink, rows, work)
                return await asyncio.to_thread(cluster.usage)
            finally:
                cluster.stop()
