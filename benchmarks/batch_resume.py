"""`vera eval --batch` over N samples on the simulated server, killed once while batches are
pending, then resumed: is every sample scored once, and was any request sent twice?

The simulated server (`llm_judges/sim_server.py`) answers both providers' batch APIs; the
samples are the LLM-judge benchmark's synthetic ones (`llm_judges/synth.py`). The first run is
killed (SIGKILL) once its second wave of batches (the verdicts, after the claims) is recorded
in the run history and held pending at the server; the server then lets batches end, and `vera
eval --resume RUN_ID` finishes the run. The server counts every request id it received in a
batch (a request's id is the hash of all of it), so a request sent twice shows.

    .venv/bin/python benchmarks/batch_resume.py --samples 10000 [--provider anthropic]

With `--matrix`, the run is killed once at each step of a batch's life cycle instead, on a
fresh server each time, for both providers, then resumed (see `STAGES`): requests paid per
distinct request (1.00: none paid twice) and per sample, as a Markdown table.

    .venv/bin/python benchmarks/batch_resume.py --matrix --samples 200
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "llm_judges"
sys.path.insert(0, str(HERE))

from synth import generate, write_jsonl  # noqa: E402


def free_port() -> int:
    with closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(port: int, path: str, method: str = "GET", body: Any = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, method=method)
    with urllib.request.urlopen(request, timeout=30) as reply:
        return dict(json.loads(reply.read()))


def wait_for(check: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")


def held_batch_recorded(history: Path) -> bool:
    """Whether the run history holds a batch the server reported in progress, after one
    that completed: the second wave is pending."""
    if not history.exists():
        return False
    with closing(sqlite3.connect(history)) as db:
        try:
            states = [s for (s,) in db.execute("SELECT status FROM batches")]
        except sqlite3.OperationalError:
            return False
    ended = "completed" in states or "ended" in states  # OpenAI's word, Anthropic's
    return ended and "in_progress" in states


def vera(folder: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vera", "eval", *args]


JUDGES = {
    "openai": lambda port: [
        "--judge", "openai:gpt-4o-mini", "--judge-base-url", f"http://127.0.0.1:{port}/v1"
    ],
    "anthropic": lambda port: [
        "--judge", "anthropic:claude-haiku-4-5", "--judge-base-url", f"http://127.0.0.1:{port}"
    ],
}  # fmt: skip
"""The judge and its base URL on the simulated server, by provider."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--batch-s", type=float, default=2.0, help="seconds a batch takes")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--provider", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--matrix", action="store_true", help="kill at every step, both providers")
    parser.add_argument(
        "--stage", action="append", choices=list(STAGES), help="with --matrix: only this step"
    )
    args = parser.parse_args()
    if args.matrix:
        kill_matrix(args.samples, args.batch_s, args.timeout, args.stage or list(STAGES))
        return

    folder = Path(tempfile.mkdtemp(prefix="vera-batch-"))
    data = folder / "samples.jsonl"
    write_jsonl(generate(args.samples), data)
    (folder / "vera.toml").write_text("batch_poll = 0.5\nbatch_window = 1.0\n")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "sim_server.py"), "--port", str(port),
         "--batch-s", str(args.batch_s)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "sk-sim", "ANTHROPIC_API_KEY": "sk-sim"}
    judge = JUDGES[args.provider](port)
    try:
        wait_for(lambda: _up(port), "the simulated server", 30)
        call(port, "/batches/hold-after-end", "POST")
        started = time.monotonic()
        first = subprocess.Popen(
            vera(folder, "-d", str(data), "--batch", "--no-cache", *judge),
            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        history = folder / ".vera" / "runs.sqlite"
        wait_for(
            lambda: held_batch_recorded(history) or _ended(first),
            "a pending second wave",
            args.timeout,
        )
        if first.returncode is not None:
            raise SystemExit(f"the first run ended by itself (exit {first.returncode})")
        first.kill()
        first.wait()
        killed_after = time.monotonic() - started
        before = call(port, "/stats")
        with closing(sqlite3.connect(history)) as db:
            [(run_id,)] = db.execute("SELECT id FROM runs").fetchall()
            done_before = db.execute("SELECT count(*) FROM results").fetchone()[0]
        call(port, "/batches/release", "POST")
        started = time.monotonic()
        resumed = subprocess.run(
            vera(folder, "--resume", run_id, "-o", "report.json", *judge),
            cwd=folder, env=env, capture_output=True, text=True, timeout=args.timeout,
        )  # fmt: skip
        resume_s = time.monotonic() - started
        after = call(port, "/stats")
    finally:
        server.kill()
    report = json.loads((folder / "report.json").read_text()) if resumed.returncode == 0 else {}
    counts = report.get("counts", {})
    print(
        json.dumps(
            {
                "samples": args.samples,
                "provider": args.provider,
                "killed_after_s": round(killed_after, 1),
                "samples_stored_when_killed": done_before,
                "batches_when_killed": before["batch_states"],
                "resume_exit_code": resumed.returncode,
                "resume_s": round(resume_s, 1),
                "scored": counts.get("scored"),
                "errors": counts.get("errors"),
                "batches": after["batches"],
                "batch_requests": after["batch_requests"],
                "requests_sent_twice": after["batch_requests_sent_twice"],
                "interactive_requests": after["requests"] - after["batch_requests"],
                "faithfulness": report.get("metrics", {}).get("faithfulness"),
            },
            indent=2,
        )
    )
    if resumed.returncode != 0:
        print(resumed.stderr[-2000:], file=sys.stderr)


# -- the kill matrix ------------------------------------------------------------------------------


def _history_rows(history: Path, sql: str) -> list[tuple[Any, ...]]:
    if not history.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{history}?mode=ro", uri=True, timeout=1)) as db:
            return db.execute(sql).fetchall()
    except sqlite3.Error:
        return []  # not created yet, or between two writes


def _batches(history: Path) -> list[tuple[str, str]]:
    return [
        (str(b), str(s)) for b, s in _history_rows(history, "SELECT batch_id, status FROM batches")
    ]


def _recorded(history: Path) -> list[str]:
    """The statuses of the batches the run recorded by their id (not their intents)."""
    return [s for b, s in _batches(history) if not b.startswith("intent-")]


def _results(history: Path) -> int:
    rows = _history_rows(history, "SELECT COUNT(*) FROM results")
    return int(rows[0][0]) if rows else 0


STAGES: dict[str, tuple[dict[str, Any], Any]] = {
    # stage: (server controls before the run, whether to kill now: (history, stats, samples))
    "before create": ({}, lambda h, st, n: bool(_history_rows(h, "SELECT id FROM runs"))),
    "after create, before record": (
        {"stall": 120},
        lambda h, st, n: st["batches"] >= 1,
    ),
    "after record": ({"hold": True}, lambda h, st, n: bool(_recorded(h))),
    "while polling": ({"hold": True}, lambda h, st, n: "in_progress" in _recorded(h)),
    "after download, before storing results": (
        {"hold_after_end": True},
        lambda h, st, n: st["batch_downloads"] >= 1,
    ),
    # Batches of 10 requests (and 10 samples in flight), so results are stored over time.
    "mid-results": ({"toml": "batch_size = 10\n"}, lambda h, st, n: _results(h) >= n // 2),
}
"""Where the run is killed (SIGKILL), how the server is set so it stays there long enough,
and how the benchmark sees it got there (the run history, read-only, and the server's stats)."""


def _kill_once(
    stage: str, provider: str, samples: int, batch_s: float, timeout: float
) -> dict[str, Any]:
    """One run killed at `stage`, then resumed, on a fresh server: what it paid."""
    controls, reached = STAGES[stage]
    folder = Path(tempfile.mkdtemp(prefix="vera-kill-"))
    data = folder / "samples.jsonl"
    write_jsonl(generate(samples), data)
    toml = "batch_poll = 0.2\nbatch_window = 0.5\n" + controls.get("toml", "")
    (folder / "vera.toml").write_text(toml)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "sim_server.py"),
            "--port",
            str(port),
            "--batch-s",
            str(batch_s),
        ],
        stdout=subprocess.DEVNULL,
    )
    env = {**os.environ, "OPENAI_API_KEY": "sk-sim", "ANTHROPIC_API_KEY": "sk-sim"}
    judge = JUDGES[provider](port)
    history = folder / ".vera" / "runs.sqlite"
    try:
        wait_for(lambda: _up(port), "the simulated server", 30)
        if controls.get("stall"):
            call(port, "/batches/stall-create", "POST", {"seconds": controls["stall"]})
        if controls.get("hold"):
            call(port, "/batches/hold", "POST")
        if controls.get("hold_after_end"):
            call(port, "/batches/hold-after-end", "POST")
        first = subprocess.Popen(
            vera(folder, "-d", str(data), "--batch", "--no-cache", *judge),
            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(
            lambda: _ended(first) or reached(history, call(port, "/stats"), samples),
            stage,
            timeout,
        )
        if first.returncode is not None:
            raise SystemExit(f"{stage}: the run ended by itself (exit {first.returncode})")
        first.kill()
        first.wait()
        at_kill = call(port, "/stats")
        batches = _batches(history)
        stored = _results(history)
        call(port, "/batches/stall-create", "POST", {"seconds": 0})
        call(port, "/batches/release", "POST")
        [(run_id,)] = _history_rows(history, "SELECT id FROM runs")
        resumed = subprocess.run(
            vera(folder, "--resume", str(run_id), "-o", "report.json", *judge),
            cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        after = call(port, "/stats")
    finally:
        server.kill()
        server.wait()
    report = json.loads((folder / "report.json").read_text()) if resumed.returncode == 0 else {}
    if resumed.returncode != 0:
        print(resumed.stderr[-2000:], file=sys.stderr)
    return {
        "provider": provider,
        "stage": stage,
        "at_kill": {
            "batches_created": at_kill["batches"],
            "intents": sum(1 for b, _ in batches if b.startswith("intent-")),
            "batches_recorded": sum(1 for b, _ in batches if not b.startswith("intent-")),
            "results_stored": stored,
        },
        "resume_exit": resumed.returncode,
        "scored": report.get("counts", {}).get("scored"),
        "samples": samples,
        "batch_requests": after["batch_requests"],
        "distinct_requests": after["batch_distinct_requests"],
        "requests_sent_twice": after["batch_requests_sent_twice"],
        "paid_per_request": round(
            after["batch_requests"] / max(1, after["batch_distinct_requests"]), 2
        ),
        "paid_per_sample": round(after["batch_requests"] / samples, 2),
    }


def kill_matrix(samples: int, batch_s: float, timeout: float, stages: list[str]) -> None:
    """Every stage (of `stages`), both providers; each row as JSON, then the table."""
    rows = []
    for provider in ("openai", "anthropic"):
        for stage in stages:
            row = _kill_once(stage, provider, samples, batch_s, timeout)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(
        "\n| provider | killed | at the kill: created / recorded / results | resume exit | "
        "scored | requests paid per distinct request | per sample | sent twice |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        k = r["at_kill"]
        cells = [
            r["provider"],
            r["stage"],
            f"{k['batches_created']} / {k['batches_recorded']} / {k['results_stored']}",
            r["resume_exit"],
            f"{r['scored']}/{r['samples']}",
            f"{r['paid_per_request']:.2f}",
            f"{r['paid_per_sample']:.2f}",
            r["requests_sent_twice"],
        ]
        print("| " + " | ".join(str(c) for c in cells) + " |")


def _ended(process: subprocess.Popen[bytes]) -> bool:
    return process.poll() is not None


def _up(port: int) -> bool:
    try:
        call(port, "/stats")
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
