"""Peak memory of `vera compare RUN_A RUN_B` on two stored runs as their row count grows.

The rows (the bundled example's, each with its own id; see `baseline_rss.write_rows`) are
evaluated twice into one history with the offline:learned judge, the second time with a lower
`--offline-min-support`, so some verdicts and scores differ. Then `vera compare` of the two
runs runs in a child, and its CPU seconds and peak RSS (from `getrusage(RUSAGE_CHILDREN)`)
are printed. The two runs' results are paired in SQL and read once, keeping only the top
changes, so the peak should stay flat as the rows grow.

    PYTHONPATH=src .venv/bin/python benchmarks/compare_rss.py --rows 2000 20000

`--folder DIR` keeps the histories in DIR and reuses them on the next call: the same two
runs measured by another tree of VERA (put it first on PYTHONPATH) give a before and after.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

from baseline_rss import vera_child as vera
from baseline_rss import write_rows

_MIN_SUPPORT = ("0.97", "0.9")
"""The two runs' `--offline-min-support`: the second moves the verdicts of some claims."""


def stored_runs(rows: int, folder: Path) -> tuple[Path, list[str]]:
    """The history of `rows` rows evaluated twice (made once, reused), and its two run ids."""
    history = folder / f"h-{rows}.sqlite"
    if not history.exists():
        data = folder / f"rows-{rows}.jsonl"
        write_rows(data, rows)
        for support in _MIN_SUPPORT:
            vera("eval", "-d", str(data), "--history", str(history), "--judge", "offline:learned",
                 "--offline-min-support", support, "-o", str(folder / "r.json"))  # fmt: skip
        data.unlink()
    with closing(sqlite3.connect(history)) as db:
        ids = [str(row[0]) for row in db.execute("SELECT id FROM runs ORDER BY created, id")]
    if len(ids) != 2:
        raise SystemExit(f"{history}: expected the 2 runs this script stores, found {len(ids)}")
    return history, ids


def measure(rows: int, folder: Path) -> dict[str, object]:
    history, (first, second) = stored_runs(rows, folder)
    cpu, rss, printed = vera("compare", first, second, "--history", str(history))
    summary = next(line for line in printed.splitlines() if "samples changed" in line)
    return {
        "rows": rows,
        "compare_cpu_s": cpu,
        "compare_peak_rss_mb": rss,
        "changed": summary.split(" samples changed")[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--folder", type=Path, help="keep the histories here and reuse them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for rows in args.rows:
            print(json.dumps(measure(rows, folder)), flush=True)


if __name__ == "__main__":
    main()
