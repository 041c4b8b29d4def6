"""A sample's overall outcome as the reports show it: one badge that reflects every gated
metric, and never a plain "pass" for a sample with a contradicted claim.

Each metric gates a sample on its own threshold (`MetricResult.passed`). A sample passes when
every metric that gave a pass or fail passed; it fails when any failed, and the badge names
them. A sample that passes although one of its claims is contradicted (with a judge scored by
the mean of verdict weights, a 0.75 faithfulness clears the default 0.5 threshold with one of
four claims contradicted) is shown as a pass with a warning, and `why` says which thresholds
it cleared.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vera.results._builder import SampleResult, SampleStatus
from vera.types import Verdict

__all__ = ["Outcome", "SampleOutcome", "sample_outcome"]


class Outcome(StrEnum):
    PASS = "pass"
    PASS_WITH_CONTRADICTION = "pass_with_contradiction"
    FAIL = "fail"
    NOT_GATED = "not_gated"
    """Scored, but no metric gave a pass or fail (every one n/a)."""
    NOT_SCORED = "not_scored"
    """An error, a sample that needs a pipeline, or one skipped."""


LABELS = {
    Outcome.PASS: "pass",
    Outcome.PASS_WITH_CONTRADICTION: "pass, with a contradicted claim",
    Outcome.FAIL: "fail",
    Outcome.NOT_GATED: "no gated metric",
    Outcome.NOT_SCORED: "not scored",
}


@dataclass(frozen=True)
class SampleOutcome:
    outcome: Outcome
    label: str
    """The badge's text: "pass", "fail: faithfulness, answer_relevancy", ..."""
    failed: tuple[str, ...]
    """The metrics that failed, in the report's order."""
    contradicted: int
    why: str
    """One sentence: what decided the badge."""


def _cleared(result: SampleResult) -> str:
    return "; ".join(
        f"{name} {r.score:.3f} clears its threshold {r.threshold:g}"
        for name, r in result.results.items()
        if r.passed is True and r.score is not None
    )


def sample_outcome(result: SampleResult) -> SampleOutcome:
    """The sample's badge, from every metric's pass or fail and its claims' verdicts."""
    contradicted = sum(1 for c in result.claims if c.verdict is Verdict.CONTRADICTED)
    failed = tuple(name for name, r in result.results.items() if r.passed is False)
    gated = [r for r in result.results.values() if r.passed is not None]
    if result.status is not SampleStatus.SCORED:
        why = f"not scored: {result.status.value.replace('_', ' ')}"
        return SampleOutcome(Outcome.NOT_SCORED, LABELS[Outcome.NOT_SCORED], (), contradicted, why)
    if failed:
        label = "fail: " + ", ".join(failed)
        why = f"{len(failed)} of {len(gated)} gated metrics miss their threshold"
        return SampleOutcome(Outcome.FAIL, label, failed, contradicted, why)
    if not gated:
        why = "no metric gave this sample a pass or fail"
        return SampleOutcome(Outcome.NOT_GATED, LABELS[Outcome.NOT_GATED], (), contradicted, why)
    if contradicted:
        claims = "claim is" if contradicted == 1 else "claims are"
        why = f"passes although {contradicted} {claims} contradicted: {_cleared(result)}"
        outcome = Outcome.PASS_WITH_CONTRADICTION
        return SampleOutcome(outcome, LABELS[outcome], (), contradicted, why)
    why = f"every one of {len(gated)} gated metrics clears its threshold"
    return SampleOutcome(Outcome.PASS, LABELS[Outcome.PASS], (), contradicted, why)
