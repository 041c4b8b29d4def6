"""The binary-classification figures shared by calibration and `vera benchmark`."""

from __future__ import annotations

import random

import pytest

from vera._stats import Confusion, auroc

WHITEBOX = "the statistics formulas"


def test_confusion_figures_match_their_definitions() -> None:
    predicted = [1, 1, 1, 0, 0, 0, 0, 1]
    labels = [1, 1, 0, 0, 0, 1, 0, 1]
    confusion = Confusion.of(predicted, labels)
    assert (confusion.tp, confusion.fp, confusion.fn, confusion.tn) == (3, 1, 1, 3)
    assert confusion.precision == confusion.recall == confusion.f1 == 0.75
    assert confusion.balanced_accuracy == confusion.accuracy == 0.75
    # kappa: observed 0.75, chance (4*4 + 4*4)/64 = 0.5
    assert confusion.kappa == pytest.approx(0.5)


def test_empty_classes_give_zero_not_nan() -> None:
    always = Confusion.of([1, 1, 1], [1, 1, 1])
    assert always.specificity == 0.0 and always.negatives == 0
    assert always.kappa == 0.0
    assert Confusion.of([], []).figures()["accuracy"] == 0.0


def test_auroc_counts_ties_half_and_needs_both_classes() -> None:
    assert auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    assert auroc([0.5, 0.5], [0, 1]) == 0.5
    assert auroc([0.2, 0.3], [1, 1]) is None


def test_auroc_is_the_probability_a_positive_outranks_a_negative() -> None:
    rng = random.Random(0)
    scores = [rng.random() for _ in range(200)]
    labels = [int(rng.random() < s) for s in scores]
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    pairs = [(p, q) for p in positives for q in negatives]
    direct = sum((p > q) + 0.5 * (p == q) for p, q in pairs) / len(pairs)
    assert auroc(scores, labels) == pytest.approx(direct)
