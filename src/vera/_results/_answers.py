"""The answer verdict: the one rule that says whether an answer, or a conversation turn, is
faithful, and the run's count of answer verdicts.

    unfaithful  any claim NO_EVIDENCE or CONTRADICTED, or PARTIALLY_SUPPORTED where the
                judge's `PartialRule` counts it unsupported, whatever the mean
    faithful    every claim supported
    no_claims   nothing to verify (passes, as faithfulness scores it 1.0)
    error       the sample failed before its claims were judged

The mean of verdict weights (`faithfulness`) stays the score beside it: one invented claim
beside one supported one scores 0.5, and the answer is unfaithful. The runner decides each
sample's verdict once, with its judge's rule (`SampleResult.verdict`), and every reader
(badges, failing lists, gates, conversation and monitor figures) reads that.
"""

from __future__ import annotations

from collections.abc import Sequence

from vera._text._quote import quote_claim
from vera._types import SampleResult, SampleStatus, Verdict
from vera._types._answers import AnswerStatus, AnswerVerdict, AnswerVerdicts, PartialRule

# Worst first, so a reason names contradictions before missing evidence.
_WORDING: tuple[tuple[Verdict, str, str], ...] = (
    (Verdict.CONTRADICTED, "is contradicted", "are contradicted"),
    (Verdict.NO_EVIDENCE, "has no evidence", "have no evidence"),
    (Verdict.PARTIALLY_SUPPORTED, "is only partly supported", "are only partly supported"),
)
_QUOTED = 3
"""The most claims of one kind a reason quotes; the rest are counted."""


def claims_verdict(
    verdicts: Sequence[Verdict], texts: Sequence[str], rule: PartialRule
) -> AnswerVerdict:
    """The verdict on an answer whose claims got `verdicts` (`texts[i]` the text of claim
    i), PARTIALLY_SUPPORTED counting by `rule`."""
    total = len(verdicts)
    if not total:
        return AnswerVerdict(
            status=AnswerStatus.NO_CLAIMS, reason="no claims to verify", partial_rule=rule
        )
    counted = {Verdict.NO_EVIDENCE, Verdict.CONTRADICTED}
    if rule is PartialRule.UNSUPPORTED:
        counted.add(Verdict.PARTIALLY_SUPPORTED)
    parts = [
        _part(
            kind, one, many, total, [t for v, t in zip(verdicts, texts, strict=True) if v is kind]
        )
        for kind, one, many in _WORDING
        if kind in counted and kind in verdicts
    ]
    unsupported = sum(v in counted for v in verdicts)
    if unsupported:
        status, reason = AnswerStatus.UNFAITHFUL, "; ".join(parts)
    else:
        status, reason = AnswerStatus.FAITHFUL, _supported(verdicts, total, rule)
    return AnswerVerdict(
        status=status, reason=reason, partial_rule=rule, claims=total, unsupported=unsupported
    )


def answer_verdict(result: SampleResult, rule: PartialRule) -> AnswerVerdict | None:
    """The verdict on a sample's answer from its claim records: an ERROR sample's is error
    (its reason the error); one not evaluated (skipped, needing a pipeline) has none."""
    if result.status is SampleStatus.ERROR:
        return AnswerVerdict(
            status=AnswerStatus.ERROR, reason=result.error or "error", partial_rule=rule
        )
    if result.status is not SampleStatus.SCORED:
        return None
    return claims_verdict([c.verdict for c in result.claims], [c.text for c in result.claims], rule)


def _part(kind: Verdict, one: str, many: str, total: int, texts: list[str]) -> str:
    quoted = ", ".join(quote_claim(t) for t in texts[:_QUOTED])
    if len(texts) > _QUOTED:
        quoted += f" and {len(texts) - _QUOTED} more"
    claims = "claim" if total == 1 else "claims"
    return f"{len(texts)} of {total} {claims} {one if len(texts) == 1 else many}: {quoted}"


def _supported(verdicts: Sequence[Verdict], total: int, rule: PartialRule) -> str:
    claims = "claim" if total == 1 else "claims"
    reason = f"{total} of {total} {claims} supported"
    partial = sum(v is Verdict.PARTIALLY_SUPPORTED for v in verdicts)
    if partial:
        reason += f" ({partial} partially, counted as {rule.value} by the judge's rule)"
    return reason


class AnswerTally:
    """The run's answer verdicts, counted as results arrive (`Report.answers`)."""

    def __init__(self) -> None:
        self._rule: PartialRule | None = None
        self._counts = dict.fromkeys(AnswerStatus, 0)

    def add(self, result: SampleResult) -> None:
        """Count one result's verdict, if it has one."""
        if result.verdict is None:
            return
        self._rule = self._rule or result.verdict.partial_rule
        self._counts[result.verdict.status] += 1

    def summary(self) -> AnswerVerdicts | None:
        """The block, or None when no result had a verdict (no claims were verified)."""
        if self._rule is None:
            return None
        counts = self._counts
        return AnswerVerdicts(
            partial_rule=self._rule,
            faithful=counts[AnswerStatus.FAITHFUL],
            unfaithful=counts[AnswerStatus.UNFAITHFUL],
            no_claims=counts[AnswerStatus.NO_CLAIMS],
            errors=counts[AnswerStatus.ERROR],
        )


def unfaithful_budget(limit: str, judged: int) -> int:
    """How many of `judged` answers may be unfaithful under `limit`: a count ("5") or a
    share ("5%", rounded down), as `--max-errors` reads its own."""
    text = limit.strip()
    if text.endswith("%"):
        return int(float(text[:-1]) / 100 * judged)
    return int(float(text))


def unfaithful_failures(answers: AnswerVerdicts | None, limit: str | None) -> list[str]:
    """The answer-verdict gate (`--max-unfaithful`): more unfaithful answers than `limit`
    allows fails it, naming how many. No gate where `limit` is None or no claim was
    verified."""
    if limit is None or answers is None:
        return []
    allowed = unfaithful_budget(limit, answers.judged)
    if answers.unfaithful <= allowed:
        return []
    return [
        f"unfaithful answers: {answers.headline()}; --max-unfaithful {limit.strip()} allows "
        f"{allowed}"
    ]
