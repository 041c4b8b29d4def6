"""Peak memory of `vera eval --resume` as the finished part of the resumed run grows.

A run of N rows is evaluated with a history (offline judge), then made to look interrupted:
its status set back to `running` and its last 10 results deleted, as a kill leaves it. Then
`vera eval --resume RUN_ID` evaluates the 10 left, and its peak RSS (the child's, from
`getrusage(RUSAGE_CHILDREN)`) is what this prints: the finished results are looked up in the
history one at a time, so it should stay flat as N grows.

    PYTHONPATH=src .venv/bin/python benchmarks/resume_rss.py --rows 2000 20000
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from baseline_rss import vera_child, write_rows

_LEFT = 10


def interrupt(history: Path) -> str:
    """Make the one run in `history` look killed with `_LEFT` samples left; its id."""
    with closing(sqlite3.connect(history)) as db, db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
        db.execute("UPDATE runs SET status = 'running', report = NULL WHERE id = ?", (run_id,))
        db.execute(
            "DELETE FROM results WHERE run_id = ? AND position >= "
            "(SELECT MAX(position) FROM results WHERE run_id = ?) - ?",
            (run_id, run_id, _LEFT - 1),
        )
    return str(run_id)


def measure(rows: int, folder: Path) -> dict[str, object]:
    data, history = folder / f"rows-{rows}.jsonl", folder / f"h-{rows}.sqlite"
    write_rows(data, rows)
    store = ("--history", str(history))
    _, first_rss, _ = vera_child("eval", "-d", str(data), *store, "-o", str(folder / "first.json"))
    run_id = interrupt(history)
    out = folder / f"r-{rows}.json"
    cpu, resume_rss, _ = vera_child("eval", "--resume", run_id, *store, "-o", str(out))
    report = json.loads(out.read_text(encoding="utf-8"))
    data.unlink()
    return {
        "rows": rows,
        "resumed_samples": _LEFT,
        "samples_in_report": len(report["samples"]),
        "first_run_peak_rss_mb": first_rss,
        "resume_cpu_s": cpu,
        "resume_peak_rss_mb": resume_rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 20000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            print(json.dumps(measure(rows, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
