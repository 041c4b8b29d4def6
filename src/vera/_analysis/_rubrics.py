"""A sample's rubric work: each rubric metric's checklist, answered by the judge with evidence.

The checklist of a rubric whose items the user did not write is written by the judge once per
run (`vera.judges._rubric.ChecklistMemo`); every sample then costs one call per rubric, all its
items (in scope "claim", all its claim-item pairs) together. A judge that rides rubrics (the
LLM judge in batched mode, `vera.judges._rubric_batch`) asks the items of those that do not
compare with the expected answer in the call that verifies the sample's claims instead: no
call of their own. A judge that answers no rubric (the offline judge) gets no call, and the
rubric metric says it is not applicable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from vera._types import Claim, ClaimVerdict, Sample
from vera._types._errors import ConfigError
from vera._types._rubric import Checklist, RubricAnswers, RubricRequest
from vera.judges._base import Judge, JudgeWork, match_verdicts
from vera.judges._rubric import RidesRubrics, RubricJudge
from vera.judges._turns import turn_group
from vera.metrics._rubric import Rubric


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


def riders(rubrics: Sequence[Rubric]) -> tuple[Rubric, ...]:
    """The rubrics whose items may ride on a verification call: those that read only what
    it shows with the question and the answer (no expected answer); the judge asks any that
    do not fit it (no contexts, too many claims) alone."""
    return tuple(r for r in rubrics if not r.reference)


def rides_rubrics(judge: object, sample: Sample, plan_kinds: Collection[str]) -> bool:
    """Whether the analysis of `sample` asks its rubrics too: a plan that analyses the
    response and answers rubrics, a judge that rides rubrics on its verification call
    (`vera.judges._rubric_batch`), and no conversation turn (judged with its group)."""
    return (
        {"analyse", "answer_rubrics"} <= set(plan_kinds)
        and isinstance(judge, RidesRubrics)
        and judge.rides_rubrics
        and turn_group(sample.metadata) is None
    )


async def analyse_with_rubrics(
    sample: Sample, judge: RidesRubrics, rubrics: Sequence[Rubric]
) -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...], tuple[RubricAnswers, ...]]:
    """The response's claims and verdicts, and each rubric's verdicts, from one analysis
    that asks the rubric items in the verification call where they fit: the checklists
    first (written once per run), then the judge's `analyse_with_rubrics`."""
    asked = asked_rubrics(sample, rubrics)
    checklists = await asyncio.gather(*(rubric_checklist(r, judge) for r in asked))
    requests = [_request(sample, r, c, ()) for r, c in zip(asked, checklists, strict=True)]
    claims, verdicts, answers = await judge.analyse_with_rubrics(
        sample.response or "", sample.context_texts, query=sample.query or None, rubrics=requests
    )
    found = tuple(
        RubricAnswers(checklist=checklist, verdicts=tuple(given))
        for checklist, given in zip(checklists, answers, strict=True)
    )
    if not claims:
        return (), (), found
    return tuple(claims), tuple(match_verdicts(claims, verdicts)), found


def rubric_work(
    sample: Sample, rubrics: Sequence[Rubric], claims: Sequence[Claim]
) -> list[JudgeWork]:
    """The rubric work of `sample` as a judge prices it, for a dry run: one request per rubric
    asked, with the checklist to be written from the criteria where the user wrote none."""
    work = []
    for rubric in asked_rubrics(sample, rubrics):
        by_claim = rubric.scope == "claim"
        if by_claim and not claims:
            continue
        checklist = rubric.checklist() or Checklist(
            name=rubric.name, scope=rubric.scope, items=(), fingerprint=""
        )
        request = _request(sample, rubric, checklist, claims)
        work.append(JudgeWork(kind="rubric", rubric=request, criteria=rubric.criteria))
    return work


def _request(
    sample: Sample, rubric: Rubric, checklist: Checklist, claims: Sequence[Claim]
) -> RubricRequest:
    return RubricRequest(
        checklist=checklist,
        answer=sample.response or "",
        query=sample.query,
        contexts=tuple(sample.context_texts),
        claims=tuple((c.id, c.text) for c in claims) if rubric.scope == "claim" else (),
        reference=(sample.reference or "").strip() or None if rubric.reference else None,
    )


async def rubric_checklist(rubric: Rubric, judge: object) -> Checklist:
    """The checklist `rubric` is judged by: the items the user wrote, else those `judge`
    writes from the criteria (once per judge; the response cache keeps it across runs).
    `ConfigError` where the judge writes no checklist."""
    written = rubric.checklist()
    if written is not None:
        return written
    if not isinstance(judge, RubricJudge):
        spec = judge.spec if isinstance(judge, Judge) else type(judge).__name__
        raise ConfigError(
            f"judge {spec} cannot write the checklist of rubric {rubric.name!r}: choose an LLM "
            "judge (--judge openai:gpt-4o-mini, or judge = ... in vera.toml), or write the "
            "items yourself ([[rubric.items]])"
        )
    return await judge.write_checklist(rubric.name, rubric.criteria, rubric.scope)


async def _answer(
    sample: Sample, judge: RubricJudge, rubric: Rubric, claims: Sequence[Claim]
) -> RubricAnswers:
    checklist = await rubric_checklist(rubric, judge)
    by_claim = rubric.scope == "claim"
    if by_claim and not claims:
        return RubricAnswers(checklist=checklist, verdicts=())
    verdicts = await judge.answer_checklist(_request(sample, rubric, checklist, claims))
    return RubricAnswers(checklist=checklist, verdicts=tuple(verdicts))
