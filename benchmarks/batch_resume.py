"""`vera eval --batch` over N samples on the simulated server, killed once while batches are
pending, then resumed: is every sample scored once, and was any request sent twice?

The simulated server (`llm_judges/sim_server.py`) answers both providers' batch APIs; the
samples are the LLM-judge benchmark's synthetic ones (`llm_judges/synth.py`). The first run is
killed (SIGKILL) once its second wave of batches (the verdicts, after the claims) is recorded
in the run history and held pending at the server; the server then lets batches end, and `vera
eval --resume RUN_ID` finishes the run. The server counts every request id it received in a
batch (a request's id is the hash of all of it), so a request sent twice shows.

    .venv/bin/python benchmarks/batch_resume.py --samples 10000 [--provider anthropic]
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


def call(port: int, path: str, method: str = "GET") -> dict[str, Any]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
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
    args = parser.parse_args()

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
