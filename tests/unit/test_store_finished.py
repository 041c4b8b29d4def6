"""`RunStore.finished`: what `--resume` keeps of a run, looked up in the file one result at a
time rather than read into memory whole."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from vera import ConfigError, RunStore, SampleResult, SampleStatus
from vera._plan import build_plan

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"


def stored_run(path: Path, count: int) -> str:
    store = RunStore(path)
    run_id = store.start("example", build_plan())
    for position in range(count):
        result = SampleResult(
            id=f"s{position}", status=SampleStatus.SCORED, scores={"faithfulness": position / 10}
        )
        store.add_result(run_id, position, result)
    store.close()
    return run_id


def test_finished_results_are_looked_up_by_sample_id(tmp_path: Path) -> None:
    run_id = stored_run(tmp_path / "h.sqlite", 5)
    finished = RunStore(tmp_path / "h.sqlite").finished(run_id)
    assert len(finished) == 5
    assert list(finished) == [f"s{i}" for i in range(5)]
    assert finished["s3"].scores == {"faithfulness": 0.3}
    assert finished.get("s9") is None and "s9" not in finished


def test_a_damaged_result_is_missing_with_a_warning_so_it_is_evaluated_again(
    tmp_path: Path,
) -> None:
    run_id = stored_run(tmp_path / "h.sqlite", 3)
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db, db:
        db.execute("UPDATE results SET result = x'00ff' WHERE sample_id = 's1'")
    finished = RunStore(tmp_path / "h.sqlite").finished(run_id)
    with pytest.warns(UserWarning, match=r"sample 's1' .* is damaged .* evaluated again"):
        assert finished.get("s1") is None
    assert finished["s2"].id == "s2"


def test_an_unknown_run_is_a_clear_error(tmp_path: Path) -> None:
    stored_run(tmp_path / "h.sqlite", 1)
    with pytest.raises(ConfigError, match=r"no run 'no-such-run' in .*vera runs list"):
        RunStore(tmp_path / "h.sqlite").finished("no-such-run")
