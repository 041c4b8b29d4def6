"""The executor protocol: an executor only turns the rows it is handed into results; the pass
(`run_pass`) owns resume, skips after a run stop, recording and the report, for every executor
alike. Explicit fakes stand in for an executor here; the real ones run in tests/integration."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.plugin import PLUGIN_MODULE, write_plugin

from vera import ConfigError, RunStopError, Sample, SampleResult, SampleStatus, Settings, evaluate
from vera._plan import build_plan
from vera._run import create_executor
from vera.executors import EXECUTORS, LocalExecutor, PassSink, PassWork, Rows, run_pass
from vera.judges import OfflineJudge
from vera.metrics._faithfulness import Faithfulness

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"


class _KeyRejected(RunStopError):
    pass


class FakeExecutor:
    """Evaluates rows one by one, in order, and records which it was handed; sample "b"
    stops the run as a rejected key would."""

    name = "fake"

    def __init__(self) -> None:
        self.handed: list[str] = []

    async def execute(self, rows: Rows, work: PassWork, sink: PassSink) -> dict[str, Any] | None:
        for index, sample in rows:
            self.handed.append(sample.id)
            if sample.id == "b":
                sink.stopped(_KeyRejected("the key was rejected"))
                result = SampleResult(id=sample.id, status=SampleStatus.SKIPPED, error="stop")
            else:
                result = await work.score(sample)
            sink.finished(index, result)
        return {"calls": 7}


def samples(*ids: str) -> list[Sample]:
    return [
        Sample(
            id=i,
            query="Where is Paris?",
            response="Paris is in France.",
            contexts=["Paris is in France."],
        )
        for i in ids
    ]


async def test_the_pass_owns_resume_skips_and_recording_for_any_executor() -> None:
    resumed = SampleResult(id="r", status=SampleStatus.SCORED, scores={"faithfulness": 0.25})
    recorded: dict[int, str] = {}
    heard: list[str] = []
    executor = FakeExecutor()
    report = await run_pass(
        samples("r", "a", "b", "c", "d"),
        PassWork([Faithfulness()], OfflineJudge()),
        executor,
        resume_from={"r": resumed},
        record=lambda index, result: recorded.__setitem__(index, result.status.value),
        progress=lambda result: heard.append(result.id),
    )
    # The resumed sample and those after the stop were never handed to the executor.
    assert executor.handed == ["a", "b"]
    assert recorded == {1: "scored", 2: "skipped", 3: "skipped", 4: "skipped"}
    assert heard == ["a", "b", "c", "d"]
    assert [r.id for r in report.samples] == ["r", "a", "b", "c", "d"]
    assert report.stopped is not None and "rejected" in report.stopped.reason
    assert report.counts.scored == 2 and report.counts.skipped == 3
    # Calls made elsewhere are what the report's judge usage says.
    assert report.judge_details["usage"] == {"calls": 7}


async def test_results_given_from_python_are_recorded_when_asked() -> None:
    resumed = SampleResult(id="r", status=SampleStatus.SCORED, scores={"faithfulness": 0.25})
    recorded: list[int] = []
    await run_pass(
        samples("r", "a"),
        PassWork([Faithfulness()], OfflineJudge()),
        LocalExecutor(),
        resume_from={"r": resumed},
        record=lambda index, result: recorded.append(index),
        record_resumed=True,
    )
    assert sorted(recorded) == [0, 1]


def _failing_rows() -> Iterator[Sample]:
    yield from samples("a", "b")
    raise ValueError("line 3: not JSON")


async def test_a_row_that_cannot_be_read_is_raised_after_the_rows_handed_out() -> None:
    finished: list[str] = []
    with pytest.raises(ValueError, match="line 3"):
        await run_pass(
            _failing_rows(),
            PassWork([Faithfulness()], OfflineJudge()),
            LocalExecutor(),
            progress=lambda result: finished.append(result.id),
        )
    assert sorted(finished) == ["a", "b"]


def test_a_pass_needs_metrics_and_a_concurrency() -> None:
    with pytest.raises(ValueError, match="at least one metric"):
        PassWork([], OfflineJudge())
    with pytest.raises(ValueError, match="concurrency"):
        PassWork([Faithfulness()], OfflineJudge(), concurrency=0)
    with pytest.raises(ValueError, match="each metric may appear once"):
        PassWork([Faithfulness(), Faithfulness()], OfflineJudge())


def test_executors_are_chosen_by_name_through_the_registry() -> None:
    assert EXECUTORS.builtin_names() == ["local", "ray"]
    assert isinstance(create_executor(build_plan(settings=Settings())), LocalExecutor)
    with pytest.raises(Exception, match="unknown executor"):
        EXECUTORS.get("dask")


EXECUTOR_PLUGIN_SOURCE = """
from vera.executors import LocalExecutor

CHOSEN = []


def counting_executor(plan):
    CHOSEN.append(plan.settings.executor)
    return LocalExecutor.for_plan(plan)
"""


@pytest.fixture
def executor_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = write_plugin(
        tmp_path / "site",
        EXECUTOR_PLUGIN_SOURCE,
        f"[vera.executors]\ncounting = {PLUGIN_MODULE}:counting_executor\n",
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    importlib.invalidate_caches()
    EXECUTORS.reset_plugins()
    yield PLUGIN_MODULE
    sys.modules.pop(PLUGIN_MODULE, None)
    EXECUTORS.reset_plugins()


def one_sample_file(tmp_path: Path) -> Path:
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"id": "a", "query": "Where is Paris?", "response": "Paris is in France.", '
        '"contexts": ["Paris is in France."]}\n',
        encoding="utf-8",
    )
    return data


def test_an_executor_a_plugin_registers_runs_the_samples_when_settings_name_it(
    tmp_path: Path, executor_plugin: str
) -> None:
    report = evaluate(str(one_sample_file(tmp_path)), executor="counting", history=False)
    assert [r.scores["faithfulness"] for r in report.samples] == [1.0]
    assert sys.modules[executor_plugin].CHOSEN == ["counting"]


def test_an_unknown_executor_stops_the_run_before_any_sample_naming_the_known_ones(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as raised:
        evaluate(str(one_sample_file(tmp_path)), executor="rya", history=False)
    message = str(raised.value)
    assert "unknown executor 'rya'" in message
    assert "'ray'" in message and "local" in message
