"""`vera eval --batch` end to end: the CLI in a subprocess, the real openai SDK, the loopback
server's batch endpoints. A run killed while its batch is pending is resumed with --resume: it
takes the pending batch's results, and no request reaches the server twice."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from tests.integration.test_llm_judge_http import SAMPLES
from tests.support.loopback import LoopbackServer
from tests.support.scripted import scripted_openai

ENV = {
    "PATH": "/usr/bin:/bin",
    "COLUMNS": "200",
    "OPENAI_API_KEY": "sk-secret-never-shown",
    # The tree under test, where it is not the installed one.
    **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
}


def setup(tmp_path: Path) -> Path:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("\n".join(json.dumps(s) for s in SAMPLES) + "\n")
    # Short windows, so the test waits for nothing; the defaults suit a real provider. One
    # answer has an unsupported claim: tolerated (max_unfaithful), these tests are about batches.
    (tmp_path / "vera.toml").write_text(
        "batch_window = 0.05\nbatch_poll = 0.05\nmax_unfaithful = 1\n"
    )
    return dataset


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**ENV, "HOME": str(tmp_path)},
    )


def judge_args(loopback: LoopbackServer) -> tuple[str, ...]:
    return ("--judge", "openai:gpt-4o-mini", "--judge-base-url", loopback.openai_url)


def test_batch_run_scores_every_sample_through_batches_only(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    dataset = setup(tmp_path)
    done = run(tmp_path, "eval", "-d", str(dataset), "-o", "r.json", "--batch",
               *judge_args(loopback), "--no-cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]} == {"a": 0.5, "b": 1.0}
    # Two waves (claims, then verdicts), each one batch of both samples' requests.
    assert len(loopback.batches.created) == 2
    assert len(loopback.batches.received) == 4
    assert not [r for r in loopback.requests if r.path.endswith("/chat/completions")]
    usage = report["judge_details"]["usage"]
    assert usage["cost_usd"] == 4 * (1000 * 0.15 + 100 * 0.60) / 1e6 / 2  # half price
    assert "submitted" in done.stderr  # the run says what it waits for


def test_a_run_killed_with_a_pending_batch_resumes_without_sending_a_request_twice(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    loopback.batches.hold = True
    dataset = setup(tmp_path)
    args = ["eval", "-d", str(dataset), "--batch", *judge_args(loopback)]
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", *args, "--no-cache"],
        cwd=tmp_path,
        env={**ENV, "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_pending_batch(tmp_path / ".vera" / "runs.sqlite")
    finally:
        process.kill()
        process.wait()
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db:
        [(run_id,)] = db.execute("SELECT id FROM runs").fetchall()

    shown = run(tmp_path, "runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert "Batches: 1 (1 in_progress)" in shown.stdout
    assert "2 requests" in shown.stdout

    loopback.batches.hold = False
    resumed = run(tmp_path, "eval", "--resume", run_id, "-o", "r.json", *judge_args(loopback))
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]} == {"a": 0.5, "b": 1.0}
    received = loopback.batches.received
    assert len(received) == len(set(received)) == 4
    assert len(loopback.batches.created) == 2
    shown = run(tmp_path, "runs", "show", run_id)
    assert re.search(r"Batches: 2 \(2 completed\)", shown.stdout), shown.stdout


def _wait_for_pending_batch(history: Path) -> None:
    """Until the run recorded a batch the provider reported in progress."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if history.exists():
            with closing(sqlite3.connect(history)) as db:
                try:
                    rows = db.execute("SELECT status FROM batches").fetchall()
                except sqlite3.OperationalError:
                    rows = []
            if ("in_progress",) in rows:
                return
        time.sleep(0.05)
    raise AssertionError("the run recorded no pending batch within 60 s")


def test_batch_with_a_provider_without_a_batch_api_is_exit_2(tmp_path: Path) -> None:
    dataset = setup(tmp_path)
    done = run(tmp_path, "eval", "-d", str(dataset), "--batch", "--judge", "litellm:gpt-4o-mini")
    assert done.returncode == 2
    assert "use openai or anthropic" in done.stderr


def test_the_dry_run_says_it_prices_the_batch_discount(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    dataset = setup(tmp_path)
    done = run(tmp_path, "eval", "-d", str(dataset), "--dry-run", "--batch", *judge_args(loopback))
    assert done.returncode == 0, done.stderr
    assert "at batch prices (half)" in done.stdout
    assert loopback.request_count == 0
