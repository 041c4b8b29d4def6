"""Train the offline judge's support model (logistic regression on alignment features).

    python training/verifier/train_features.py --benchmarks ../shared/benchmarks \
        --write src/vera/judges/offline/support_model.json

1. Held-out estimate: fit on the RAGTruth dev claims of fold 0 (split by source document, see
   `benchmarks/judge_accuracy.py: fold_of`), score fold 1, and pick `min_support`, the
   threshold that maximises response-level F1 of the unfaithful class on fold 1 (a response is
   flagged when any claim's P(supported) is below it). Prints fold 1's figures: documents the
   model never saw.
2. The shipped model: the same fit on every dev claim, with that threshold.

Claims, lexical verdicts and features come from VERA's own code (`OfflineJudge(learned=False)`
and `vera.judges.offline.features`), so training sees exactly what inference computes. A claim
is unsupported when it overlaps a human-marked hallucinated span. Needs scikit-learn
(`pip install -e '.[train]'`).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from data import read_rows
from judge_accuracy import auroc, fold_of, summarise
from sklearn.linear_model import LogisticRegression

from vera.judges.offline.claims import extract_claims
from vera.judges.offline.features import FEATURES, SampleFacts, claim_features
from vera.judges.offline.judge import settled
from vera.judges.offline.verify import Settings, verify

PARTIAL_PROBABILITY = 0.5  # below min_support: PARTIALLY_SUPPORTED from here, NO_EVIDENCE below
C = 1.0


Where = list[tuple[int, tuple[int, int]]]  # each claim's row and character span


def claim_table(rows: list[dict[str, object]]) -> tuple[np.ndarray, np.ndarray, Where, np.ndarray]:
    """Features, labels, (row, span) and the settled verdict (or "") of every claim of `rows`."""
    verdicts: list[str] = []
    features: list[list[float]] = []
    labels: list[int] = []
    where: Where = []
    for r, row in enumerate(rows):
        contexts = [str(c) for c in row["contexts"]]  # type: ignore[attr-defined]
        claims = extract_claims(str(row["response"]))
        if not claims:
            continue
        spans = [(int(s["start"]), int(s["end"])) for s in row.get("hallucinated_spans") or []]  # type: ignore[attr-defined]
        lexical = verify(claims, contexts, Settings())
        sample = SampleFacts.of(claims, contexts)
        for i, (claim, verdict) in enumerate(zip(claims, lexical, strict=True)):
            start, end = claim.span or (0, 0)
            features.append(claim_features(claim, i, len(claims), verdict, sample))
            labels.append(int(any(s < end and start < e for s, e in spans)))
            where.append((r, (start, end)))
            kept = settled(verdict, features[-1][FEATURES.index("missing_share")])
            verdicts.append(kept.value if kept else "")
    return np.array(features), np.array(labels), where, np.array(verdicts)


def fit(x: np.ndarray, y: np.ndarray) -> dict[str, object]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, max_iter=5000).fit((x - mean) / scale, y)
    return {
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "weights": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def support(params: dict[str, object], x: np.ndarray) -> np.ndarray:
    z = ((x - np.array(params["mean"])) / np.array(params["scale"])) @ np.array(params["weights"])
    return 1.0 - 1.0 / (1.0 + np.exp(-(z + float(params["intercept"]))))  # type: ignore[arg-type]


def figures(
    rows: list[dict[str, object]],
    probs: np.ndarray,
    lexical: np.ndarray,
    where: Where,
    threshold: float,
) -> dict[str, object]:
    """What the judge's verdicts give: `lexical` holds each claim's settled verdict where
    `OfflineJudge.settled` gives one, else ""; the others are flagged below `threshold`."""
    low: dict[int, float] = {}
    marked: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p, kind, (r, span) in zip(probs.tolist(), lexical.tolist(), where, strict=True):
        low[r] = min(low.get(r, 1.0), p)
        if (kind and kind != "FULLY_SUPPORTED") or (not kind and p < threshold):
            marked[r].append(span)
    outcomes = [
        {
            "flagged": int(bool(marked.get(r))),
            "score": 1 - low.get(r, 1.0),
            "spans": marked.get(r, []),
        }
        for r in range(len(rows))
    ]
    return {"min_support": threshold, **summarise(rows, outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    rows = read_rows(args.benchmarks / "ragtruth_dev.jsonl")
    x, y, where, lexical = claim_table(rows)
    fold = np.array([fold_of(str(rows[r]["id"])) for r, _ in where])
    params = fit(x[fold == 0], y[fold == 0])
    test_rows = [i for i, row in enumerate(rows) if fold_of(str(row["id"])) == 1]
    position = {r: k for k, r in enumerate(test_rows)}
    test_where = [(position[r], span) for (r, span), f in zip(where, fold, strict=True) if f == 1]
    probs = support(params, x[fold == 1])
    held_rows = [rows[i] for i in test_rows]
    best = max(
        (
            figures(held_rows, probs, lexical[fold == 1], test_where, t / 100)
            for t in range(50, 100)
        ),
        key=lambda f: f["all"]["f1"],  # type: ignore[index]
    )
    threshold = float(best["min_support"])  # type: ignore[arg-type]
    claim_auroc = auroc((1 - probs).tolist(), y[fold == 1].tolist())
    print(f"{len(y)} claims ({int(y.sum())} unsupported) in {len(rows)} responses")
    print(f"held-out fold 1: claim-level AUROC {claim_auroc:.3f}")
    print(json.dumps(best, indent=2))
    shipped = fit(x, y)
    if args.write:
        card = {
            "features": list(FEATURES),
            **shipped,
            "thresholds": {"min_support": threshold, "partial_probability": PARTIAL_PROBABILITY},
            "trained_on": f"ragtruth_dev: {len(y)} claims of {len(rows)} responses",
            "settings": {"model": "logistic regression, L2", "C": C},
            "heldout_fold1": {"claim_auroc": claim_auroc, **best},
        }
        args.write.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
