"""The judge work for one sample, planned once and shared by every metric that reads it.

`work_plan` lists the pieces of judge work the metrics' needs ask of a sample (five claim
metrics cost the same judge calls as one). The run executes that list (`analyse_sample`) and the
dry run prices the same list (`planned_work`, read by `vera._run._estimate`), so the two cannot
disagree on what a sample costs. Independent pieces run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vera._analysis._rubrics import (
    analyse_with_rubrics,
    answer_rubrics,
    asked_rubrics,
    riders,
    rides_rubrics,
    rubric_work,
)
from vera._text._citations import attach_citations, parse_citations, resolve_citation
from vera._types import Claim, ClaimVerdict, Relevance, RelevanceVerdict, Sample, Verdict
from vera._types._entailment import EntailmentMatrix
from vera._types._errors import JudgeResponseError
from vera._types._results import CitationCheck, ClaimAnalysis, Need
from vera._types._rubric import RubricAnswers
from vera.judges._base import Judge, JudgeWork, judge_matrix, match_verdicts, relevance_rater
from vera.judges._rubric import RidesRubrics
from vera.judges._turns import TurnAnalyser, turn_group
from vera.metrics._rubric import Rubric

Answer = Literal["response", "reference"]


class WorkPieces(BaseModel):
    """Which pieces of judge work a sample gets: the decision `work_plan` lists."""

    model_config = ConfigDict(frozen=True)

    analyse_response: bool = False
    """Claims of the response, each verified against the contexts."""
    extract_response: bool = False
    """Claims of the response only (to compare with the reference)."""
    extract_reference: bool = False
    reference_in_response: bool = False
    reference_in_contexts: bool = False
    relevance: bool = False
    citations: bool = False
    chunk_entailment: bool = False
    """Every claim of the response and of the reference against each context alone."""
    rubrics: bool = False
    """Each rubric metric's checklist answered (`vera._analysis._rubrics`)."""


class WorkItem(BaseModel):
    """One piece of judge work on one sample, named by what it reads, not by its texts (the
    claims it verifies are found by the items before it).

    - "analyse": claims of the response and their verdicts against the contexts;
    - "extract": claims of `of[0]` ("response" or "reference") only;
    - "verify": the claims of `of[0]` against `against` (the other answer, or the contexts);
    - "verify_matrix": the claims of the response and of the reference against each context;
    - "rate_relevance": each context and the response rated for the query;
    - "check_citations": each cited context checked for the claims citing it;
    - "answer_rubrics": each rubric's checklist answered (after the claims, which a rubric of
      scope "claim" reads).

    `stage` orders the items: an item reads only what items of earlier stages found, and the
    items of one stage run concurrently.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal[
        "analyse",
        "extract",
        "verify",
        "verify_matrix",
        "rate_relevance",
        "check_citations",
        "answer_rubrics",
    ]
    stage: int = 0
    of: tuple[Answer, ...] = ()
    against: Literal["response", "reference", "contexts"] | None = None


def work_pieces(
    sample: Sample, needs: frozenset[Need], rubrics: Sequence[Rubric] = ()
) -> WorkPieces:
    """The judge work the metrics' `needs` ask of `sample`; `rubrics`, the rubric metrics."""
    has_reference = bool((sample.reference or "").strip())
    wants_reference = has_reference and bool(
        needs & {Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS, Need.CHUNK_ENTAILMENT}
    )
    # The matrix's metrics also read the two answers checked against each other: the same
    # verdicts answer_correctness reads, done once when both are asked for.
    cross = bool(needs & {Need.REFERENCE_IN_RESPONSE, Need.CHUNK_ENTAILMENT})
    asked = asked_rubrics(sample, rubrics) if Need.RUBRIC in needs else ()
    by_claim = any(r.scope == "claim" for r in asked)
    return WorkPieces(
        analyse_response=Need.CLAIMS in needs or by_claim,
        extract_response=Need.CLAIMS not in needs and has_reference and cross,
        extract_reference=wants_reference,
        reference_in_response=wants_reference and cross,
        reference_in_contexts=wants_reference and Need.REFERENCE_IN_CONTEXTS in needs,
        relevance=Need.RELEVANCE in needs and bool(sample.query.strip()),
        citations=Need.CITATIONS in needs,
        chunk_entailment=wants_reference and Need.CHUNK_ENTAILMENT in needs,
        rubrics=bool(asked),
    )


def work_plan(
    sample: Sample, needs: frozenset[Need], rubrics: Sequence[Rubric] = ()
) -> tuple[WorkItem, ...]:
    """The judge work the metrics' `needs` (and rubric metrics) ask of `sample`, in the order
    the run does it: the list both the run (`execute_plan`) and the dry run
    (`planned_work`) read."""
    pieces = work_pieces(sample, needs, rubrics)
    wanted: list[tuple[bool, WorkItem]] = [
        (pieces.analyse_response, WorkItem(kind="analyse", of=("response",), against="contexts")),
        (pieces.extract_response, WorkItem(kind="extract", of=("response",))),
        (pieces.extract_reference, WorkItem(kind="extract", of=("reference",))),
        (pieces.relevance, WorkItem(kind="rate_relevance")),
        (
            pieces.reference_in_response,
            WorkItem(kind="verify", stage=1, of=("reference",), against="response"),
        ),
        (
            pieces.reference_in_response,
            WorkItem(kind="verify", stage=1, of=("response",), against="reference"),
        ),
        (
            pieces.reference_in_contexts,
            WorkItem(kind="verify", stage=1, of=("reference",), against="contexts"),
        ),
        (
            pieces.chunk_entailment,
            WorkItem(
                kind="verify_matrix", stage=1, of=("response", "reference"), against="contexts"
            ),
        ),
        (pieces.citations, WorkItem(kind="check_citations", stage=2, of=("response",))),
        (pieces.rubrics, WorkItem(kind="answer_rubrics", stage=1, of=("response",))),
    ]
    return tuple(item for want, item in wanted if want)


async def analyse_claims(
    sample: Sample, judge: Judge
) -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]:
    """Claims of the sample's response and one verdict each, against its contexts, through
    the judge's `analyse` (one call in an LLM judge's single-call mode, two otherwise); a
    conversation turn, by a judge that verifies turns together, with its group's turns."""
    response = sample.response or ""
    query = sample.query or None
    group = turn_group(sample.metadata)
    if group is not None and isinstance(judge, TurnAnalyser):
        claims, verdicts = await judge.analyse_turn(
            response, sample.context_texts, query=query, group=group
        )
    else:
        claims, verdicts = await judge.analyse(response, sample.context_texts, query=query)
    if not claims:
        return (), ()
    return tuple(claims), tuple(match_verdicts(claims, verdicts))


async def analyse_sample(
    sample: Sample, judge: Judge, needs: frozenset[Need], rubrics: Sequence[Rubric] = ()
) -> ClaimAnalysis:
    """Do the judge work `needs` (and the rubric metrics `rubrics`) ask of `sample`, each
    piece once: its work plan, executed."""
    return await execute_plan(sample, judge, work_plan(sample, needs, rubrics), rubrics)


class _Found:
    """What the items of a plan found so far, for the items after them and the analysis."""

    def __init__(self) -> None:
        self.claims: dict[Answer, tuple[Claim, ...]] = {}
        self.verdicts: tuple[ClaimVerdict, ...] = ()
        self.checked: dict[tuple[Answer, str | None], tuple[ClaimVerdict, ...]] = {}
        self.relevance: tuple[tuple[RelevanceVerdict, ...] | None, RelevanceVerdict | None] = (
            None,
            None,
        )
        self.matrix: tuple[Rows, Rows] | None = None
        self.citations: tuple[CitationCheck, ...] | None = None
        self.rubrics: tuple[RubricAnswers, ...] | None = None
        self.riding: tuple[Rubric, ...] | None = None
        """The rubrics asked with the analysis (`rides_rubrics`); None: after it."""


async def execute_plan(
    sample: Sample, judge: Judge, plan: Sequence[WorkItem], rubrics: Sequence[Rubric] = ()
) -> ClaimAnalysis:
    """Do the items of `plan` for `sample` with `judge`, stage by stage, each stage's items
    concurrently, and gather what they found."""
    found = _Found()
    riding = riders(asked_rubrics(sample, rubrics))
    if riding and rides_rubrics(judge, sample, [item.kind for item in plan]):
        # These rubrics are asked with the analysis, in its verification call where they
        # fit; the others after it, as without batching.
        found.riding = riding
    for stage in sorted({item.stage for item in plan}):
        items = [item for item in plan if item.stage == stage]
        await asyncio.gather(*(_execute(item, sample, judge, found, rubrics) for item in items))
    return _analysis(sample, judge, plan, found)


async def _execute(
    item: WorkItem, sample: Sample, judge: Judge, found: _Found, rubrics: Sequence[Rubric]
) -> None:
    response = sample.response or ""
    query = sample.query or None
    if item.kind == "answer_rubrics":
        claims = found.claims.get("response", ())
        rest = [r for r in rubrics if r not in (found.riding or ())]
        answered = await answer_rubrics(sample, judge, rest, claims)
        ridden = found.rubrics or ()
        found.rubrics = answered if found.riding is None else (*ridden, *(answered or ()))
    elif item.kind == "analyse" and found.riding is not None and isinstance(judge, RidesRubrics):
        claims, found.verdicts, found.rubrics = await analyse_with_rubrics(
            sample, judge, found.riding
        )
        found.claims["response"] = claims
    elif item.kind == "analyse":
        found.claims["response"], found.verdicts = await analyse_claims(sample, judge)
    elif item.kind == "extract":
        text = response if item.of[0] == "response" else (sample.reference or "").strip()
        found.claims[item.of[0]] = tuple(await judge.extract_claims(text, query=query))
    elif item.kind == "rate_relevance":
        found.relevance = await _relevance(sample, judge)
    elif item.kind == "verify":
        contexts = _texts_of(item, sample)
        claims = found.claims.get(item.of[0], ())
        found.checked[item.of[0], item.against] = await _verify(judge, claims, contexts)
    elif item.kind == "verify_matrix":
        claims, ref_claims = (found.claims.get(answer, ()) for answer in ("response", "reference"))
        found.matrix = await _matrix_rows(judge, claims, ref_claims, sample.context_texts)
    else:
        claims = found.claims.get("response", ())
        found.citations = await _citation_checks(sample, judge, claims, found.verdicts)


def _texts_of(item: WorkItem, sample: Sample) -> list[str]:
    """The texts `item` verifies its claims against."""
    if item.against == "response":
        return [sample.response or ""]
    if item.against == "reference":
        return [(sample.reference or "").strip()]
    return sample.context_texts


def _analysis(
    sample: Sample, judge: Judge, plan: Sequence[WorkItem], found: _Found
) -> ClaimAnalysis:
    ref_in_response = found.checked.get(("reference", "response"))
    resp_in_reference = found.checked.get(("response", "reference"))
    claims = found.claims.get("response", ())
    ref_claims = found.claims.get("reference")
    matrix = None
    if found.matrix is not None and ref_in_response is not None and resp_in_reference is not None:
        matrix = EntailmentMatrix(
            chunks=len(sample.contexts),
            response_claims=claims,
            reference_claims=ref_claims or (),
            response_in_chunks=found.matrix[0],
            reference_in_chunks=found.matrix[1],
            response_in_reference=resp_in_reference,
            reference_in_response=ref_in_response,
        )
    analysed = any(item.kind == "analyse" for item in plan)
    context_relevance, answer_relevance = found.relevance
    return ClaimAnalysis(
        # Claims only extracted (to compare with the reference) have no verdict against the
        # contexts; `claims[i]` must pair with `verdicts[i]`, so they stay out of this field.
        claims=claims if analysed else (),
        verdicts=found.verdicts,
        reference_claims=ref_claims,
        reference_in_response=ref_in_response,
        response_in_reference=resp_in_reference,
        reference_in_contexts=found.checked.get(("reference", "contexts")),
        context_relevance=context_relevance,
        answer_relevance=answer_relevance,
        citations=found.citations,
        chunk_entailment=matrix,
        rubrics=found.rubrics,
        judge=judge.spec,
    )


def planned_work(
    sample: Sample,
    needs: frozenset[Need],
    claims_of: Callable[[str], list[Claim]],
    rubrics: Sequence[Rubric] = (),
) -> list[JudgeWork]:
    """The judge work of `sample`'s work plan as a judge prices it, for a dry run: the same
    items the run executes, with `claims_of` (the offline splitter) standing in for the claims
    a judge finds. Citation checks are counted for every cited context, an upper bound."""
    plan = work_plan(sample, needs, rubrics)
    kinds = {item.kind for item in plan}
    response = sample.response or ""
    claims: dict[Answer, tuple[Claim, ...]] = {}
    for item in plan:
        if item.kind in ("analyse", "extract"):
            text = response if item.of[0] == "response" else (sample.reference or "").strip()
            claims[item.of[0]] = tuple(claims_of(text)) if text.strip() else ()
    work: list[JudgeWork] = []
    rubric = (
        rubric_work(sample, rubrics, claims.get("response", ()))
        if "answer_rubrics" in kinds
        else []
    )
    # The rubric work a verification shows all of rides on the analysis, which a judge that
    # rides rubrics asks in its verification call and any other judge asks after it.
    ride = {"analyse", "answer_rubrics"} <= kinds and turn_group(sample.metadata) is None
    names = {r.name for r in riders(rubrics)} if ride else set()
    riding = tuple(w for w in rubric if w.rubric is not None and w.rubric.checklist.name in names)
    rode = False
    for item in plan:
        if item.kind == "answer_rubrics":
            work.extend(w for w in rubric if not rode or w not in riding)
            continue
        priced = _priced(item, sample, claims)
        if item.kind == "analyse" and riding and priced:
            priced = [w.model_copy(update={"riders": riding}) for w in priced]
            rode = True
        work.extend(priced)
    return work


def _priced(
    item: WorkItem, sample: Sample, claims: dict[Answer, tuple[Claim, ...]]
) -> list[JudgeWork]:
    """What a judge is asked for `item`: nothing where the run asks nothing either."""
    response = sample.response or ""
    reference = (sample.reference or "").strip()
    contexts = tuple(sample.context_texts)
    texts = {answer: tuple(c.text for c in found) for answer, found in claims.items()}
    mine = texts.get(item.of[0], ()) if item.of else ()
    if item.kind in ("analyse", "extract"):
        text = response if item.of[0] == "response" else reference
        if not text.strip():
            return []
        shown = contexts if item.kind == "analyse" else ()
        group = turn_group(sample.metadata) if item.kind == "analyse" else None
        return [
            JudgeWork(
                kind=item.kind,
                text=text,
                query=sample.query,
                contexts=shown,
                claims=mine,
                group=group.key if group else "",
                group_size=group.size if group else 0,
            )
        ]
    if item.kind == "verify":
        against = tuple(_texts_of(item, sample))
        return [JudgeWork(kind="verify", claims=mine, contexts=against)] if mine else []
    if item.kind == "verify_matrix":
        both = texts.get("response", ()) + texts.get("reference", ())
        wanted = both and contexts
        return [JudgeWork(kind="verify_matrix", claims=both, contexts=contexts)] if wanted else []
    if item.kind == "rate_relevance":
        shown = (*contexts, *((response,) if response.strip() else ()))
        return [JudgeWork(kind="rate_relevance", query=sample.query, texts=shown)]
    return _citation_work(sample, claims.get("response", ()))


def _citation_work(sample: Sample, claims: Sequence[Claim]) -> list[JudgeWork]:
    response = sample.response or ""
    marks = parse_citations(response)
    if not marks or not claims:
        return []
    attached = attach_citations(response, claims, marks)
    cited: dict[int, list[str]] = {}
    for claim in claims:
        for mark in attached[claim.id]:
            index = resolve_citation(mark.label, sample.contexts)
            if index is not None and claim.text not in cited.setdefault(index, []):
                cited[index].append(claim.text)
    return [
        JudgeWork(kind="verify", claims=tuple(texts), contexts=(sample.contexts[index].text,))
        for index, texts in cited.items()
    ]


async def _verify(
    judge: Judge, claims: Sequence[Claim], contexts: Sequence[str]
) -> tuple[ClaimVerdict, ...]:
    if not claims:
        return ()
    verdicts = await judge.verify_claims(claims, contexts)
    return tuple(match_verdicts(claims, verdicts))


Rows = tuple[tuple[ClaimVerdict, ...], ...]


async def _matrix_rows(
    judge: Judge,
    claims: Sequence[Claim],
    ref_claims: Sequence[Claim],
    contexts: Sequence[str],
) -> tuple[Rows, Rows]:
    """The response's and the reference's rows of the claim-by-chunk matrix, from one
    `verify_matrix` request for both, so an LLM judge answers the whole matrix in one call."""
    if not contexts:
        return tuple(() for _ in claims), tuple(() for _ in ref_claims)
    # The two answers number their claims alike ("c1", ...); the request needs them distinct.
    asked = [*claims, *(c.model_copy(update={"id": f"reference:{c.id}"}) for c in ref_claims)]
    rows = await judge_matrix(judge, asked, contexts)
    back = [
        tuple(v.model_copy(update={"claim_id": own.id}) for v in row)
        for own, row in zip([*claims, *ref_claims], rows, strict=True)
    ]
    return tuple(back[: len(claims)]), tuple(back[len(claims) :])


async def _relevance(
    sample: Sample, judge: Judge
) -> tuple[tuple[RelevanceVerdict, ...], RelevanceVerdict]:
    """Relevance of each context and of the response to the query, in one judge request."""
    response = sample.response or ""
    texts = [*sample.context_texts, *([response] if response.strip() else [])]
    rater = relevance_rater(judge)
    ratings: list[Any] = list(await rater.rate_relevance(sample.query, texts)) if texts else []
    if len(ratings) != len(texts) or not all(isinstance(r, RelevanceVerdict) for r in ratings):
        raise JudgeResponseError(
            f"rate_relevance must return one RelevanceVerdict per text ({len(texts)}), "
            f"got {len(ratings)}"
        )
    contexts = tuple(ratings[: len(sample.contexts)])
    answer = (
        ratings[len(sample.contexts)]
        if response.strip()
        else RelevanceVerdict(relevance=Relevance.IRRELEVANT, reason="the response is empty")
    )
    return contexts, answer


async def _citation_checks(
    sample: Sample,
    judge: Judge,
    claims: Sequence[Claim],
    verdicts: Sequence[ClaimVerdict],
) -> tuple[CitationCheck, ...]:
    """What each cited context says about the claim citing it.

    The claim's own verdict already answers for the context it names, and a claim with no
    evidence anywhere has none in the cited context either; only the remaining pairs cost a
    judge call, one per cited context with all the claims that cite it.
    """
    response = sample.response or ""
    marks = parse_citations(response)
    if not marks or not claims:
        return ()
    attached = attach_citations(response, claims, marks)
    own = dict(zip((c.id for c in claims), verdicts, strict=True))
    pairs: list[tuple[Claim, str, int | None]] = []
    to_verify: dict[int, list[Claim]] = {}
    for claim in claims:
        labels = dict.fromkeys(mark.label for mark in attached[claim.id])
        for label in labels:
            index = resolve_citation(label, sample.contexts)
            pairs.append((claim, label, index))
            settled = (
                own[claim.id].context_index == index or own[claim.id].verdict is Verdict.NO_EVIDENCE
            )
            if index is not None and not settled:
                to_verify.setdefault(index, []).append(claim)
    found: dict[tuple[str, int], ClaimVerdict] = {}

    async def check(index: int, cited: list[Claim]) -> None:
        unique = list({c.id: c for c in cited}.values())
        answers = await _verify(judge, unique, [sample.contexts[index].text])
        for claim, answer in zip(unique, answers, strict=True):
            found[claim.id, index] = answer.model_copy(update={"context_index": index})

    await asyncio.gather(*(check(index, cited) for index, cited in to_verify.items()))
    checks = []
    for claim, label, index in pairs:
        cited = None if index is None else found.get((claim.id, index), own[claim.id])
        checks.append(
            CitationCheck(claim_id=claim.id, label=label, context_index=index, verdict=cited)
        )
    return tuple(checks)
