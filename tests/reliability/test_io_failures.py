"""I/O failures end in a clear exit 2, never a traceback, and lose nothing already written.

The full disk is real to the process: `vera eval` runs under `RLIMIT_FSIZE` (with `SIGXFSZ`
ignored), so the kernel refuses every write that would make a file larger than the limit,
as a full disk refuses any write (`EFBIG` instead of `ENOSPC`; SQLite calls both an I/O
error). It needs no privilege, unlike a tiny mounted filesystem; where mounting one is
allowed, `test_a_full_disk_…` runs the same on a 2 MB tmpfs (ENOSPC). The history keeps a page
or more a sample in its write-ahead log and a report a kilobyte or so, so a limit sits between
the two.

Damaged rows are written by the test into real SQLite files.
"""

from __future__ import annotations

import json
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

import vera
from tests.reliability.runs import write_dataset
from tests.support.faults import judge_args, scripted
from tests.support.loopback import LoopbackServer
from vera import Bindings, RunResult, RunStore, Settings, run_plan
from vera._plan import DatasetRef, build_plan

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

SOURCE = str(Path(vera.__file__).parent.parent)
ENV = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1", "OPENAI_API_KEY": "test"}


def vera_cli(cwd: Path, *args: str, max_file_bytes: int | None = None) -> tuple[int, str]:
    """`vera ARGS` in `cwd`, no file it writes allowed past `max_file_bytes`; its exit code
    and everything it printed."""

    def limit() -> None:
        if max_file_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write, not a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    done = subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=cwd,
        env={**ENV, "HOME": str(cwd), "PYTHONPATH": SOURCE},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )
    return done.returncode, done.stdout + done.stderr


def offline_rows(path: Path, size: int) -> None:
    rows = [
        {
            "id": f"s{i:03d}",
            "query": f"What about item {i}?",
            "response": f"Item {i} is listed in the catalogue. It was added in {1900 + i}.",
            "contexts": [f"Item {i} is listed in the catalogue. It was added in {1900 + i}."],
        }
        for i in range(size)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_full_history_stops_the_run_and_writes_its_report(tmp_path: Path) -> None:
    offline_rows(tmp_path / "d.jsonl", 100)
    args = ("eval", "-d", "d.jsonl", "--history", "h.sqlite", "-o", "r.json")
    code, said = vera_cli(tmp_path, *args, max_file_bytes=320_000)
    assert code == 2, said
    assert "Traceback" not in said
    assert "Run stopped: the run history h.sqlite cannot grow (disk I/O error" in said
    report = json.loads((tmp_path / "r.json").read_text())
    counts = report["counts"]
    assert 0 < counts["scored"] < 100 and counts["scored"] + counts["skipped"] == 100
    assert [s["id"] for s in report["samples"]] == [f"s{i:03d}" for i in range(100)]
    assert "the run history h.sqlite" in report["stopped"]["reason"]
    # The history holds what it could, and never says the run finished.
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db:
        (status,) = db.execute("SELECT status FROM runs").fetchone()
        stored = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert status in ("running", "stopped") and 0 < stored <= counts["scored"]


def test_a_report_that_does_not_fit_leaves_the_previous_one(tmp_path: Path) -> None:
    offline_rows(tmp_path / "d.jsonl", 100)
    previous = '{"a": "previous, valid report"}\n'
    (tmp_path / "r.json").write_text(previous)
    args = ("eval", "-d", "d.jsonl", "--no-history", "-o", "r.json", "--markdown", "r.md")
    # Room for the run's temporary store (about 140 kB), not for its JSON report (about 200 kB).
    code, said = vera_cli(tmp_path, *args, max_file_bytes=160_000)
    assert code == 2, said
    assert "Traceback" not in said
    assert (
        "cannot write the report to r.json: File too large (any earlier file there is left" in said
    )
    assert (tmp_path / "r.json").read_text() == previous
    assert (tmp_path / "r.md").stat().st_size > 0  # the report that fits is still written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "r.json", "r.md"]


def test_a_run_without_history_whose_temporary_store_is_full_stops_naming_tmpdir(
    tmp_path: Path,
) -> None:
    # A run without a history streams its results through a temporary store, so its memory
    # stays flat; when that store cannot grow, the run stops and says where it was. (40 kB:
    # room for the empty store and some results.)
    offline_rows(tmp_path / "d.jsonl", 100)
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl", "--no-history", max_file_bytes=40_000)
    assert code == 2, said
    assert "Traceback" not in said
    said = " ".join(said.split())
    assert "Run stopped: the temporary run store (a run without a history streams" in said
    assert "use another TMPDIR" in said and "--history" not in said
    assert "sample(s) not evaluated, finished ones kept" in said


def test_a_full_cache_stops_the_run_as_a_locked_one_does(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    loopback.default = scripted("openai")
    write_dataset(tmp_path / "d.jsonl", 12)
    args = ("eval", *judge_args(loopback), "-d", "d.jsonl", "--no-history", "-o", "r.json")
    code, said = vera_cli(tmp_path, *args, "--cache-path", "c.sqlite", max_file_bytes=60_000)
    assert code == 2, said
    assert "Traceback" not in said
    assert "Run stopped: the response cache c.sqlite cannot grow" in said
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["skipped"] > 0 and report["counts"]["errors"] == 0


def test_damaged_rows_are_named_and_evaluated_again(tmp_path: Path) -> None:
    offline_rows(tmp_path / "d.jsonl", 5)
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl", "--history", "h.sqlite")
    assert code == 0, said
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute("UPDATE results SET result = x'00ff' WHERE sample_id = 's002'")
        db.execute("UPDATE runs SET status = 'running', report = NULL")
    damaged = f"the stored result of sample 's002' in run {run_id} is damaged"
    code, said = vera_cli(tmp_path, "eval", "--resume", run_id, "--history", "h.sqlite")
    assert code == 0, said
    assert f"warning: h.sqlite: {damaged} (it does not decompress); it is evaluated again" in said
    code, said = vera_cli(tmp_path, "report", run_id, "--history", "h.sqlite", "-o", "r.json")
    assert code == 0, said  # the resumed run stored s002 afresh
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db, db:
        db.execute("UPDATE results SET result = x'00ff' WHERE sample_id = 's003'")
    code, said = vera_cli(tmp_path, "report", run_id, "--history", "h.sqlite", "-o", "r.json")
    assert code == 2 and "Traceback" not in said
    assert "the stored result of sample 's003'" in said


def test_a_damaged_cached_reply_is_asked_again(tmp_path: Path, loopback: LoopbackServer) -> None:
    loopback.default = scripted("openai")
    write_dataset(tmp_path / "d.jsonl", 2)
    args = ("eval", *judge_args(loopback), "-d", "d.jsonl", "--no-history")
    code, said = vera_cli(tmp_path, *args, "--cache-path", "c.sqlite")
    assert code == 0, said
    calls = loopback.request_count
    with closing(sqlite3.connect(tmp_path / "c.sqlite")) as db, db:
        db.execute("UPDATE responses SET response = '{not json'")
    code, said = vera_cli(tmp_path, *args, "--cache-path", "c.sqlite")
    assert code == 0, said
    assert "the cached reply" in said and "is damaged; asking the provider again" in said
    assert loopback.request_count > calls


def _history_with_trigger(path: Path, trigger: str) -> None:
    """A real history whose file refuses some writes: the fault sits in SQLite itself."""
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(trigger)


def _run(path: Path) -> RunResult:
    settings = Settings(history=True, history_path=path, concurrency=1)
    plan = build_plan(dataset=DatasetRef(source="example"), settings=settings)
    return run_plan(plan, Bindings(keep_samples=False))


def test_results_the_history_refuses_are_still_reported_in_order(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    _history_with_trigger(
        history,
        "CREATE TRIGGER full BEFORE INSERT ON results WHEN (SELECT COUNT(*) FROM results) >= 3 "
        "BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END",
    )
    result = _run(history)
    assert result.exit_code == 2
    assert result.report.stopped is not None and "h.sqlite" in result.report.stopped.reason
    expected = [s.id for s in vera.load_dataset("example")]
    assert [r.id for r in result.results()] == expected  # 3 stored, the rest kept in memory
    assert len(result.unstored) == len(expected) - 3
    with closing(sqlite3.connect(history)) as db:
        assert db.execute("SELECT status FROM runs").fetchone() == ("stopped",)


def test_a_run_whose_report_cannot_be_stored_is_stopped_not_finished(tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    _history_with_trigger(
        history,
        "CREATE TRIGGER full BEFORE UPDATE ON runs WHEN NEW.status = 'finished' "
        "BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END",
    )
    result = _run(history)
    assert result.exit_code == 2  # every sample scored, but the history lacks the run
    assert result.report.counts["scored"] == result.report.counts["total"]
    assert result.report.stopped is not None
    with closing(sqlite3.connect(history)) as db:
        status, report = db.execute("SELECT status, report FROM runs").fetchone()
    assert status == "stopped" and json.loads(report)["stopped"]["reason"]


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs: a disk that really fills (ENOSPC). Mounting needs privilege; where it is
    not granted the test is skipped, and the RLIMIT_FSIZE tests above cover the same path."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True, env={"PATH": "/usr/bin:/bin"})


def test_a_full_disk_stops_the_run_and_keeps_the_previous_report(
    tmp_path: Path, tiny_disk: Path
) -> None:
    offline_rows(tmp_path / "d.jsonl", 400)
    (tiny_disk / "r.json").write_text('{"previous": "valid"}\n')
    args = ("eval", "-d", "d.jsonl", "--history", "disk/h.sqlite", "-o", "out/r.json")
    code, said = vera_cli(tmp_path, *args)
    assert code == 2, said
    assert "Traceback" not in said
    assert "the run history disk/h.sqlite cannot grow (database or disk is full" in said
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert len(report["samples"]) == 400 and report["counts"]["skipped"] > 0
    code, said = vera_cli(tmp_path, "eval", "-d", "d.jsonl", "--no-history", "-o", "disk/r.json")
    assert code == 2 and "No space left on device (any earlier file there is left" in said
    assert (tiny_disk / "r.json").read_text() == '{"previous": "valid"}\n'
