"""The calibration block as short lines of text, the same in the terminal, Markdown and HTML."""

from __future__ import annotations

from vera._types._report import Calibration, ClaimAgreement, CorrectedEstimate


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _estimate(name: str, found: CorrectedEstimate | None) -> list[str]:
    if found is None:
        return []
    return [
        f"{name}: judge alone {_f(found.judge_only_estimate)} → corrected {_f(found.estimate)} "
        f"(95% CI {_f(found.ci_low)} to {_f(found.ci_high)}); labels alone "
        f"{_f(found.labels_only_estimate)} ({_f(found.labels_only_ci_low)} to "
        f"{_f(found.labels_only_ci_high)})"
    ]


def calibration_lines(calibration: Calibration) -> list[str]:
    """What the labelled samples say of the judge, a line each; the first is the title."""
    unscored = calibration.labelled_unscored
    title = (
        f"Calibration against {calibration.labelled} human labels "
        f"({calibration.metric}; {calibration.unlabelled} unlabelled samples)"
        + (f"; {unscored} labelled samples not scored" if unscored else "")
    )
    claims = _claims(calibration.claims)
    if not calibration.labelled:
        if claims and not unscored:
            return [f"Calibration against claim verdicts ({calibration.metric})", *claims]
        return [
            title,
            f"No labelled sample was scored on {calibration.metric}: run it with "
            f"--metrics {calibration.metric} (and fix the errors) to calibrate the judge.",
            *claims,
        ]
    a = calibration.agreement
    lines = [
        title,
        *(f"Warning: {warning}" for warning in calibration.warnings),
        f"Agreement (unfaithful = positive): accuracy {_f(a['accuracy'])} · balanced accuracy "
        f"{_f(a['balanced_accuracy'])} · Cohen's kappa {_f(a['kappa'])} · AUROC "
        f"{_f(calibration.auroc)} (ranked by {calibration.ranked_by}) · tp {a['tp']} "
        f"fp {a['fp']} fn {a['fn']} tn {a['tn']}",
        *_estimate("Unfaithful share", calibration.unfaithful_share),
        *_estimate("Mean faithfulness", calibration.mean_faithfulness),
    ]
    threshold = calibration.recommended_threshold
    if threshold is not None:
        lines.append(
            f"Recommended threshold: {threshold.threshold:.3f} (balanced accuracy "
            f"{_f(threshold.balanced_accuracy)}, precision {_f(threshold.precision)}, recall "
            f"{_f(threshold.recall)} on the labelled samples)"
        )
    return lines + claims


def _claims(found: ClaimAgreement | None) -> list[str]:
    if found is None:
        return []
    per = ", ".join(f"{verdict} {f.both}/{f.human}" for verdict, f in found.per_verdict.items())
    return [
        f"Claims a person labelled: {found.claims} compared ({found.unmatched} not "
        f"stated by the judge) · accuracy {_f(found.accuracy)} · Cohen's kappa "
        f"{_f(found.kappa)} · the judge agreed on {per or 'none'}"
    ]
