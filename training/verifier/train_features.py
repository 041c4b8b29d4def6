"""Train the offline judge's support model (logistic regression on alignment features).

    python training/verifier/train_features.py --benchmarks benchmarks/data \
        --write src/vera/judges/_offline/support_model.json --write-heldout build/fold0.json
    python training/verifier/choose_weights.py --benchmarks benchmarks/data \
        --write src/vera/judges/_offline/support_model.json   # then the default judge's cut-off

1. Held-out estimate: fit on the RAGTruth dev claims of fold 0 (split by source document, see
   `benchmarks/judge_accuracy.py: fold_of`). `min_support` (FULLY_SUPPORTED from it) and
   `partial_probability` (PARTIALLY_SUPPORTED from it, below `min_support`), the cut-offs under
   which `vera eval`'s rule (a response fails when the mean of its verdict weights is below
   0.5) reaches the best balanced accuracy, are chosen on fold 0 too, from out-of-fold
   predictions (fold 0 cut in two by document again). The held-out figures printed are those
   of the any-claim rule at `min_support`. Fold 1 is only scored: its figures are for
   documents the model and its cut-offs never saw. `--write-heldout` saves this model, so
   `evaluate.py --learned --model build/fold0.json --fold 1` measures it through the judge
   itself by `vera eval`'s rule.
2. The shipped model: the same fit on every dev claim; its cut-offs are chosen the same way,
   from out-of-fold predictions over all of dev (fit on one fold, predict the other).

Claims, lexical verdicts and features come from VERA's own code (`OfflineJudge(learned=False)`
and `vera.judges._offline`), so training sees exactly what inference computes. A claim
is unsupported when it overlaps a human-marked hallucinated span. Needs scikit-learn
(`pip install -e '.[train]'`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from data import read_rows
from judge_accuracy import auroc, fold_of, source_of, summarise
from sklearn.linear_model import LogisticRegression

from vera import ClaimVerdict, Verdict
from vera.judges._offline import (
    FEATURES,
    SampleFacts,
    Settings,
    claim_features,
    extract_claims,
    verify,
)

WHITEBOX = "the offline judge's own parts"

C = 1.0
THRESHOLDS = [t / 100 for t in range(50, 100)]
PARTIALS = [t / 100 for t in range(50, 100)]


Where = list[tuple[int, tuple[int, int]]]  # each claim's row and character span


def claim_table(
    rows: list[dict[str, object]],
) -> tuple[np.ndarray, np.ndarray, Where, list[ClaimVerdict]]:
    """Features, labels, (row, span) and lexical verdict of every claim of `rows`."""
    features: list[list[float]] = []
    labels: list[int] = []
    where: Where = []
    verdicts: list[ClaimVerdict] = []
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
            verdicts.append(verdict)
    return np.array(features), np.array(labels), where, verdicts


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
    rows: list[dict[str, object]], probs: np.ndarray, where: Where, threshold: float
) -> dict[str, object]:
    """What the judge's verdicts give on `rows`: a claim is unsupported below `threshold`, and a
    response is flagged when any of its claims is."""
    low: dict[int, float] = {}
    marked: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p, (r, span) in zip(probs.tolist(), where, strict=True):
        low[r] = min(low.get(r, 1.0), p)
        if p < threshold:
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


def subset(
    rows: list[dict[str, object]], where: Where, keep: np.ndarray
) -> tuple[list[dict[str, object]], Where]:
    """The rows holding the claims `keep` selects, and those claims' places among them."""
    chosen = sorted({r for (r, _), k in zip(where, keep, strict=True) if k})
    position = {r: i for i, r in enumerate(chosen)}
    kept = [(position[r], span) for (r, span), k in zip(where, keep, strict=True) if k]
    return [rows[r] for r in chosen], kept


def out_of_fold(x: np.ndarray, y: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """Each claim's P(supported) from a model fitted on the other half."""
    probs = np.zeros(len(y))
    for half in (0, 1):
        probs[halves == half] = support(
            fit(x[halves != half], y[halves != half]), x[halves == half]
        )
    return probs


def best_cuts(
    rows: list[dict[str, object]],
    probs: np.ndarray,
    where: Where,
    conflict: np.ndarray,
    worded: np.ndarray,
) -> tuple[float, float]:
    """`min_support` and `partial_probability` under which `vera eval`'s rule (a response
    fails when the mean of its claims' verdict weights, 1 / 0.5 / 0, is below 0.5) reaches
    the best balanced accuracy. Below `min_support` a lexical conflict is CONTRADICTED (0); a
    claim the words fully support (`worded`) is FULLY_SUPPORTED whatever its probability."""
    row_of = np.array([r for r, _ in where])
    claims = np.maximum(np.bincount(row_of, minlength=len(rows)), 1)
    has_claims = np.bincount(row_of, minlength=len(rows)) > 0
    labels = np.array([int(r["label"]) for r in rows])  # type: ignore[call-overload]

    def balanced_accuracy(cuts: tuple[float, float]) -> float:
        full, partial = cuts
        weight = np.where(probs >= full, 1.0, np.where(conflict | (probs < partial), 0.0, 0.5))
        weight = np.where(worded, 1.0, weight)
        mean = np.bincount(row_of, weight, minlength=len(rows)) / claims
        flagged = has_claims & (mean < 0.5)
        tpr = (flagged & (labels == 1)).sum() / max(1, (labels == 1).sum())
        tnr = (~flagged & (labels == 0)).sum() / max(1, (labels == 0).sum())
        return float(tpr + tnr) / 2

    pairs = [(f, q) for f in THRESHOLDS for q in PARTIALS if q <= f]
    return max(pairs, key=balanced_accuracy)


def inner_fold(row_id: str) -> int:
    """Fold 0 cut in two by source document, to choose its threshold out of fold."""
    return hashlib.md5(source_of(row_id).encode()).digest()[1] % 2


def card(
    params: dict[str, object], cuts: tuple[float, float], trained_on: str
) -> dict[str, object]:
    return {
        "features": list(FEATURES),
        **params,
        "thresholds": {"min_support": cuts[0], "partial_probability": cuts[1]},
        "trained_on": trained_on,
        "settings": {"model": "logistic regression, L2", "C": C},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--write", type=Path, help="the shipped model card")
    parser.add_argument("--write-heldout", type=Path, help="the fold-0 model card")
    args = parser.parse_args()
    rows = read_rows(args.benchmarks / "ragtruth_dev.jsonl")
    x, y, where, verdicts = claim_table(rows)
    conflict = np.array([v.verdict is Verdict.CONTRADICTED for v in verdicts])
    worded = np.array([v.verdict is Verdict.FULLY_SUPPORTED for v in verdicts])
    ids = [str(rows[r]["id"]) for r, _ in where]
    fold = np.array([fold_of(i) for i in ids])
    print(f"{len(y)} claims ({int(y.sum())} unsupported) in {len(rows)} responses")

    # 1. Fold 0 alone chooses the model and its threshold; fold 1 is only scored.
    train = fold == 0
    inner = np.array([inner_fold(i) for i in ids])[train]
    train_rows, train_where = subset(rows, where, train)
    oof = out_of_fold(x[train], y[train], inner)
    cuts = best_cuts(train_rows, oof, train_where, conflict[train], worded[train])
    heldout = fit(x[train], y[train])
    test_rows, test_where = subset(rows, where, ~train)
    probs = support(heldout, x[~train])
    held = figures(test_rows, probs, test_where, cuts[0])
    claim_auroc = auroc((1 - probs).tolist(), y[~train].tolist())
    print(f"held-out fold 1: claim-level AUROC {claim_auroc:.3f}")
    print(json.dumps(held, indent=2))
    if args.write_heldout:
        args.write_heldout.parent.mkdir(parents=True, exist_ok=True)
        fold0 = card(heldout, cuts, f"ragtruth_dev fold 0: {int(train.sum())} claims")
        args.write_heldout.write_text(json.dumps(fold0, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write_heldout}")

    # 2. The shipped model: every dev claim; its threshold from out-of-fold predictions.
    shipped_cuts = best_cuts(rows, out_of_fold(x, y, fold), where, conflict, worded)
    print(f"shipped min_support, partial_probability {shipped_cuts} (fold-0 choice {cuts})")
    if args.write:
        shipped = card(
            fit(x, y),
            shipped_cuts,
            f"ragtruth_dev: {len(y)} claims of {len(rows)} responses",
        )
        shipped["heldout_fold1"] = {"claim_auroc": claim_auroc, **held}
        args.write.write_text(json.dumps(shipped, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
