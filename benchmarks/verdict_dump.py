"""Every verdict and score the offline judge gives, as one JSON file, to compare two revisions.

Runs `vera.aevaluate` with the offline judge on the rows of a labelled JSONL file (RAGTruth dev
by default) and on `offline_speed.py`'s synthetic samples, and writes each report with what a
clock gives left out (timestamp, latencies): a sample a line, then the report's other figures.
A speed change must leave this file byte-identical: run it with each revision's source tree
and compare with `cmp`.

    PYTHONPATH=/tmp/base38/src python benchmarks/verdict_dump.py -o /tmp/before.jsonl
    PYTHONPATH=src python benchmarks/verdict_dump.py -o /tmp/after.jsonl
    cmp /tmp/before.jsonl /tmp/after.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import vera
from vera._run import read_labelled_rows
from vera.judges import OfflineJudge

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_speed import make_samples

WHITEBOX = "the labelled-file reader, as judge_accuracy.py reads RAGTruth"
ROOT = Path(__file__).resolve().parents[1]
_CLOCKED = ("timestamp", "latency_ms", "latency", "latency_by_category")


def _unclocked(report: dict[str, Any]) -> dict[str, Any]:
    report = {k: v for k, v in report.items() if k not in _CLOCKED}
    report["samples"] = [
        {k: v for k, v in s.items() if k not in _CLOCKED} for s in report["samples"]
    ]
    return report


async def _reports(path: Path, synthetic: int) -> list[dict[str, Any]]:
    judge = OfflineJudge()
    groups = [[row.sample for row in read_labelled_rows(path)]]
    groups.append(
        [
            vera.Sample(id=f"synthetic-{i}", response=s.answer, contexts=s.contexts)
            for i, s in enumerate(make_samples(synthetic, seed=0))
        ]
    )
    reports = []
    for samples in groups:
        report = await vera.aevaluate(samples, judge=judge)
        reports.append(_unclocked(report.model_dump(mode="json")))
    return reports


def main() -> None:
    """Parse arguments and write the verdict dump."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "path", nargs="?", type=Path, default=ROOT / "benchmarks/data/ragtruth_dev.jsonl"
    )
    parser.add_argument("--synthetic", type=int, default=300, help="offline_speed samples")
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    reports = asyncio.run(_reports(args.path, args.synthetic))
    lines = 0
    with args.out.open("w") as out:
        # A sample a line, then the report without them, so that a diff names the row.
        for report in reports:
            for sample in report.pop("samples"):
                out.write(json.dumps(sample, sort_keys=True) + "\n")
                lines += 1
            out.write(json.dumps(report, sort_keys=True) + "\n")
    print(f"{len(reports)} reports ({lines} samples) written to {args.out}")


if __name__ == "__main__":
    main()
