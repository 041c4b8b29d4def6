"""How well a judge's decisions agree with human labels: the binary-classification figures.

One place for them, used by calibration (a run's labelled samples) and by `vera benchmark` (a
labelled file). The positive class is whatever the caller counts as 1; for faithfulness VERA
counts "unfaithful" as 1, as the benchmark literature (RAGTruth, Luna) does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Confusion:
    """Counts of a binary decision against labels, and the figures they give.

    Every figure of an empty class is 0.0 rather than NaN (recall with no positives, say), so a
    figure never poisons a report; `positives`/`negatives` say when that is the case.
    """

    tp: int
    fp: int
    fn: int
    tn: int

    @classmethod
    def of(cls, predicted: Sequence[int | bool], labels: Sequence[int | bool]) -> Confusion:
        pairs = list(zip((bool(p) for p in predicted), (bool(y) for y in labels), strict=True))
        return cls(
            tp=sum(p and y for p, y in pairs),
            fp=sum(p and not y for p, y in pairs),
            fn=sum(y and not p for p, y in pairs),
            tn=sum(not p and not y for p, y in pairs),
        )

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def positives(self) -> int:
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.tn + self.fp

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.tp, self.positives)

    @property
    def specificity(self) -> float:
        return _ratio(self.tn, self.negatives)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def accuracy(self) -> float:
        return _ratio(self.tp + self.tn, self.n)

    @property
    def balanced_accuracy(self) -> float:
        return (self.recall + self.specificity) / 2

    @property
    def kappa(self) -> float:
        """Cohen's κ: agreement beyond what the two sides' base rates give by chance."""
        n = self.n
        if not n:
            return 0.0
        chance = ((self.tp + self.fp) * self.positives + (self.fn + self.tn) * self.negatives) / (
            n * n
        )
        return 0.0 if chance == 1 else (self.accuracy - chance) / (1 - chance)

    def figures(self) -> dict[str, float | int]:
        """Plain data for reports: the counts and every figure."""
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "accuracy": self.accuracy,
            "balanced_accuracy": self.balanced_accuracy,
            "kappa": self.kappa,
        }


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def auroc(scores: Sequence[float], labels: Sequence[int | bool]) -> float | None:
    """Area under the ROC curve of `scores` ranking the positives (label 1) above the
    negatives: the Mann-Whitney statistic, ties counted half. None without both classes."""
    ranked = sorted(zip(scores, (bool(y) for y in labels), strict=True))
    positives = sum(y for _, y in ranked)
    negatives = len(ranked) - positives
    if not positives or not negatives:
        return None
    rank_sum = 0.0
    start = 0
    while start < len(ranked):
        end = start
        while end < len(ranked) and ranked[end][0] == ranked[start][0]:
            end += 1
        mid_rank = (start + end + 1) / 2  # tied values share the mean of ranks start+1..end
        rank_sum += mid_rank * sum(y for _, y in ranked[start:end])
        start = end
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def label_agreement(judged: Sequence[str], truth: Sequence[str]) -> dict[str, Any]:
    """Agreement of two labellings over several classes (verdicts, say): accuracy, Cohen's κ,
    and per class how often each side gave it, how often both did, precision and recall."""
    pairs = list(zip(judged, truth, strict=True))
    n = len(pairs)
    classes = sorted({*judged, *truth})
    agree = sum(a == b for a, b in pairs)
    by_judge = {c: sum(a == c for a, _ in pairs) for c in classes}
    by_truth = {c: sum(b == c for _, b in pairs) for c in classes}
    chance = sum(by_judge[c] * by_truth[c] for c in classes) / (n * n) if n else 0.0
    accuracy = agree / n if n else 0.0
    per_class = {}
    for c in classes:
        both = sum(a == b == c for a, b in pairs)
        per_class[c] = {
            "human": by_truth[c],
            "judge": by_judge[c],
            "both": both,
            "precision": _ratio(both, by_judge[c]),
            "recall": _ratio(both, by_truth[c]),
        }
    return {
        "claims": n,
        "accuracy": accuracy,
        "kappa": 0.0 if chance == 1 else (accuracy - chance) / (1 - chance),
        "per_verdict": per_class,
    }
