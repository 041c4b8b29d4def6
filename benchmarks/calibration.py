"""Calibration on real labels: how often the PPI++ interval covers the truth, and how wide it is.

Runs each judge once over a labelled file in the shared benchmark format (`label` 1 =
unfaithful), then, `--draws` times, hands `--labelled` rows drawn at random their human label
and leaves the rest unlabelled, and computes the report's calibration block from the judge's
results. The truth is the file's own share of unfaithful responses (and its complement for mean
faithfulness). Prints, per judge: how often each 95 % interval covered the truth, and the mean
widths of the prediction-powered and the labels-only intervals.

    .venv/bin/python benchmarks/calibration.py benchmarks/data/ragtruth_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

import vera
from vera import Sample
from vera._stats import CalibrationTally
from vera._types import CorrectedEstimate

WHITEBOX = "the statistics formulas"


def _samples(path: Path) -> tuple[list[Sample], list[bool]]:
    samples, unfaithful = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        samples.append(
            Sample(
                id=row["id"],
                query=row.get("query") or "",
                response=row["response"],
                contexts=tuple(row["contexts"]),
            )
        )
        unfaithful.append(bool(row["label"]))
    return samples, unfaithful


def _covers(found: CorrectedEstimate | None, truth: float) -> tuple[bool, bool, float, float]:
    assert found is not None
    return (
        found.ci_low <= truth <= found.ci_high,
        found.labels_only_ci_low <= truth <= found.labels_only_ci_high,
        found.ci_high - found.ci_low,
        found.labels_only_ci_high - found.labels_only_ci_low,
    )


def _study(
    outcomes: list[tuple[float, bool]], unfaithful: list[bool], labelled: int, draws: int
) -> dict[str, object]:
    truth = statistics.fmean(unfaithful)
    rng = random.Random(0)
    share, faithfulness = [], []
    for _ in range(draws):
        chosen = set(rng.sample(range(len(outcomes)), labelled))
        tally = CalibrationTally()
        for index, ((score, passed), bad) in enumerate(zip(outcomes, unfaithful, strict=True)):
            tally.add(not bad if index in chosen else None, score, passed)
        block = tally.calibration()
        assert block is not None
        share.append(_covers(block.unfaithful_share, truth))
        faithfulness.append(_covers(block.mean_faithfulness, 1 - truth))
    return {
        name: {
            "coverage_ppi": statistics.fmean(r[0] for r in runs),
            "coverage_labels_only": statistics.fmean(r[1] for r in runs),
            "width_ppi": statistics.fmean(r[2] for r in runs),
            "width_labels_only": statistics.fmean(r[3] for r in runs),
        }
        for name, runs in (("unfaithful_share", share), ("mean_faithfulness", faithfulness))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("file", type=Path)
    parser.add_argument("--judges", default="offline,offline:learned")
    parser.add_argument("--labelled", type=int, default=150)
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    samples, unfaithful = _samples(args.file)
    for judge in args.judges.split(","):
        report = vera.evaluate(samples, ["faithfulness"], judge)
        outcomes = []
        for result in report.samples:
            metric = result.results["faithfulness"]
            assert metric.score is not None and metric.passed is not None, result.id
            outcomes.append((metric.score, metric.passed))
        figures = _study(outcomes, unfaithful, args.labelled, args.draws)
        print(json.dumps({"judge": judge, "rows": len(samples), **figures}, indent=1), flush=True)


if __name__ == "__main__":
    main()
