"""Two `vera eval` runs started at once on the same run history and response cache (a CI
matrix on one runner, two terminals): both finish, both are stored whole, neither trips over
the other's writes, and both SQLite files stay sound. A run that finds a store locked by
another process, even one that is only now creating it, waits for it instead of failing."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from tests.reliability.runs import integrity, query, start_eval, write_dataset
from tests.support.cli import run_vera
from tests.support.faults import hang, judge_args, scripted
from tests.support.loopback import LoopbackServer

SAMPLES = 20


def test_two_runs_at_once_share_the_history_and_the_cache(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    # Quick replies, so both runs write results and cached replies at the same moments.
    loopback.default = hang(0.02)
    ids = write_dataset(tmp_path / "d.jsonl", SAMPLES)
    history, cache = tmp_path / "runs.sqlite", tmp_path / "cache.sqlite"
    stores = ("--history", str(history), "--cache-path", str(cache))
    names = ("one", "two")
    processes = [
        start_eval(tmp_path, loopback, "-d", "d.jsonl", *stores, "-o", f"{name}.json", name=name)
        for name in names
    ]
    try:
        codes = [process.wait(timeout=60) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    errs = [(tmp_path / f"{name}.err").read_text() for name in names]
    assert codes == [0, 0], errs
    for err in errs:
        assert "database is locked" not in err.lower() and "Traceback" not in err, err

    # Each run reported every sample, scored.
    for name in names:
        report = json.loads((tmp_path / f"{name}.json").read_text())
        assert [s["id"] for s in report["samples"]] == ids
        assert report["counts"]["scored"] == SAMPLES

    # Both runs are in the history, finished, each with every sample once.
    run_ids = sorted(err.split("Run ", 1)[1].split()[0] for err in errs)
    stored = query(history, "SELECT r.id, r.status, COUNT(s.sample_id), "
                   "COUNT(DISTINCT s.sample_id) FROM runs r LEFT JOIN results s "
                   "ON s.run_id = r.id GROUP BY r.id ORDER BY r.id")  # fmt: skip
    assert stored == [(run_id, "finished", SAMPLES, SAMPLES) for run_id in run_ids]
    listed = run_vera(tmp_path, "runs", "list", "--history", str(history))
    assert listed.returncode == 0, listed.stderr
    assert all(run_id in listed.stdout for run_id in run_ids)

    assert integrity(history) == "ok"
    assert integrity(cache) == "ok"
    # Every reply either run got is in the cache: a third run is answered without a call.
    calls = loopback.request_count
    third = run_vera(tmp_path, "eval", "-d", "d.jsonl", "--judge", "openai:loopback-model",
                     "--judge-base-url", loopback.openai_url, *stores,
                     OPENAI_API_KEY="test", timeout=60)  # fmt: skip
    assert third.returncode == 0, third.stderr
    assert loopback.request_count == calls


@pytest.mark.parametrize(("store", "other"), [("--cache-path", "--no-history"),
                                               ("--history", "--no-cache")])  # fmt: skip
def test_a_run_waits_for_a_store_another_process_is_creating(
    tmp_path: Path, loopback: LoopbackServer, store: str, other: str
) -> None:
    # What a run does while it creates a new store, held still: the write lock of a fresh
    # file. The run started beside it has to wait for the lock (up to lock_timeout), as it
    # waits for any other write; when the two start at once, either may be the one waiting.
    # (SQLite refuses a switch to WAL at once, without its busy wait, while another process
    # holds that lock; `PRAGMA journal_mode=WAL` must be tried again until lock_timeout.)
    loopback.default = scripted("openai")
    write_dataset(tmp_path / "d.jsonl", 2)
    path = tmp_path / "store.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(3.0, holder.execute, ("COMMIT",))
    release.start()
    try:
        result = run_vera(tmp_path, "eval", "-d", "d.jsonl", *judge_args(loopback), store,
                          str(path), other, OPENAI_API_KEY="test", timeout=60)  # fmt: skip
    finally:
        release.join()
        holder.close()
    assert result.returncode == 0, result.stderr
    assert integrity(path) == "ok"
