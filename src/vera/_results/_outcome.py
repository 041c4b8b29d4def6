"""A sample's overall outcome as the reports show it: one badge that reflects the answer
verdict and every gated metric, and never a plain "pass" for a sample with an unsupported or
contradicted claim.

The answer verdict decides first (`SampleResult.verdict`, `vera._results.answer_verdict`): an
unfaithful answer fails, whatever its metrics' means. Each metric also gates a sample on its
own threshold (`MetricResult.passed`); a sample fails when any failed, and the badge names
them. A result without an answer verdict (a run stored before it existed) that passes although
a claim is NO_EVIDENCE or CONTRADICTED is shown as a pass with a warning, and `why` says which
thresholds it cleared.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vera._types import AnswerStatus
from vera._types._report import SampleResult, SampleStatus


class Outcome(StrEnum):
    PASS = "pass"
    PASS_WITH_UNSUPPORTED = "pass_with_unsupported"
    """Every gated metric passes, the result has no answer verdict, and a claim is
    NO_EVIDENCE or CONTRADICTED."""
    FAIL = "fail"
    NOT_GATED = "not_gated"
    """Scored, but no metric gave a pass or fail (every one n/a)."""
    NOT_SCORED = "not_scored"
    """An error, a sample that needs a pipeline, or one skipped."""


LABELS = {
    Outcome.PASS: "pass",
    Outcome.PASS_WITH_UNSUPPORTED: "pass, with an unsupported claim",
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
    unsupported: int
    """Claims NO_EVIDENCE or CONTRADICTED."""
    why: str
    """One sentence: what decided the badge."""


def _cleared(result: SampleResult) -> str:
    return "; ".join(
        f"{name} {r.score:.3f} clears its threshold {r.threshold:g}"
        for name, r in result.results.items()
        if r.passed is True and r.score is not None
    )


UNFAITHFUL = "unfaithful answer"
"""How a badge names a failing answer verdict, before the failed metrics."""


def sample_outcome(result: SampleResult) -> SampleOutcome:
    """The sample's badge, from its answer verdict, every metric's pass or fail and its
    claims' verdicts."""
    unsupported = sum(1 for c in result.claims if c.verdict.unsupported)
    failed = tuple(name for name, r in result.results.items() if r.passed is False)
    gated = [r for r in result.results.values() if r.passed is not None]
    verdict = result.verdict
    if result.status is not SampleStatus.SCORED:
        why = f"not scored: {result.status.value.replace('_', ' ')}"
        return SampleOutcome(Outcome.NOT_SCORED, LABELS[Outcome.NOT_SCORED], (), unsupported, why)
    unfaithful = verdict is not None and verdict.status is AnswerStatus.UNFAITHFUL
    if failed or unfaithful:
        label = "fail: " + ", ".join(((UNFAITHFUL,) if unfaithful else ()) + failed)
        whys = [f"{UNFAITHFUL}: {verdict.reason}"] if unfaithful and verdict else []
        if failed:
            whys.append(f"{len(failed)} of {len(gated)} gated metrics miss their threshold")
        return SampleOutcome(Outcome.FAIL, label, failed, unsupported, "; ".join(whys))
    if not gated and verdict is None:
        why = "no metric gave this sample a pass or fail"
        return SampleOutcome(Outcome.NOT_GATED, LABELS[Outcome.NOT_GATED], (), unsupported, why)
    if unsupported and verdict is None:
        claims = "claim is" if unsupported == 1 else "claims are"
        cleared = _cleared(result)
        why = f"passes although {unsupported} {claims} unsupported or contradicted: {cleared}"
        outcome = Outcome.PASS_WITH_UNSUPPORTED
        return SampleOutcome(outcome, LABELS[outcome], (), unsupported, why)
    whys = [f"faithful answer: {verdict.reason}"] if verdict is not None else []
    if gated:
        whys.append(f"every one of {len(gated)} gated metrics clears its threshold")
    return SampleOutcome(Outcome.PASS, LABELS[Outcome.PASS], (), unsupported, "; ".join(whys))
