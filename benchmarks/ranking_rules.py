"""How well each way of combining a judge's claim probabilities ranks unfaithful answers: the
AUROC, overall and per task type, of the rules docs/metrics.md compares for
`faithfulness_probability` (the product), beside faithfulness's mean of verdict weights.

Reads a labelled JSONL file in the format `vera benchmark` reads (`benchmarks/data/`),
analyses every answer once with the judge, then scores each rule over the same probabilities.
A claim without a probability counts its verdict's ratio weight, as faithfulness_probability
does.

    .venv/bin/python benchmarks/ranking_rules.py benchmarks/data/ragtruth_dev.jsonl \\
        --judge offline
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from vera import Claim, ClaimVerdict, Verdict
from vera._analysis import analyse_claims
from vera._run import LabelledRow, read_labelled_rows
from vera._stats import auroc
from vera.judges import Judge, create_judge
from vera.metrics import ClaimAnalysis
from vera.metrics._faithfulness import Faithfulness

WHITEBOX = "the work plan; the statistics formulas"

Analysed = tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]

_RATIO = {
    Verdict.FULLY_SUPPORTED: 1.0,
    Verdict.PARTIALLY_SUPPORTED: 0.5,
    Verdict.NO_EVIDENCE: 0.0,
    Verdict.CONTRADICTED: 0.0,
}

RULES: dict[str, Callable[[list[float]], float]] = {
    "product (faithfulness_probability)": math.prod,
    "product^(1/sqrt n)": lambda p: math.prod(p) ** (1 / math.sqrt(len(p))),
    "product of the lowest three": lambda p: math.prod(sorted(p)[:3]),
    "mean of the probabilities": statistics.fmean,
    "least supported claim": min,
}
"""Each maps a response's claim probabilities (at least one) to its support; no claims is 1."""


async def _analyse(rows: Sequence[LabelledRow], judge: Judge) -> list[Analysed]:
    slots = asyncio.Semaphore(8)

    async def one(row: LabelledRow) -> Analysed:
        async with slots:
            return await analyse_claims(row.sample, judge)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def _aurocs(rows: Sequence[LabelledRow], support: Sequence[float]) -> dict[str, float | None]:
    groups: dict[str, list[int]] = {"all": list(range(len(rows)))}
    for i, row in enumerate(rows):
        groups.setdefault(row.task_type or "?", []).append(i)
    return {
        name: auroc([1 - support[i] for i in members], [rows[i].label for i in members])
        for name, members in groups.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", type=Path)
    parser.add_argument("--judge", default="offline")
    args = parser.parse_args()
    rows = read_labelled_rows(args.path)
    analysed = asyncio.run(_analyse(rows, create_judge(args.judge)))
    probabilities = [
        [v.entailment if v.entailment is not None else _RATIO[v.verdict] for v in verdicts]
        for _, verdicts in analysed
    ]
    figures: dict[str, dict[str, float | None]] = {
        name: _aurocs(rows, [rule(p) if p else 1.0 for p in probabilities])
        for name, rule in RULES.items()
    }
    metric = Faithfulness()
    faithfulness = [
        metric.score(row.sample, ClaimAnalysis(claims=claims, verdicts=verdicts)).score or 0.0
        for row, (claims, verdicts) in zip(rows, analysed, strict=True)
    ]
    figures["faithfulness (mean of verdict weights)"] = _aurocs(rows, faithfulness)
    print(json.dumps({"judge": args.judge, "rows": len(rows), "auroc": figures}, indent=2))


if __name__ == "__main__":
    main()
