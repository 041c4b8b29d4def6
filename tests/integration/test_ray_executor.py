"""`executor = "ray"` on a real local Ray (2 CPUs, one instance for the module): the same
scores as a local run, every sample once; results in the run store and a resume that skips
what was done; and one rate limit shared by two workers against the loopback server."""

from __future__ import annotations

import concurrent.futures
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.extras import without
from tests.support.loopback import LoopbackServer, Recorded, Reply
from tests.support.scripted import scripted_openai

import vera
from vera import ConfigError, RunObserver, SampleResult, Settings, run_plan, stored_plan
from vera._plan import DatasetRef, build_plan
from vera.datasets import open_dataset
from vera.judges import OfflineJudge

WHITEBOX = "the Ray import guard, without Ray installed"

# The ray extra (pip install -e '.[test-all]'); the light test install skips this module.
ray = pytest.importorskip("ray", reason=without("ray"))

RAY = Settings(executor="ray", ray_workers=2)


@pytest.fixture(scope="module", autouse=True)
def ray_instance() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def _scores(results: list[SampleResult]) -> dict[str, dict[str, float | None]]:
    return {r.id: dict(r.scores) for r in results}


def test_ray_scores_every_sample_once_as_a_local_run_does() -> None:
    local = vera.evaluate("example", metrics=["faithfulness", "hallucination_rate"])
    remote = vera.evaluate("example", metrics=["faithfulness", "hallucination_rate"], settings=RAY)
    ids = [r.id for r in remote.samples]
    assert ids == [r.id for r in local.samples]
    assert len(set(ids)) == len(ids) == remote.counts["total"] == 28
    assert _scores(list(remote.samples)) == _scores(list(local.samples))
    assert remote.counts == local.counts
    assert remote.metrics == local.metrics


class _Interrupt(Exception):
    pass


class _StopAfter(RunObserver):
    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.finished = 0

    def sample_finished(self, result: SampleResult) -> None:
        self.finished += 1
        if self.limit is not None and self.finished >= self.limit:
            raise _Interrupt


def test_ray_results_land_in_the_store_and_a_resume_skips_them(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    settings = RAY.model_copy(update={"history": True, "history_path": history})
    plan = build_plan(dataset=DatasetRef(source="example"), settings=settings)
    with pytest.raises(_Interrupt):
        run_plan(plan, observer=_StopAfter(limit=5))
    store = vera._store.RunStore(history)
    try:
        (record,) = store.list()
        done = store.results(record.id)
    finally:
        store.close()
    assert 5 <= len(done) < 28
    stored, run_id = stored_plan(record.id, history)
    observer = _StopAfter()
    result = run_plan(stored, resume=run_id, observer=observer)
    assert observer.finished == 28 - len(done)  # only the samples not done were evaluated
    every = list(result.results())
    assert [r.id for r in every] == [r.id for r in vera.evaluate("example").samples]
    assert _scores(every) == _scores(list(vera.evaluate("example").samples))


def test_two_workers_share_one_request_rate(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[float] = []
    lock = threading.Lock()

    def stamped(request: Recorded) -> Reply:
        with lock:
            started.append(time.monotonic())
        return scripted_openai(request)

    loopback.default = stamped
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    per_second = 20.0
    settings = RAY.model_copy(
        update={
            "judge": "openai:loopback-model",
            "judge_base_url": loopback.openai_url,
            "requests_per_minute": per_second * 60,
            "cache": False,
        }
    )
    report = vera.evaluate("example", settings=settings)
    assert report.counts["scored"] == report.counts["total"] == 28  # none lost
    assert len(started) >= 40
    # The workers made every call; the report counts them all, not the driver's none.
    assert report.judge_details["usage"]["calls"] == len(started)
    span = started[-1] - started[0]
    assert (len(started) - 1) / span <= per_second * 1.25
    # No two seconds hold more than the limit, give or take a start: arrival times, not the
    # limiter's grants, so a loaded machine that delays some requests may bunch them a little.
    for first in started:
        assert sum(first <= t < first + 2.0 for t in started) <= 2 * per_second * 1.25 + 1


def test_a_rerun_on_ray_answers_from_the_shared_cache(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[Recorded] = []

    def counted(request: Recorded) -> Reply:
        calls.append(request)
        return scripted_openai(request)

    loopback.default = counted
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    settings = RAY.model_copy(
        update={
            "judge": "openai:loopback-model",
            "judge_base_url": loopback.openai_url,
            "cache_path": tmp_path / "responses.sqlite",
        }
    )
    first = vera.evaluate("example", settings=settings)
    made = len(calls)
    assert made > 0 and first.judge_details["usage"]["calls"] == made
    again = vera.evaluate("example", settings=settings)
    assert len(calls) == made  # no worker called the server: the cache file is shared
    usage = again.judge_details["usage"]
    assert usage["cached_calls"] == usage["calls"] == made
    assert _scores(list(again.samples)) == _scores(list(first.samples))


def test_ray_runs_a_pipeline_and_a_baseline_as_a_local_run_does() -> None:
    # Each worker rebuilds the pipeline from the plan's name for it, and the baseline's corpus
    # from the plan's dataset; the baseline's pairs come back through the run store.
    options = {"pipeline": "simple-verification", "baselines": ["naive-rag"]}
    local = vera.evaluate("example", **options)
    remote = vera.evaluate("example", settings=RAY, **options)
    assert remote.pipeline == local.pipeline == "simple-verification"
    assert _scores(list(remote.samples)) == _scores(list(local.samples))
    assert [r.response for r in remote.samples] == [r.response for r in local.samples]
    assert remote.baseline_comparison == local.baseline_comparison
    paired = remote.baseline_comparison["significance"]["naive_rag"]["faithfulness"]
    assert paired["paired_samples"] == 28


def test_ray_refuses_pipeline_and_judge_objects() -> None:
    with pytest.raises(ConfigError, match="pipeline 'echo' from its name"):
        vera.evaluate("example", pipeline=echo, settings=RAY)
    with pytest.raises(ConfigError, match="by name"):
        vera.evaluate("example", judge=OfflineJudge(learned=True), settings=RAY)


def echo(query: str) -> str:
    return query


def test_a_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from vera._run import _ray as executor

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"pip install 'vera-eval\[ray\]'"):
        executor._import_ray()


def test_vera_toml_chooses_the_executor(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text('executor = "ray"\nray-address = "auto"\nray-workers = 3\n')
    settings = vera.load_settings(directory=tmp_path, environ={})
    assert (settings.executor, settings.ray_address, settings.ray_workers) == ("ray", "auto", 3)


class _DeadWorker:
    """A worker handle whose every batch fails, as a killed actor's do."""

    class _Run:
        def remote(self, batch: object) -> _DeadWorker._Ref:
            return _DeadWorker._Ref()

    class _Ref:
        def future(self) -> concurrent.futures.Future[object]:
            failed: concurrent.futures.Future[object] = concurrent.futures.Future()
            failed.set_exception(RuntimeError("The actor died unexpectedly\nSIGKILL"))
            return failed

    run = _Run()


async def test_a_failed_worker_turns_its_batch_into_errors_and_loses_nothing() -> None:
    from vera._results import ReportBuilder
    from vera._run import _ray as executor
    from vera.executors import PassSink, PassWork
    from vera.metrics._faithfulness import Faithfulness

    samples = list(open_dataset("example"))
    recorded: dict[int, SampleResult] = {}
    sink = PassSink(
        ReportBuilder({}),
        keep=True,
        progress=None,
        record=recorded.__setitem__,
        resume_from={},
        group_by=(),
    )
    work = PassWork([Faithfulness()], OfflineJudge(), size_hint=len(samples))
    cluster = executor._Cluster(ray=None, quota=None, workers=[_DeadWorker(), _DeadWorker()])
    await executor._dispatch(cluster, sink, iter(enumerate(samples)), work)
    assert sorted(recorded) == list(range(len(samples)))
    assert {r.status.value for r in recorded.values()} == {"error"}
    assert "ray worker failed: RuntimeError: SIGKILL" in (recorded[0].error or "")


def test_the_workers_share_the_concurrency_out() -> None:
    from vera._run import _ray as executor

    assert executor._shares(2, 8) == (2, 4)  # two workers, four samples each
    assert executor._shares(16, 4) == (4, 1)  # no more workers than samples in flight
    assert executor._shares(3, 8) == (3, 2)  # 6 in flight: never over 8


def test_a_batch_never_splits_the_turns_of_one_conversation() -> None:
    # The turns of a group wait for each other in one worker's judge: split across workers,
    # each part would wait for turns that never come.
    from vera._run._ray import _batches

    turns = list(open_dataset("conversations"))
    batches = list(_batches(iter(enumerate(turns)), 4))
    assert [i for batch in batches for i, _ in batch] == list(range(len(turns)))
    where = {}
    for number, batch in enumerate(batches):
        for _, sample in batch:
            where.setdefault(sample.metadata["turn_group"], set()).add(number)
    assert all(len(numbers) == 1 for numbers in where.values())
    assert all(len(batch) <= 4 + 7 for batch in batches)
