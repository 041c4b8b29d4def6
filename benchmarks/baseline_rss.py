"""Peak memory of `vera eval --baseline naive-rag` as the row count grows.

A run with a baseline pairs every sample of the system's pass with the baseline's, for the
paired statistics of `baseline_comparison`. Those pairs are read back from the run store, so
the run streams: peak RSS should stay flat as the rows grow. Each size runs the real CLI in a
fresh subprocess (offline judge, history in a temporary file, JSON report written) on a JSONL
file generated from the bundled `example` rows, each copied with a fresh id (the baseline's
corpus, the distinct contexts, stays the example's). Peak RSS is the child's, from
`getrusage(RUSAGE_CHILDREN)`.

    PYTHONPATH=src .venv/bin/python benchmarks/baseline_rss.py --rows 20000 200000
    PYTHONPATH=src .venv/bin/python benchmarks/baseline_rss.py --rows 2000 --no-history
    PYTHONPATH=src .venv/bin/python benchmarks/baseline_rss.py --rows 20000 \
        --no-history --no-baseline
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vera.datasets import bundled_path

_CHILD = (
    "import resource, subprocess, sys;"
    "code = subprocess.call(sys.argv[1:]);"
    "used = resource.getrusage(resource.RUSAGE_CHILDREN);"
    "print(used.ru_utime + used.ru_stime, used.ru_maxrss);"
    "sys.exit(code)"
)


def vera_child(*args: str) -> tuple[float, float, str]:
    """`vera ARGS` in a child: its CPU seconds, peak RSS in MB and standard output (the
    resume and compare benchmarks measure through it too)."""
    command = [sys.executable, "-m", "vera", *args]
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *command], capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1):  # 1: the bundled rows fail the default gate by design
        raise SystemExit(f"vera {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    *printed, usage = done.stdout.strip().splitlines()
    cpu, peak_kb = usage.split()
    return round(float(cpu), 1), round(int(peak_kb) / 1024, 1), "\n".join(printed)


def write_rows(path: Path, rows: int) -> None:
    """`rows` samples: the bundled example's rows in turn, each with its own id."""
    examples = [json.loads(line) for line in bundled_path("example").open() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for index in range(rows):
            row = dict(examples[index % len(examples)], id=f"s{index}")
            out.write(json.dumps(row) + "\n")


def measure(rows: int, folder: Path, *, history: bool, baseline: bool) -> dict[str, object]:
    """One `vera eval --baseline naive-rag` (or without a baseline) over `rows` rows: wall and
    CPU seconds (the CPU time does not depend on what else the machine runs), and peak RSS."""
    data = folder / f"rows-{rows}.jsonl"
    write_rows(data, rows)
    store = ["--history", str(folder / f"h-{rows}.sqlite")] if history else ["--no-history"]
    compare = ["--baseline", "naive-rag"] if baseline else []
    started = time.perf_counter()
    cpu, peak_mb, _ = vera_child(
        "eval", "-d", str(data), *compare, *store, "-o", str(folder / f"r-{rows}.json")
    )
    wall = time.perf_counter() - started
    report = json.loads((folder / f"r-{rows}.json").read_text(encoding="utf-8"))
    paired = report["baseline_comparison"]["significance"]["naive_rag"] if baseline else {}
    data.unlink()
    return {
        "rows": rows,
        "history": history,
        "baseline": baseline,
        "samples_in_report": len(report["samples"]),
        "wall_s": round(wall, 1),
        "cpu_s": cpu,
        "peak_rss_mb": peak_mb,
        "paired_samples": {metric: c["paired_samples"] for metric, c in paired.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--no-history", action="store_true", help="run with --no-history")
    parser.add_argument("--no-baseline", action="store_true", help="run without --baseline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            figures = measure(
                rows, Path(folder), history=not args.no_history, baseline=not args.no_baseline
            )
            print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
