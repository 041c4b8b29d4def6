"""Choose the weights by which the lexical `offline` judge's verdicts scale the support model's
probability (`vera/judges/offline/lexical_support.py`), and print what each candidate gives.

    python training/verifier/choose_weights.py --benchmarks ../shared/benchmarks   # ~10 s

RAGTruth dev only. For each candidate the sample score is faithfulness's product rule
(the product of the claims' weighed probabilities) and a response is flagged when it is below
0.5, the metric's default threshold; unfaithful is the positive class. Each candidate is scored
by cross-validation over source documents (`benchmarks/judge_accuracy.py: fold_of`): the
support model is fitted on one fold and scores the other, both ways. Among the candidates that
fail at least `--min-planted` of the bundled example's planted wrong numbers, negations and
invented facts (scored with the model fitted on all of dev, as shipped), the one whose worse
fold stands furthest above the floor the issue sets (AUROC 0.77, balanced accuracy 0.70, what
content-word overlap reaches) wins. Needs scikit-learn (`pip install -e '.[train]'`).
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from data import read_rows
from judge_accuracy import auroc, fold_of
from train_features import Where, claim_table, fit, support

import vera
from vera.judges.offline.lexical_support import LEXICAL_WEIGHTS, LexicalWeights
from vera.types import ClaimVerdict

PLANTED = ("wrong_number", "negation", "invented_fact")
GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)


def scores(
    probs: np.ndarray,
    verdicts: Sequence[ClaimVerdict],
    where: Where,
    weights: LexicalWeights,
    rows: int,
) -> np.ndarray:
    """Each response's faithfulness: the product of its claims' weighed probabilities."""
    out = np.ones(rows)
    for p, verdict, (r, _) in zip(probs, verdicts, where, strict=True):
        out[r] *= p * weights.of(verdict)
    return out


def figures(score: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """AUROC and balanced accuracy of flagging a response whose score is below 0.5."""
    flagged, positive = score < 0.5, labels == 1
    tpr = (flagged & positive).sum() / positive.sum()
    tnr = (~flagged & ~positive).sum() / (~positive).sum()
    return auroc((1 - score).tolist(), labels.tolist()), float(tpr + tnr) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--min-planted", type=int, default=7)
    args = parser.parse_args()
    rows = read_rows(args.benchmarks / "ragtruth_dev.jsonl")
    x, y, where, verdicts = claim_table(rows)
    labels = np.array([int(r["label"]) for r in rows])  # type: ignore[call-overload]
    row_fold = np.array([fold_of(str(r["id"])) for r in rows])
    claim_fold = row_fold[[r for r, _ in where]]
    # Each claim's probability from the model fitted on the other fold.
    crossed = np.zeros(len(y))
    for held in (0, 1):
        train = claim_fold != held
        crossed[~train] = support(fit(x[train], y[train]), x[~train])
    example = list(vera.load_dataset("example"))
    ex_rows: list[dict[str, object]] = [
        {"response": s.response or "", "contexts": [c.text for c in s.contexts]} for s in example
    ]
    ex_x, _, ex_where, ex_verdicts = claim_table(ex_rows)
    ex_probs = support(fit(x, y), ex_x)  # the shipped fit: every dev claim
    planted = np.array([s.metadata.get("planted") in PLANTED for s in example])

    def judge(weights: LexicalWeights) -> tuple[list[tuple[float, float]], int]:
        score = scores(crossed, verdicts, where, weights, len(rows))
        folds = [figures(score[row_fold == f], labels[row_fold == f]) for f in (0, 1)]
        ex_score = scores(ex_probs, ex_verdicts, ex_where, weights, len(example))
        return folds, int((ex_score[planted] < 0.5).sum())

    results = []
    for c, q, n in itertools.product(GRID, GRID, GRID):
        weights = LexicalWeights(contradicted=c, unstated_quantity=q, unnamed_name=n)
        folds, failed = judge(weights)
        results.append((weights, folds, failed))
    print(f"of {len(results)} candidates, by their least margin over the floor:")
    kept = [r for r in results if r[2] >= args.min_planted]
    kept.sort(key=lambda r: -margin(r[1]))
    unweighted = LexicalWeights(1, 1, 1)
    for weights, folds, failed in [*kept[:10], (unweighted, *judge(unweighted))]:
        mark = " (shipped)" if weights == LEXICAL_WEIGHTS else ""
        print(
            f"  conflict {weights.contradicted}, quantity {weights.unstated_quantity}, name "
            f"{weights.unnamed_name}: fold 0 AUROC {folds[0][0]:.3f} BAcc {folds[0][1]:.3f}, "
            f"fold 1 AUROC {folds[1][0]:.3f} BAcc {folds[1][1]:.3f}; example planted failing "
            f"{failed}/{int(planted.sum())}{mark}"
        )


def margin(folds: Sequence[tuple[float, float]]) -> float:
    """How far the worse fold stands above AUROC 0.77 and balanced accuracy 0.70."""
    return min(min(a - 0.77, b - 0.70) for a, b in folds)


if __name__ == "__main__":
    main()
