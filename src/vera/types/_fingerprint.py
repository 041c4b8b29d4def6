"""What a run measured, as data: its plan's fingerprint and the regression check it made.

A regression gate compares two runs' scores; that means something only when both runs
measured the same thing. `RunFingerprint` names what must match (the dataset's content, the
judge, the metrics, the pipeline, the thresholds), each as readable text so that a mismatch
can be said field by field, and `digest` is the one value the run history looks runs up by.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict

__all__ = ["FINGERPRINT_FIELDS", "RegressionCheck", "RunFingerprint"]

FINGERPRINT_FIELDS = ("dataset", "judge", "metrics", "pipeline", "thresholds")
"""The parts of a plan that must match for two runs' scores to be compared, in the order a
difference is reported."""


class RunFingerprint(BaseModel):
    """What a run measured. Build it with `RunFingerprint.of(...)`, which sets `digest`."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    """The test set: "sha256:…" of each sample's id, query, reference, category and
    answerability (not the answers under test), with the column mapping and any sample limit
    (`--quick`)."""
    judge: str
    """The judge's spec and the settings that change its verdicts."""
    metrics: str
    """Every metric with its options (its pass mark included), sorted."""
    pipeline: str
    """The system that answered ("responses from the dataset" when none did)."""
    thresholds: str
    """`--threshold` and the `[gates]` table."""
    digest: str
    """A short hash of the five fields above: equal digests, equal plans."""

    @classmethod
    def of(
        cls, *, dataset: str, judge: str, metrics: str, pipeline: str, thresholds: str
    ) -> RunFingerprint:
        parts = {
            "dataset": dataset,
            "judge": judge,
            "metrics": metrics,
            "pipeline": pipeline,
            "thresholds": thresholds,
        }
        text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        return cls(**parts, digest=digest)

    def differences(self, other: RunFingerprint | None) -> list[str]:
        """Field by field, how `other` (an earlier run's) differs from this one: lines such as
        "judge: offline (this run) vs openai:gpt-4o-mini (run …)"; empty when they match.
        None (a run stored before fingerprints) differs in every field, unknown."""
        if other is None:
            return [f"{name}: not recorded for that run" for name in FINGERPRINT_FIELDS]
        lines = []
        for name in FINGERPRINT_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                lines.append(f"{name}: {mine} (this run) vs {theirs}")
        return lines


class RegressionCheck(BaseModel):
    """The regression gate of a run (`--regression`, `--baseline-run`): which stored run it
    compared with, and, when that run measured something else (`--any-plan`), what differs."""

    model_config = ConfigDict(frozen=True)

    compared_with: str | None
    """The id of the stored run compared with; None when the history held no finished run
    with the same fingerprint (nothing was compared: this run is the next one's baseline)."""
    fingerprint: str
    """This run's fingerprint digest, the one the compared run had to match."""
    differences: tuple[str, ...] = ()
    """With `--any-plan`, each field in which the compared run's plan differs."""
    history: str | None = None
    """The run history searched (a path)."""

    def describe(self) -> str:
        """One line for a person: what the regression gate compared with, or that it did not."""
        if self.compared_with is None:
            return (
                f"Regression: no earlier finished run with this plan (fingerprint "
                f"{self.fingerprint}) in {self.history or 'the history'}; nothing was compared, "
                "this run is the baseline of the next"
            )
        plan = (
            "a different plan: " + "; ".join(self.differences)
            if self.differences
            else "the same plan"
        )
        return (
            f"Regression: compared with run {self.compared_with} "
            f"(fingerprint {self.fingerprint}, {plan})"
        )
