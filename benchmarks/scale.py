"""Memory and speed of `vera eval` as the row count grows: peak RSS, samples/s, store size.

Each size runs the real CLI in a subprocess (offline judge, history on, JSON report written)
on a JSONL file generated on the fly in a temporary folder from the bundled `example` rows,
each copied with a fresh id. Peak RSS is the child's, from `getrusage(RUSAGE_CHILDREN)`, so a
fresh interpreter runs each size.

    .venv/bin/python benchmarks/scale.py --rows 20000 200000 1000000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vera.datasets import bundled_path


def write_rows(path: Path, rows: int) -> None:
    """`rows` samples: the bundled example's rows in turn, each with its own id."""
    examples = [json.loads(line) for line in bundled_path("example").open() if line.strip()]
    with path.open("w", encoding="utf-8") as out:
        for index in range(rows):
            row = dict(examples[index % len(examples)], id=f"s{index}")
            out.write(json.dumps(row) + "\n")


def measure(rows: int, folder: Path) -> dict[str, float]:
    """One `vera eval` over `rows` rows: wall seconds, samples/s, peak RSS and output sizes."""
    data = folder / f"rows-{rows}.jsonl"
    write_rows(data, rows)
    script = (
        "import resource, subprocess, sys;"
        "code = subprocess.call(sys.argv[1:]);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);"
        "sys.exit(code)"
    )
    command = [sys.executable, "-m", "vera", "eval", "-d", str(data), "--history",
               str(folder / f"h-{rows}.sqlite"), "-o", str(folder / f"r-{rows}.json")]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *command], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: the bundled rows fail the default gate by design
        raise SystemExit(f"vera eval failed ({done.returncode}): {done.stderr[-2000:]}")
    peak_kb = int(done.stdout.strip().splitlines()[-1])
    data.unlink()
    return {
        "rows": rows,
        "wall_s": round(wall, 1),
        "samples_per_s": round(rows / wall, 1),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "store_bytes_per_sample": round((folder / f"h-{rows}.sqlite").stat().st_size / rows),
        "report_mb": round((folder / f"r-{rows}.json").stat().st_size / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[20_000, 200_000])
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            print(json.dumps(measure(rows, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
