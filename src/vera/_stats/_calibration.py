"""How far to trust the judge, from the samples a human labelled: agreement and corrected
estimates with valid intervals.

A sample may carry `human_faithful`. The labelled ones measure the judge against the labels
(accuracy, balanced accuracy, Cohen's κ, AUROC, a confusion matrix) and correct what the
judge says about the whole run by prediction-powered inference (PPI++: Angelopoulos, Duchi
and Zrnic, 2023, as ARES uses it). For a mean θ of a human quantity Y that the judge predicts
by f on every sample:

    θ̂ = λ · mean(f over the unlabelled) + mean(Y - λ·f over the labelled)
    Var(θ̂) = λ² · Var(f) / N + Var(Y - λ·f) / n
    λ = Cov(Y, f) / ((1 + n/N) · Var(f)), clipped to [0, 1]

with n labelled and N unlabelled samples. λ = 0 is the labels-only estimate, so the tuned λ
gives an interval no wider than that one in expectation; a judge that predicts the labels
well narrows it. The interval is θ̂ ± 1.96·√Var(θ̂), kept within [0, 1].

The labels-only interval is Wilson's score interval for a proportion, which stays honest at
small n: one faithful label gives 0.207 to 1.000, not the normal approximation's 1.000 to
1.000, and no interval is ever zero-width. Where λ is 0 (no unlabelled sample, a judge whose
prediction does not vary or does not follow the labels, labels of one class) the corrected
estimate is the labels-only one and takes its Wilson interval. Below `FEW_LABELS` labelled
samples, or with labels of one class, the block carries a warning (`Calibration.warnings`).

Two means are corrected: the share of unfaithful responses (Y: the human calls it
unfaithful; f: the judge's decision, the faithfulness metric failing its threshold) and the
mean faithfulness (Y: 1 when the human calls the response faithful, else 0; f: the judge's
faithfulness score), which is the share of responses a human would call faithful, estimated
on the scale the judge's score is read on.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vera._stats._agreement import Confusion, auroc, label_agreement
from vera._stats._stats import ValueCounts
from vera._types._report import (
    Calibration,
    ClaimAgreement,
    CorrectedEstimate,
    RecommendedThreshold,
    SampleResult,
    SampleStatus,
)

Z95 = 1.959963984540054
CALIBRATED_METRIC = "faithfulness"
FEW_LABELS = 30
"""Below this many labelled samples, the block warns that its figures are unsteady."""
RANKING_METRIC = "faithfulness_probability"
"""Ranks the labelled samples for AUROC where every one has it (a judge that gives claim
probabilities, with the metric selected); otherwise faithfulness does."""


@dataclass(frozen=True)
class LabelledSample:
    """What calibration needs of one scored, labelled sample."""

    score: float
    flagged: bool
    """The judge's decision: the faithfulness metric failed its threshold."""
    unfaithful: bool
    """The human's label."""
    probability: float | None = None
    """Its faithfulness_probability, where the run scored one: what AUROC ranks by."""


@dataclass
class CalibrationTally:
    """Gathered as samples finish (see `ReportBuilder`): every labelled sample, and of the
    unlabelled ones only the counts of their scores and decisions, so memory follows the
    number of labels, not of samples."""

    labelled: list[LabelledSample] = field(default_factory=list)
    labelled_unscored: int = 0
    unlabelled_scores: ValueCounts = field(default_factory=ValueCounts)
    unlabelled_flagged: ValueCounts = field(default_factory=ValueCounts)
    claim_verdicts: list[tuple[str, str]] = field(default_factory=list)
    """(the judge's verdict, the person's) for each labelled claim the judge also found."""
    claims_unmatched: int = 0

    def add(
        self,
        label: bool | None,
        score: float | None,
        passed: bool | None,
        probability: float | None = None,
    ) -> None:
        """One sample: its human label (None: unlabelled), its faithfulness score and whether
        it passed (None: not scored), and its faithfulness_probability where scored."""
        if score is None or passed is None:
            self.labelled_unscored += label is not None
            return
        if label is None:
            self.unlabelled_scores.add(score)
            self.unlabelled_flagged.add(float(not passed))
        else:
            self.labelled.append(LabelledSample(score, not passed, not label, probability))

    def add_result(self, result: SampleResult) -> None:
        """One sample's result: scored when its faithfulness metric gave a score. The judge's
        decision is the sample's: it fails on an unfaithful answer verdict
        (`SampleResult.verdict`) as on its faithfulness threshold."""
        faithfulness = result.results.get(CALIBRATED_METRIC)
        probability = result.results.get(RANKING_METRIC)
        if result.status is SampleStatus.SCORED and faithfulness is not None:
            unfaithful = result.verdict is not None and result.verdict.passed is False
            self.add(
                result.human_faithful,
                faithfulness.score,
                False if unfaithful else faithfulness.passed,
                None if probability is None else probability.score,
            )
        else:
            self.add(result.human_faithful, None, None)
        if result.human_claims:
            self._add_claims(result)

    def _add_claims(self, result: SampleResult) -> None:
        """Pair each labelled claim with the judge's verdict on the claim of the same text
        (case, spacing and end punctuation aside); a claim the judge did not state as such
        counts as unmatched, not as a disagreement."""
        judged = {_claim_key(c.text): c.verdict.value for c in result.claims}
        for claim in result.human_claims:
            verdict = judged.get(_claim_key(claim.text))
            if verdict is None:
                self.claims_unmatched += 1
            else:
                self.claim_verdicts.append((verdict, claim.verdict.value))

    @classmethod
    def of(cls, results: Iterable[SampleResult]) -> CalibrationTally:
        tally = cls()
        for result in results:
            tally.add_result(result)
        return tally

    def calibration(self) -> Calibration | None:
        """The report's block, or None when no sample carries a label."""
        claims = self.claim_verdicts or self.claims_unmatched
        if not (self.labelled or self.labelled_unscored or claims):
            return None
        labelled = self.labelled
        ranked_by, ranks = _ranking(labelled)
        truth = [float(s.unfaithful) for s in labelled]
        confusion = Confusion.of([s.flagged for s in labelled], [s.unfaithful for s in labelled])
        return Calibration(
            metric=CALIBRATED_METRIC,
            labelled=len(labelled),
            labelled_unscored=self.labelled_unscored,
            unlabelled=len(self.unlabelled_scores),
            agreement=confusion.figures(),
            auroc=auroc([1 - r for r in ranks], [s.unfaithful for s in labelled]),
            ranked_by=ranked_by,
            unfaithful_share=corrected_mean(
                truth, [float(s.flagged) for s in labelled], self.unlabelled_flagged
            ),
            mean_faithfulness=corrected_mean(
                [1 - y for y in truth], [s.score for s in labelled], self.unlabelled_scores
            ),
            recommended_threshold=recommended_threshold(labelled),
            claims=self._claim_agreement(),
            warnings=tuple(calibration_warnings(labelled)),
        )

    def _claim_agreement(self) -> ClaimAgreement | None:
        if not self.claim_verdicts and not self.claims_unmatched:
            return None
        judged = [judge for judge, _ in self.claim_verdicts]
        found = label_agreement(judged, [human for _, human in self.claim_verdicts])
        return ClaimAgreement.model_validate({**found, "unmatched": self.claims_unmatched})


def _ranking(labelled: Sequence[LabelledSample]) -> tuple[str, list[float]]:
    """The score AUROC ranks by, and each labelled sample's: faithfulness_probability where
    every one has it (one scale for all), else faithfulness."""
    probabilities = [s.probability for s in labelled]
    if labelled and all(p is not None for p in probabilities):
        return RANKING_METRIC, [p for p in probabilities if p is not None]
    return CALIBRATED_METRIC, [s.score for s in labelled]


def _claim_key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!?;: ")


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _covariance(xs: Sequence[float], ys: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    mx, my = _mean(xs), _mean(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (len(xs) - 1)


def _interval(estimate: float, variance: float) -> tuple[float, float]:
    half = Z95 * math.sqrt(max(variance, 0.0))
    return max(estimate - half, 0.0), min(estimate + half, 1.0)


def wilson_interval(successes: float, n: int) -> tuple[float, float]:
    """Wilson's 95 % score interval for a proportion of `successes` in `n` (n ≥ 1): never
    zero-width, and within [0, 1] without clipping."""
    if n < 1:
        raise ValueError("a proportion needs at least one observation")
    share = successes / n
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 / (1 + z2 / n) * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def corrected_mean(
    truth: Sequence[float], predicted: Sequence[float], unlabelled: ValueCounts
) -> CorrectedEstimate | None:
    """The PPI++ estimate of the mean of `truth` (labels of 0 or 1), from the labelled samples'
    `truth` and `predicted` and the unlabelled samples' predictions; None without a labelled
    sample."""
    n, big_n = len(truth), len(unlabelled)
    if not n:
        return None
    if any(y not in (0.0, 1.0) for y in truth):
        raise ValueError("calibration labels are 0 or 1")
    labels_only = _mean(truth)
    unlabelled_mean = unlabelled.mean() or 0.0
    judge_only = (math.fsum(predicted) + unlabelled_mean * big_n) / (n + big_n)
    # Var(f) from the unlabelled samples, which are most of them when PPI is worth its while.
    f_variance = unlabelled.variance() or 0.0
    weight = 0.0
    if big_n and f_variance > 0:
        weight = _covariance(truth, predicted) / ((1 + n / big_n) * f_variance)
        weight = min(max(weight, 0.0), 1.0)
    rectified = [y - weight * f for y, f in zip(truth, predicted, strict=True)]
    estimate = weight * unlabelled_mean + _mean(rectified)
    variance = _covariance(rectified, rectified) / n
    if big_n:
        variance += weight * weight * f_variance / big_n
    labels_low, labels_high = wilson_interval(math.fsum(truth), n)
    low, high = _interval(estimate, variance)
    if weight == 0.0 or high <= low:
        # λ = 0 is the labels-only estimate itself, so it takes the labels-only interval.
        low, high = labels_low, labels_high
    return CorrectedEstimate(
        judge_only_estimate=judge_only,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        labels_only_estimate=labels_only,
        labels_only_ci_low=labels_low,
        labels_only_ci_high=labels_high,
        power_tuning=weight,
    )


def calibration_warnings(labelled: Sequence[LabelledSample]) -> list[str]:
    """What makes the figures from these labels unsteady: too few of them, or one class."""
    n = len(labelled)
    if not n:
        return []
    found = []
    if n < FEW_LABELS:
        found.append(
            f"only {n} labelled sample{'' if n == 1 else 's'}: below {FEW_LABELS} the intervals "
            "are wide and the agreement figures unsteady; label more samples (human_faithful) "
            "before trusting them"
        )
    unfaithful = sum(s.unfaithful for s in labelled)
    if unfaithful in (0, n):
        kind, other = ("unfaithful", "faithful") if unfaithful else ("faithful", "unfaithful")
        found.append(
            f"every labelled sample is {kind}: with one class the judge's balanced accuracy, "
            f"kappa, AUROC and a recommended threshold cannot be measured; label some {other} "
            "samples too"
        )
    return found


def recommended_threshold(labelled: Sequence[LabelledSample]) -> RecommendedThreshold | None:
    """The pass threshold on the faithfulness score (pass: score ≥ threshold) with the best
    balanced accuracy against the labels; the midpoint between neighbouring scores, so it
    does not sit on a labelled sample's own score. None without both kinds of label."""
    labels = [s.unfaithful for s in labelled]
    if all(labels) or not any(labels):
        return None
    scores = sorted({s.score for s in labelled})
    candidates = [(low + high) / 2 for low, high in itertools.pairwise(scores)]
    candidates.append(scores[-1] + 1e-9)  # every labelled sample flagged
    best: tuple[float, float, Confusion] | None = None
    for threshold in candidates:
        confusion = Confusion.of([s.score < threshold for s in labelled], labels)
        if best is None or confusion.balanced_accuracy > best[1]:
            best = (threshold, confusion.balanced_accuracy, confusion)
    assert best is not None  # candidates is never empty
    threshold, _, confusion = best
    return RecommendedThreshold(threshold=threshold, **_decision_figures(confusion))


def _decision_figures(confusion: Confusion) -> dict[str, float]:
    return {
        "balanced_accuracy": confusion.balanced_accuracy,
        "precision": confusion.precision,
        "recall": confusion.recall,
        "f1": confusion.f1,
        "accuracy": confusion.accuracy,
    }
