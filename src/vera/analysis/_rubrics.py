"""A sample's rubric work: each rubric metric's checklist, answered by the judge with evidence.

The checklist of a rubric whose items the user did not write is written by the judge once per
run (`vera.judges._rubric.ChecklistMemo`); every sample then costs one call per rubric, all its
items (in scope "claim", all its claim-item pairs) together. A judge that answers no rubric
(the offline judge) gets no call, and the rubric metric says it is not applicable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from vera.judges._rubric import RubricJudge
from vera.metrics._rubric import Rubric
from vera.types import Claim, Sample
from vera.types._rubric import RubricAnswers, RubricRequest

__all__ = ["answer_rubrics", "asked_rubrics"]


def asked_rubrics(sample: Sample, rubrics: Sequence[Rubric]) -> tuple[Rubric, ...]:
    """The rubrics the judge is asked on `sample`: those that apply to it and have what they
    read (the expected answer, for a rubric that compares with it)."""
    has_reference = bool((sample.reference or "").strip())
    return tuple(r for r in rubrics if r.applies(sample) and (has_reference or not r.reference))


async def answer_rubrics(
    sample: Sample, judge: object, rubrics: Sequence[Rubric], claims: Sequence[Claim]
) -> tuple[RubricAnswers, ...] | None:
    """Each rubric's verdicts on `sample`; None where `judge` answers no rubric."""
    if not isinstance(judge, RubricJudge):
        return None
    asked = asked_rubrics(sample, rubrics)
    return tuple(await asyncio.gather(*(_answer(sample, judge, r, claims) for r in asked)))


async def _answer(
    sample: Sample, judge: RubricJudge, rubric: Rubric, claims: Sequence[Claim]
) -> RubricAnswers:
    checklist = rubric.checklist() or await judge.write_checklist(
        rubric.name, rubric.criteria, rubric.scope
    )
    by_claim = rubric.scope == "claim"
    if by_claim and not claims:
        return RubricAnswers(checklist=checklist, verdicts=())
    request = RubricRequest(
        checklist=checklist,
        answer=sample.response or "",
        query=sample.query,
        contexts=tuple(sample.context_texts),
        claims=tuple((c.id, c.text) for c in claims) if by_claim else (),
        reference=(sample.reference or "").strip() or None if rubric.reference else None,
    )
    verdicts = await judge.answer_checklist(request)
    return RubricAnswers(checklist=checklist, verdicts=tuple(verdicts))
