"""The offline judge's figures on RAGTruth by the seeds' sample rule, per task type.

    python training/verifier/evaluate.py benchmarks/data/ragtruth_dev.jsonl [--learned] [--fold 1]

A response fails when the mean of its claims' verdict weights (FULLY_SUPPORTED 1,
PARTIALLY_SUPPORTED 0.5, NO_EVIDENCE and CONTRADICTED 0) is below 0.5, `faithfulness`'s rule
and default threshold; it is ranked for AUROC by 1 minus the product of its claims'
probabilities of support (`faithfulness_probability`). Spans are the characters of the claims
not FULLY_SUPPORTED, as `vera benchmark` marks them (`--unsupported-spans`: only those
NO_EVIDENCE or CONTRADICTED). Scored by the metrics themselves (`Faithfulness`,
`FaithfulnessProbability`), so the figures are the ones `vera eval` and `vera benchmark` give;
unlike `vera benchmark`, it takes `--fold`, `--model` and `--unsupported-spans`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from data import read_rows
from judge_accuracy import fold_of, summarise

from vera import Claim, ClaimVerdict, Sample, Verdict
from vera.judges import OfflineJudge
from vera.metrics import ClaimAnalysis
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._faithfulness_probability import FaithfulnessProbability

WHITEBOX = "the built-in metric classes behind the names"

_SAMPLE = Sample(id="row", response="")
"""The metrics read only the claim analysis; the sample is a stand-in."""

_FAITHFULNESS = Faithfulness()
_PROBABILITY = FaithfulnessProbability()


def outcome(
    claims: Sequence[Claim], verdicts: Sequence[ClaimVerdict], *, unsupported: bool
) -> dict[str, Any]:
    """One response's flag, probability score and marked spans from its claims' verdicts, by
    the metrics `vera eval` uses: flagged when `faithfulness` fails its threshold, ranked by 1
    minus `faithfulness_probability`. Spans are the claims not FULLY_SUPPORTED, or with
    `unsupported` only those NO_EVIDENCE or CONTRADICTED."""
    analysis = ClaimAnalysis(claims=tuple(claims), verdicts=tuple(verdicts))
    probability = _PROBABILITY.score(_SAMPLE, analysis).score
    marked = [
        c.span or (0, 0)
        for c, v in zip(claims, verdicts, strict=True)
        if (v.verdict.unsupported if unsupported else v.verdict is not Verdict.FULLY_SUPPORTED)
    ]
    return {
        "flagged": int(_FAITHFULNESS.score(_SAMPLE, analysis).passed is False),
        "score": 1.0 - (1.0 if probability is None else probability),
        "spans": marked,
    }


def judge_rows(
    judge: OfflineJudge, rows: Sequence[dict[str, Any]], *, unsupported: bool
) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        out = []
        for row in rows:
            claims = await judge.extract_claims(str(row["response"]))
            verdicts = await judge.verify_claims(claims, [str(c) for c in row["contexts"]])
            out.append(outcome(claims, verdicts, unsupported=unsupported))
        return out

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--learned", action="store_true", help="offline:learned")
    parser.add_argument("--model", type=Path, help="another support_model.json")
    parser.add_argument("--fold", type=int, choices=(0, 1))
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    parser.add_argument(
        "--unsupported-spans",
        action="store_true",
        help="mark only NO_EVIDENCE and CONTRADICTED claims as spans (else: not FULLY_SUPPORTED)",
    )
    args = parser.parse_args()
    rows = read_rows(args.path)
    if args.fold is not None:
        rows = [r for r in rows if fold_of(str(r["id"])) == args.fold]
    judge = OfflineJudge(learned=args.learned, model_path=args.model)
    start = time.perf_counter()
    outcomes = judge_rows(judge, rows, unsupported=args.unsupported_spans)
    rate = len(rows) / (time.perf_counter() - start)
    figures = summarise(rows, outcomes)
    for name, group in figures.items():
        if name == "span":
            print(f"span: P {group['precision']:.3f} R {group['recall']:.3f} F1 {group['f1']:.3f}")
            continue
        print(
            f"{name:9} n {group['n']:5}  BAcc {group['balanced_accuracy']:.3f}  "
            f"AUROC {group['auroc']:.3f}  F1 {group['f1']:.3f}  "
            f"P {group['precision']:.3f}  R {group['recall']:.3f}"
        )
    print(f"{rate:.0f} samples/s")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
