"""Fit the verifier's calibration and thresholds on held-out claims, and report what it gives.

    python training/verifier/calibrate.py build/verifier-h1/heldout-epoch1.jsonl \
        --benchmarks benchmarks/data

Reads the claim-level scores `train.py --holdout K` wrote for documents it never trained on,
fits P(supported) = sigmoid(scale * logit + bias) by logistic regression (Platt scaling), then
picks the `full_support` threshold that maximises response-level F1 of the unfaithful class
(a response is flagged when any claim's probability is below it), and prints the response-
and span-level figures at that threshold.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from data import fold_of, read_rows
from judge_accuracy import auroc, summarise


def platt(logits: np.ndarray, supported: np.ndarray, steps: int = 2000) -> tuple[float, float]:
    """Logistic regression of the label on the logit, by Newton's method."""
    a, b = 1.0, 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a * logits + b)))
        g = np.array([np.sum((p - supported) * logits), np.sum(p - supported)])
        w = p * (1 - p)
        h = np.array([[np.sum(w * logits**2), np.sum(w * logits)], [np.sum(w * logits), np.sum(w)]])
        step = np.linalg.solve(h + 1e-9 * np.eye(2), g)
        a, b = a - step[0], b - step[1]
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(a), float(b)


def response_figures(
    rows: list[dict[str, object]], claims: dict[str, list[dict[str, object]]], threshold: float
) -> dict[str, object]:
    outcomes = []
    for row in rows:
        scored = claims.get(str(row["id"]), [])
        low = [c for c in scored if float(c["p"]) < threshold]  # type: ignore[arg-type]
        outcomes.append(
            {
                "flagged": int(bool(low)),
                "score": 1 - min((float(c["p"]) for c in scored), default=1.0),  # type: ignore[arg-type]
                "spans": [tuple(c["span"]) for c in low],  # type: ignore[arg-type]
            }
        )
    return {"threshold": threshold, **summarise(rows, outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("heldout", type=Path)
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--fold", type=int, default=1, help="the fold the scores are for")
    args = parser.parse_args()
    scored = [json.loads(line) for line in args.heldout.read_text().splitlines() if line]
    logits = np.array([s["logit"] for s in scored])
    supported = np.array([s["supported"] for s in scored], dtype=float)
    scale, bias = platt(logits, supported)
    by_row: dict[str, list[dict[str, object]]] = defaultdict(list)
    for s, z in zip(scored, logits, strict=True):
        s["p"] = 1 / (1 + math.exp(-(scale * z + bias)))
        by_row[s["row_id"]].append(s)
    # Rows with no claim at all are judged faithful; they are in the fold too.
    rows = [
        r
        for r in read_rows(args.benchmarks / "ragtruth_dev.jsonl")
        if fold_of(str(r["id"])) == args.fold
    ]
    print(
        f"{len(scored)} claims, {len(rows)} responses;"
        f" calibration scale {scale:.3f} bias {bias:.3f}"
    )
    claim_auroc = auroc([-z for z in logits.tolist()], [1 - int(y) for y in supported.tolist()])
    print(f"claim-level AUROC {claim_auroc:.3f}")
    best = max(
        (response_figures(rows, by_row, t / 100) for t in range(5, 96)),
        key=lambda f: f["all"]["f1"],  # type: ignore[index]
    )
    print(json.dumps(best, indent=2))


if __name__ == "__main__":
    main()
