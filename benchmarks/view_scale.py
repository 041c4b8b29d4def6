"""`vera view` over a long run history: the time of one page of the list and the server's memory.

Builds a history of `--runs` runs: one real run of the bundled `example` dataset judged by the
offline judge, whose row (its plan and its 2.7 KB of stored aggregates) is then copied with
fresh ids and times, one minute apart, spread over `--datasets` dataset names; one copy in the
middle is damaged (`report = '{not json'`), as issue 27 found one. The copies have no stored
results (the list reads none). Then `vera view` serves it in its own process (uvicorn on
127.0.0.1, as a user starts it), and the first, a middle and the last page of the list are
asked for `--repeat` times each. Printed: each page's size, its median and worst time as the
client saw it, the server's resident memory (VmRSS) after the requests, and its peak (VmHWM).

    .venv/bin/python benchmarks/view_scale.py --runs 30000
    .venv/bin/python benchmarks/view_scale.py --runs 30000 --history /tmp/h.sqlite --keep
    .venv/bin/python benchmarks/view_scale.py --runs 30000 --without-indexes   # an older file

The server runs the `vera` that this interpreter imports (PYTHONPATH included), so pointing
PYTHONPATH at another checkout measures that version on the same history.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from vera import Settings, run_plan
from vera._plan import DatasetRef, build_plan

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

_COPIES = """
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO runs (id, created, dataset, options, status, report)
SELECT printf('%s-%06x', strftime('%Y%m%d-%H%M%S', r.created - 60 * i, 'unixepoch'), i),
       r.created - 60 * i,
       CASE WHEN i % ? = 0 THEN r.dataset ELSE r.dataset || '-' || (i % ?) END,
       r.options, r.status, r.report
FROM n, runs r WHERE r.id = ?
"""


def build_history(path: Path, runs: int, datasets: int, *, indexes: bool = True) -> str:
    """A history of `runs` runs at `path`; the id of the damaged one. Without `indexes`, as
    a VERA before them left it (the view, a reader, never makes them)."""
    settings = Settings(judge="offline", history_path=path, cache=False)
    plan = build_plan(dataset=DatasetRef(source="example"), settings=settings)
    real = run_plan(plan).run_id
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        db.execute(_COPIES, (runs - 1, datasets, datasets, real))
        (damaged,) = db.execute(
            "SELECT id FROM runs ORDER BY created DESC LIMIT 1 OFFSET ?", (runs // 2,)
        ).fetchone()
        db.execute("UPDATE runs SET report = '{not json' WHERE id = ?", (damaged,))
        if not indexes:
            db.execute("DROP INDEX IF EXISTS runs_by_time")
            db.execute("DROP INDEX IF EXISTS runs_by_dataset")
            db.execute("PRAGMA user_version = 0")  # and no layout version, as then
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return str(damaged)


def _memory(pid: int) -> dict[str, int]:
    """The process's VmRSS and VmHWM, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmRSS", "VmHWM"}:
            found[name] = int(value.split()[0]) // 1024
    return found


def _start(history: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "vera", "view", "--history", str(history)]
    server = subprocess.Popen(
        [*command, "--no-browser", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300"},
    )
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], 120)
    line = server.stdout.readline() if ready else ""
    found = re.search(r"http://127\.0\.0\.1:\d+/", line)
    if found is None:
        server.kill()
        raise SystemExit(f"vera view printed no address: {line!r}")
    return server, found.group(0)


def measure(history: Path, runs: int, repeat: int) -> None:
    server, url = _start(history)
    try:
        print(f"server pid {server.pid}, memory after start {_memory(server.pid)} MB")
        last = max(1, -(-runs // 50))
        for page in (1, last // 2, last):
            times, size = [], 0
            for _ in range(repeat):
                started = time.perf_counter()
                response = httpx.get(f"{url}?page={page}", timeout=300)
                times.append(time.perf_counter() - started)
                response.raise_for_status()
                size = len(response.content)
            rows = response.text.count("<tr data-run=")
            print(
                f"page {page}: {size / 1e3:.0f} kB, {rows} runs; median "
                f"{statistics.median(times):.3f} s, worst {max(times):.3f} s"
            )
        print(f"server memory after the requests: {_memory(server.pid)} MB")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30_000)
    parser.add_argument("--datasets", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--history", type=Path, help="where to build it (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="reuse --history if it exists")
    parser.add_argument(
        "--without-indexes", action="store_true", help="a history written before the list's indexes"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        history = args.history or Path(folder) / "runs.sqlite"
        if not (args.keep and history.exists()):
            history.unlink(missing_ok=True)
            started = time.perf_counter()
            damaged = build_history(
                history, args.runs, args.datasets, indexes=not args.without_indexes
            )
            print(
                f"built {args.runs} runs in {time.perf_counter() - started:.1f} s "
                f"({history.stat().st_size / 1e6:.0f} MB; run {damaged} damaged)"
            )
        measure(history, args.runs, args.repeat)


if __name__ == "__main__":
    main()
