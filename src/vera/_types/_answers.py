"""The answer verdict as data: whether one answer (or conversation turn) is faithful, and the
run's count of them.

An answer is unfaithful when any of its claims is NO_EVIDENCE or CONTRADICTED, whatever the
mean of its claims' weights; a PARTIALLY_SUPPORTED claim counts by the judge's `PartialRule`.
`vera._results.answer_verdict` decides it; the runner stores it on each `SampleResult` and the
report counts it (`AnswerVerdicts`).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class PartialRule(StrEnum):
    """How a judge's PARTIALLY_SUPPORTED counts in the answer verdict. Each judge declares
    one (`partial_rule`), since the verdict means different things from different judges."""

    SUPPORTED = "supported"
    """PARTIAL is support the judge could not confirm word for word (the offline judge's
    paraphrases): the claim counts as supported."""
    UNSUPPORTED = "unsupported"
    """PARTIAL is a claim only partly stated in the sources (an LLM judge's): the rest of it
    has no source, so the claim counts as unsupported."""


class AnswerStatus(StrEnum):
    """The answer verdict."""

    FAITHFUL = "faithful"
    """Every claim supported (PARTIAL counted by the judge's rule)."""
    UNFAITHFUL = "unfaithful"
    """At least one claim NO_EVIDENCE, CONTRADICTED, or PARTIAL under the unsupported rule."""
    NO_CLAIMS = "no_claims"
    """The answer states nothing to verify; it passes, as faithfulness scores it 1.0."""
    ERROR = "error"
    """The sample failed before its claims were judged."""


class AnswerVerdict(BaseModel):
    """One answer's verdict, with the sentence that explains it ("1 of 2 claims has no
    evidence: 'There is a 24/7 hotline'") and the rule PARTIALLY_SUPPORTED counted by."""

    model_config = _FROZEN

    status: AnswerStatus
    reason: str
    partial_rule: PartialRule
    claims: int = 0
    unsupported: int = 0
    """Claims counted unsupported: NO_EVIDENCE, CONTRADICTED, and PARTIAL under the
    unsupported rule."""

    @property
    def passed(self) -> bool | None:
        """True for a faithful answer or one with no claims, False for an unfaithful one,
        None for an error (nothing was judged)."""
        if self.status is AnswerStatus.ERROR:
            return None
        return self.status is not AnswerStatus.UNFAITHFUL


class AnswerVerdicts(BaseModel):
    """The run's answer verdicts: how many answers are of each status, and the rule that
    PARTIALLY_SUPPORTED was counted by. Absent from a run that verified no claims."""

    model_config = _FROZEN

    partial_rule: PartialRule
    faithful: int = 0
    unfaithful: int = 0
    no_claims: int = 0
    errors: int = 0

    @property
    def judged(self) -> int:
        """Answers whose claims were judged (every status but error)."""
        return self.faithful + self.unfaithful + self.no_claims

    @property
    def unfaithful_share(self) -> float | None:
        """Unfaithful answers among those judged; None when none was."""
        return self.unfaithful / self.judged if self.judged else None

    def headline(self) -> str:
        """What a reader sees first: "4 of 50 answers have an unsupported or contradicted
        claim (PARTIALLY_SUPPORTED counts as unsupported)"."""
        verb = "has" if self.unfaithful == 1 else "have"
        answers = "answer" if self.judged == 1 else "answers"
        return (
            f"{self.unfaithful} of {self.judged} {answers} {verb} an unsupported or "
            f"contradicted claim (PARTIALLY_SUPPORTED counts as {self.partial_rule.value})"
        )
