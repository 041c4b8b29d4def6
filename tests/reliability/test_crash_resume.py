"""A run interrupted mid-way, by SIGKILL (a machine going down) or SIGINT (Ctrl-C), resumes
with `vera eval --resume RUN_ID`: every sample is reported exactly once, nothing it finished is
judged again, and the run history and the response cache are still sound SQLite files.

The judge is an LLM over real HTTP: the loopback server answers each call after 0.1 s, so a
run of 30 samples, 4 at a time (two calls each), is mid-way a moment after it starts. The
resumed run uses another API key, so the server tells its calls from the first run's, even from
a call the first run sent as it died.
"""

from __future__ import annotations

import json
import re
import signal
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from tests.reliability.runs import (
    integrity,
    marker,
    query,
    start_eval,
    wait_for_results,
    write_dataset,
)
from tests.support.cli import run_vera
from tests.support.faults import hang
from tests.support.loopback import LoopbackServer

SAMPLES = 30
CONCURRENCY = 4
CALLS_PER_SAMPLE = 2  # batched judge mode: extract the claims, then verify them all
RESUMED_KEY = "resumed-key"


@dataclass(frozen=True)
class Interrupted:
    """A run stopped by a signal, and what it left behind."""

    ids: list[str]
    history: Path
    cache: Path
    returncode: int
    seconds_to_exit: float
    stderr: str
    run_id: str
    finished: dict[str, str]
    """The results stored before the interruption: sample id -> stored result (JSON)."""


def interrupt(tmp_path: Path, loopback: LoopbackServer, sig: signal.Signals) -> Interrupted:
    """Start a 30-sample run, send it `sig` once a few samples are stored, and look at the
    stores it left."""
    loopback.default = hang(0.1)
    ids = write_dataset(tmp_path / "d.jsonl", SAMPLES)
    history, cache = tmp_path / "runs.sqlite", tmp_path / "cache.sqlite"
    args = ("-d", "d.jsonl", "--concurrency", str(CONCURRENCY), "-o", "first.json")
    process = start_eval(tmp_path, loopback, *args, "--history", str(history),
                         "--cache-path", str(cache))  # fmt: skip
    try:
        wait_for_results(history, 6, process)
        process.send_signal(sig)
        sent = time.monotonic()
        returncode = process.wait(timeout=15)
        seconds = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    (run_id, status), *others = query(history, "SELECT id, status FROM runs")
    assert not others and status == "running"
    finished = dict(query(history, "SELECT sample_id, result FROM results"))
    assert 0 < len(finished) < SAMPLES, "the run was not interrupted mid-way"
    return Interrupted(
        ids=ids,
        history=history,
        cache=cache,
        returncode=returncode,
        seconds_to_exit=seconds,
        stderr=(tmp_path / "vera.err").read_text(),
        run_id=run_id,
        finished=finished,
    )


def resume_and_check(tmp_path: Path, loopback: LoopbackServer, run: Interrupted) -> None:
    """Resume `run` and check that nothing was lost or redone, and that both files are sound."""
    assert integrity(run.history) == "ok"
    assert integrity(run.cache) == "ok"

    # The judge's server is named again: a stored run never chooses where the key goes.
    resumed = run_vera(tmp_path, "eval", "--resume", run.run_id, "--history", str(run.history),
                       "--judge-base-url", loopback.openai_url,
                       "-o", "report.json", timeout=60, OPENAI_API_KEY=RESUMED_KEY)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr

    # Nothing lost: every sample reported exactly once, in dataset order, and scored.
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["id"] for s in report["samples"]] == run.ids
    assert report["counts"]["scored"] == SAMPLES
    # The samples finished before the interruption are reported exactly as they were stored.
    kept = {s["id"]: s for s in report["samples"] if s["id"] in run.finished}
    # Stored compressed (zlib), as the run store writes each result; the report adds each
    # sample's contexts, read back from the dataset (the store keeps them once, there).
    stored = {i: json.loads(zlib.decompress(result)) for i, result in run.finished.items()}
    assert all(s.pop("contexts") for s in kept.values())
    assert {i: {k: v for k, v in s.items() if k != "contexts"} for i, s in stored.items()} == kept

    # Nothing finished redone: the resumed run judged only the unfinished samples (its judge
    # calls, answered from the cache or not, are theirs); no call it sent is about a finished
    # sample. Over both runs, only the samples in flight at the interruption were sent twice.
    left = SAMPLES - len(run.finished)
    assert report["judge_details"]["usage"]["calls"] <= CALLS_PER_SAMPLE * left
    resumed_by = f"Bearer {RESUMED_KEY}"
    calls = [r for r in loopback.requests if r.headers.get("authorization") == resumed_by]
    judged_again = sorted(s for s in run.finished for c in calls if marker(s) in json.dumps(c.json))
    assert judged_again == []
    assert len(calls) <= CALLS_PER_SAMPLE * left
    assert loopback.request_count <= CALLS_PER_SAMPLE * (SAMPLES + CONCURRENCY)

    # The same run, now finished, holds each sample once; both files are still sound.
    assert query(run.history, "SELECT id, status FROM runs") == [(run.run_id, "finished")]
    stored = query(run.history, "SELECT sample_id FROM results WHERE run_id = ?", run.run_id)
    assert sorted(row[0] for row in stored) == run.ids
    assert integrity(run.history) == "ok"
    assert integrity(run.cache) == "ok"


def test_a_killed_run_resumes_without_losing_or_redoing_samples(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    run = interrupt(tmp_path, loopback, signal.SIGKILL)
    assert run.returncode == -signal.SIGKILL
    resume_and_check(tmp_path, loopback, run)


def test_ctrl_c_stops_at_once_without_a_traceback_and_the_run_resumes(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    run = interrupt(tmp_path, loopback, signal.SIGINT)
    # 130 is the shell's code for a SIGINT: not 0, and none of VERA's own 1/2/3.
    assert run.returncode == 130, run.stderr
    assert run.seconds_to_exit < 5
    assert "Traceback" not in run.stderr and "KeyboardInterrupt" not in run.stderr
    # It says how many samples it kept and how to finish the run.
    said = [line for line in run.stderr.splitlines() if f"--resume {run.run_id}" in line]
    assert said, run.stderr
    assert re.search(rf"\b{len(run.finished)}\b", said[0]), said[0]
    assert f"--judge-base-url {loopback.openai_url}" in said[0]
    resume_and_check(tmp_path, loopback, run)
