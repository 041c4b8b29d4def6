"""What a run measured, as data: its plan's fingerprint and the regression check it made.

A regression gate compares two runs' scores; that means something only when both runs
measured the same thing. `RunFingerprint` names what must match (the dataset's content, the
judge, the metrics, the pipeline, the thresholds), each as readable text so that a mismatch
can be said field by field, and `digest` is the one value the run history looks runs up by.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

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

    def plan(self) -> MeasuredPlan:
        """The fingerprint's parts, as `describe_differences` compares them."""
        return MeasuredPlan(
            judge=self.judge,
            metrics=metric_rules(self.metrics),
            dataset=self.dataset,
            pipeline=self.pipeline,
            thresholds=self.thresholds,
        )

    def differences(self, other: RunFingerprint | None) -> list[str]:
        """How `other` (the run compared with) measured something else than this one, a line
        per difference (`describe_differences`); empty when they match. None (a run stored
        before fingerprints) is one line saying that nothing could be checked."""
        if other is None:
            fields = f"{', '.join(FINGERPRINT_FIELDS[:-1])} and {FINGERPRINT_FIELDS[-1]}"
            return [
                "the compared run has no fingerprint (it was stored before fingerprints), so "
                f"whether it measured the same {fields} is unknown"
            ]
        return describe_differences(self.plan(), other.plan(), ("this run", "the compared run"))


_METRIC = re.compile(r"(?P<name>.+)\((?P<rule>[≥≤])(?P<mark>[^()]*)\)")


def metric_rules(text: str) -> dict[str, str] | str:
    """A fingerprint's metrics ("faithfulness(≥0.5), ...", as `vera._run` writes them) as
    name → pass rule ("≥ 0.5"); the text itself where it does not read so."""
    rules: dict[str, str] = {}
    for part in text.split(", ") if text else []:
        found = _METRIC.fullmatch(part)
        if found is None:
            return text
        rules[found["name"]] = f"{found['rule']} {found['mark']}"
    return rules


@dataclass(frozen=True)
class MeasuredPlan:
    """What a run measured, in parts two runs can be compared by: from its fingerprint
    (`RunFingerprint.plan`), or, for a run stored before fingerprints, from its report (then
    `dataset`, `pipeline` and `thresholds` are None: not known). `metrics` maps each metric to
    its pass rule ("≥ 0.5"), or is the fingerprint's text where that does not read so."""

    judge: str
    metrics: Mapping[str, str] | str
    dataset: str | None = None
    pipeline: str | None = None
    thresholds: str | None = None


def describe_differences(
    a: MeasuredPlan, b: MeasuredPlan, labels: tuple[str, str] = ("A", "B")
) -> list[str]:
    """What differs between two runs' plans, a line each, in `FINGERPRINT_FIELDS` order: the
    one description `vera compare`, `vera view` and the regression gate (`--any-plan`) give.
    A part one side does not know is not compared. Empty when nothing differs."""
    la, lb = labels
    found = []
    for what, mine, theirs in (
        ("test sets", a.dataset, b.dataset),
        ("judges", a.judge, b.judge),
    ):
        if mine is not None and theirs is not None and mine != theirs:
            found.append(f"The {what} differ: {la} {mine}; {lb} {theirs}")
    found += _metric_differences(a.metrics, b.metrics, labels)
    for what, mine, theirs in (
        ("systems answering", a.pipeline, b.pipeline),
        ("gates", a.thresholds, b.thresholds),
    ):
        if mine is not None and theirs is not None and mine != theirs:
            found.append(f"The {what} differ: {la} {mine}; {lb} {theirs}")
    return found


def _metric_differences(
    a: Mapping[str, str] | str, b: Mapping[str, str] | str, labels: tuple[str, str]
) -> list[str]:
    """The metrics only one run measured, and the shared ones whose pass rule differs."""
    la, lb = labels
    if isinstance(a, str) or isinstance(b, str):
        return [] if a == b else [f"The metrics differ: {la} {a}; {lb} {b}"]
    parts = []
    for label, mine, other in ((la, a, b), (lb, b, a)):
        only = [name for name in mine if name not in other]
        if only:
            parts.append(f"only {label} measured {', '.join(only)}")
    found = [f"The metrics differ: {'; '.join(parts)}"] if parts else []
    rules = [
        f"{name} {la} {a[name]}, {lb} {rule}"
        for name, rule in b.items()
        if name in a and a[name] != rule
    ]
    if rules:
        found.append(
            f"The metric thresholds differ: {'; '.join(rules)} (a sample's pass or fail may "
            "differ by the threshold alone)"
        )
    return found


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
