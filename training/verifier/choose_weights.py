"""Choose how the default `offline` judge turns the support model's probability into verdicts
(`vera/judges/offline/lexical_support.py`), and print what each choice gives.

    python training/verifier/choose_weights.py --benchmarks benchmarks/data \
        --write src/vera/judges/_offline/support_model.json   # ~30 s

RAGTruth dev only, unfaithful the positive class, every figure cross-validated over source
documents (`benchmarks/judge_accuracy.py: fold_of`): the support model is fitted on one fold
and scores the other, both ways. Two choices, in order:

1. The weights by which a lexical verdict that names what is wrong scales the probability
   (a conflict, a quantity or a name no context states, no content word in common): those
   whose product of claim probabilities (`faithfulness_probability`) ranks responses best
   (AUROC), the worse fold counting.
2. `partial_cut`, the probability from which a claim the words leave short (not ruled out,
   not FULLY_SUPPORTED) is PARTIALLY_SUPPORTED rather than NO_EVIDENCE: the one under which
   the seeds' sample rule (a response fails when the mean of its verdict weights, 1 / 0.5 / 0,
   is below 0.5) stands furthest above balanced accuracy 0.72 overall and 0.62 on each task
   type, the worse fold counting. Letting the probability also make a claim FULLY_SUPPORTED
   scored no better (0.698 against 0.702 overall) and passes invented qualifiers.

`--write` stores `partial_cut` in the model card's "thresholds". Needs scikit-learn
(`pip install -e '.[train]'`).
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from data import read_rows
from judge_accuracy import auroc, fold_of
from train_features import claim_table, fit, support

import vera
from vera import ClaimVerdict, Verdict
from vera.judges._offline import (
    CLOSEST,
    LEXICAL_WEIGHTS,
    RULED_OUT,
    LexicalWeights,
    rules_out,
)

WHITEBOX = "the offline judge's own parts"

PLANTED = ("wrong_number", "negation", "invented_fact")
GRID = (0.3, 0.5, 0.7, 1.0)
UNSHARED_GRID = (0.3, 0.5)
PARTIAL_CUTS = tuple(round(0.50 + 0.01 * i, 2) for i in range(50))
TASKS = ("QA", "Summary", "Data2txt")
SEED_WEIGHTS = {Verdict.FULLY_SUPPORTED: 1.0, Verdict.PARTIALLY_SUPPORTED: 0.5}


def probabilities(
    probs: np.ndarray, verdicts: Sequence[ClaimVerdict], weights: LexicalWeights
) -> tuple[np.ndarray, np.ndarray]:
    """Each claim's weighed probability, and whether the words rule it out."""
    out = np.array([p * weights.of(v) for p, v in zip(probs, verdicts, strict=True)])
    ruled = np.array([rules_out(v) for v in verdicts])
    return np.where(ruled, np.minimum(out, RULED_OUT), out), ruled


def verdict_weights(
    p: np.ndarray, ruled: np.ndarray, lexical: tuple[np.ndarray, np.ndarray], partial_cut: float
) -> np.ndarray:
    """The seeds' weight of each claim's verdict (`lexical_support`): 0 when the words rule it
    out, else the lexical verdict's, lifted to 0.5 from `partial_cut` where it may be."""
    lexical, liftable = lexical
    weight = np.maximum(np.where(p >= partial_cut, 0.5, 0.0) * liftable, lexical)
    return np.where(ruled, 0.0, weight)


def lexical_weights(verdicts: Sequence[ClaimVerdict]) -> tuple[np.ndarray, np.ndarray]:
    """Each lexical verdict's seed weight, and whether a probability may lift it."""
    weights = np.array([SEED_WEIGHTS.get(v.verdict, 0.0) for v in verdicts])
    liftable = np.array([(v.reason or "").startswith(CLOSEST) for v in verdicts])
    return weights, liftable


def balanced_accuracy(flagged: np.ndarray, labels: np.ndarray) -> float:
    positive = labels == 1
    tpr = (flagged & positive).sum() / max(1, positive.sum())
    tnr = (~flagged & ~positive).sum() / max(1, (~positive).sum())
    return float(tpr + tnr) / 2


class Table:
    """Claims and responses of RAGTruth dev, with cross-validated probabilities."""

    def __init__(self, benchmarks: Path) -> None:
        self.rows = read_rows(benchmarks / "ragtruth_dev.jsonl")
        x, y, where, self.verdicts = claim_table(self.rows)
        self.row_of = np.array([r for r, _ in where])
        self.labels = np.array([int(r["label"]) for r in self.rows])  # type: ignore[call-overload]
        self.task = np.array([str(r["task_type"]) for r in self.rows])
        self.fold = np.array([fold_of(str(r["id"])) for r in self.rows])
        self.claims = np.bincount(self.row_of, minlength=len(self.rows))
        claim_fold = self.fold[self.row_of]
        self.crossed = np.zeros(len(y))
        for held in (0, 1):
            train = claim_fold != held
            self.crossed[~train] = support(fit(x[train], y[train]), x[~train])
        self.x, self.y, self.where = x, y, where

    def product(self, p: np.ndarray) -> np.ndarray:
        logs = np.bincount(self.row_of, np.log(np.maximum(p, 1e-12)), minlength=len(self.rows))
        return np.exp(logs)

    def flagged(self, weight: np.ndarray) -> np.ndarray:
        total = np.bincount(self.row_of, weight, minlength=len(self.rows))
        mean = np.where(self.claims > 0, total / np.maximum(self.claims, 1), 1.0)
        return mean < 0.5

    def groups(self, fold: int | None) -> dict[str, np.ndarray]:
        every = np.ones(len(self.rows), bool) if fold is None else self.fold == fold
        return {"all": every, **{t: every & (self.task == t) for t in TASKS}}


def choose_weights(table: Table) -> LexicalWeights:
    def worst_auroc(weights: LexicalWeights) -> float:
        score = 1 - table.product(probabilities(table.crossed, table.verdicts, weights)[0])
        return min(
            auroc(score[table.fold == f].tolist(), table.labels[table.fold == f].tolist())
            for f in (0, 1)
        )

    # A claim that shares no word with any context is never better than half what the model
    # says: what it says is about claims that at least share one.
    candidates = [
        LexicalWeights(*values, unshared=unshared)
        for values in itertools.product(GRID, repeat=3)
        for unshared in UNSHARED_GRID
    ]
    ranked = sorted(candidates, key=worst_auroc, reverse=True)
    for weights in [*ranked[:3], LEXICAL_WEIGHTS, LexicalWeights(1, 1, 1, 1)]:
        mark = " (shipped)" if weights == LEXICAL_WEIGHTS else ""
        print(f"  {weights}: worse fold AUROC {worst_auroc(weights):.3f}{mark}")
    return ranked[0]


def choose_cut(table: Table, p: np.ndarray, ruled: np.ndarray) -> float:
    def margin(cut: float) -> float:
        flagged = table.flagged(verdict_weights(p, ruled, lexical, cut))
        worst = 1.0
        for fold in (0, 1):
            for name, rows in table.groups(fold).items():
                floor = 0.72 if name == "all" else 0.62
                worst = min(worst, balanced_accuracy(flagged[rows], table.labels[rows]) - floor)
        return worst

    lexical = lexical_weights(table.verdicts)
    return max(PARTIAL_CUTS, key=margin)


def settled(p: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The probabilities the judge gives: at most `RULED_OUT` for an unsupported verdict."""
    return np.where(weight == 0, np.minimum(p, RULED_OUT), p)


def report(table: Table, p: np.ndarray, ruled: np.ndarray, cut: float) -> dict:
    weight = verdict_weights(p, ruled, lexical_weights(table.verdicts), cut)
    flagged = table.flagged(weight)
    score = 1 - table.product(settled(p, weight))
    figures: dict[str, dict[str, float]] = {}
    for fold in (None, 0, 1):
        for name, rows in table.groups(fold).items():
            key = name if fold is None else f"fold {fold} {name}"
            figures[key] = {
                "balanced_accuracy": round(balanced_accuracy(flagged[rows], table.labels[rows]), 3),
                "auroc": round(auroc(score[rows].tolist(), table.labels[rows].tolist()), 3),
            }
            print(
                f"  {key:18} BAcc {figures[key]['balanced_accuracy']:.3f}  "
                f"AUROC {figures[key]['auroc']:.3f}"
            )
    return figures


def planted_failing(weights: LexicalWeights, cut: float, table: Table) -> str:
    """How many of the bundled example's planted errors fail, by the shipped fit."""
    example = list(vera.load_dataset("example"))
    rows: list[dict[str, object]] = [
        {"response": s.response or "", "contexts": [c.text for c in s.contexts]} for s in example
    ]
    x, _, where, verdicts = claim_table(rows)
    p, ruled = probabilities(support(fit(table.x, table.y), x), verdicts, weights)
    weight = verdict_weights(p, ruled, lexical_weights(verdicts), cut)
    row_of = np.array([r for r, _ in where])
    mean = np.bincount(row_of, weight, minlength=len(rows)) / np.maximum(
        np.bincount(row_of, minlength=len(rows)), 1
    )
    planted = np.array([s.metadata.get("planted") in PLANTED for s in example])
    return f"{int((mean[planted] < 0.5).sum())}/{int(planted.sum())}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--write", type=Path, help="a model card to store the cut-offs in")
    args = parser.parse_args()
    table = Table(args.benchmarks)
    print("1. weights, by the worse fold's AUROC of the product of claim probabilities:")
    weights = choose_weights(table)
    p, ruled = probabilities(table.crossed, table.verdicts, weights)
    cut = choose_cut(table, p, ruled)
    print(f"2. a claim the words leave short is PARTIALLY_SUPPORTED from P {cut}:")
    figures = report(table, p, ruled, cut)
    print(f"   the example's planted errors failing: {planted_failing(weights, cut, table)}")
    if args.write:
        card = json.loads(args.write.read_text(encoding="utf-8"))
        card["thresholds"]["partial_cut"] = cut
        card["offline_judge_cross_validated"] = {"weights": repr(weights), **figures}
        args.write.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
