"""The judge work for one sample, done once and shared by every metric that reads it.

Which pieces are done depends on what the selected metrics need (`Need`): five claim metrics
cost the same judge calls as one. Independent pieces run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from vera.errors import JudgeResponseError
from vera.judges.base import Judge, JudgeWork, judge_matrix, match_verdicts
from vera.metrics.base import CitationCheck, ClaimAnalysis, Need
from vera.text.citations import attach_citations, parse_citations, resolve_citation
from vera.types import Claim, ClaimVerdict, Relevance, RelevanceVerdict, Sample, Verdict
from vera.types.entailment import EntailmentMatrix

__all__ = ["WorkPieces", "analyse_claims", "analyse_sample", "planned_work", "work_pieces"]


class WorkPieces(BaseModel):
    """Which pieces of judge work a sample gets, decided once for the run and the dry run."""

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


def work_pieces(sample: Sample, needs: frozenset[Need]) -> WorkPieces:
    """The judge work the metrics' `needs` ask of `sample`."""
    has_reference = bool((sample.reference or "").strip())
    wants_reference = has_reference and bool(
        needs & {Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS, Need.CHUNK_ENTAILMENT}
    )
    # The matrix's metrics also read the two answers checked against each other: the same
    # verdicts answer_correctness reads, done once when both are asked for.
    cross = bool(needs & {Need.REFERENCE_IN_RESPONSE, Need.CHUNK_ENTAILMENT})
    return WorkPieces(
        analyse_response=Need.CLAIMS in needs,
        extract_response=Need.CLAIMS not in needs and has_reference and cross,
        extract_reference=wants_reference,
        reference_in_response=wants_reference and cross,
        reference_in_contexts=wants_reference and Need.REFERENCE_IN_CONTEXTS in needs,
        relevance=Need.RELEVANCE in needs and bool(sample.query.strip()),
        citations=Need.CITATIONS in needs,
        chunk_entailment=wants_reference and Need.CHUNK_ENTAILMENT in needs,
    )


async def analyse_claims(
    sample: Sample, judge: Judge
) -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]:
    """Claims of the sample's response and one verdict each, against its contexts, through
    the judge's `analyse` (one call in an LLM judge's single-call mode, two otherwise)."""
    response = sample.response or ""
    claims, verdicts = await judge.analyse(
        response, sample.context_texts, query=sample.query or None
    )
    if not claims:
        return (), ()
    return tuple(claims), tuple(match_verdicts(claims, verdicts))


async def analyse_sample(sample: Sample, judge: Judge, needs: frozenset[Need]) -> ClaimAnalysis:
    """Do the pieces of judge work in `needs` for `sample`, each once."""
    pieces = work_pieces(sample, needs)
    response = sample.response or ""
    reference = (sample.reference or "").strip()
    query = sample.query or None

    async def response_claims() -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]:
        if pieces.analyse_response:
            return await analyse_claims(sample, judge)
        if pieces.extract_response:
            return tuple(await judge.extract_claims(response, query=query)), ()
        return (), ()

    async def reference_claims() -> tuple[Claim, ...] | None:
        if not pieces.extract_reference:
            return None
        return tuple(await judge.extract_claims(reference, query=query))

    (claims, verdicts), ref_claims, relevance = await asyncio.gather(
        response_claims(), reference_claims(), _relevance(sample, judge, pieces.relevance)
    )
    ref_in_response = resp_in_reference = ref_in_contexts = matrix = None
    if ref_claims is not None:
        ref_in_response, resp_in_reference, ref_in_contexts, rows = await asyncio.gather(
            _verify_if(pieces.reference_in_response, judge, ref_claims, [response]),
            _verify_if(pieces.reference_in_response, judge, claims, [reference]),
            _verify_if(pieces.reference_in_contexts, judge, ref_claims, sample.context_texts),
            _matrix_rows(pieces.chunk_entailment, judge, claims, ref_claims, sample.context_texts),
        )
        if rows is not None and ref_in_response is not None and resp_in_reference is not None:
            matrix = EntailmentMatrix(
                chunks=len(sample.contexts),
                response_claims=claims,
                reference_claims=ref_claims,
                response_in_chunks=rows[0],
                reference_in_chunks=rows[1],
                response_in_reference=resp_in_reference,
                reference_in_response=ref_in_response,
            )
    context_relevance, answer_relevance = relevance
    citations = (
        await _citation_checks(sample, judge, claims, verdicts) if pieces.citations else None
    )
    return ClaimAnalysis(
        # Claims only extracted (to compare with the reference) have no verdict against the
        # contexts; `claims[i]` must pair with `verdicts[i]`, so they stay out of this field.
        claims=claims if pieces.analyse_response else (),
        verdicts=verdicts,
        reference_claims=ref_claims,
        reference_in_response=ref_in_response,
        response_in_reference=resp_in_reference,
        reference_in_contexts=ref_in_contexts,
        context_relevance=context_relevance,
        answer_relevance=answer_relevance,
        citations=citations,
        chunk_entailment=matrix,
        judge=judge.spec,
    )


def planned_work(
    sample: Sample, needs: frozenset[Need], claims_of: Callable[[str], list[Claim]]
) -> list[JudgeWork]:
    """The judge work `analyse_sample` would ask for `sample`, for a dry run: the same
    pieces, with `claims_of` (the offline splitter) standing in for the claims a judge finds.
    Citation checks are counted for every cited context, an upper bound."""
    pieces = work_pieces(sample, needs)
    response = sample.response or ""
    reference = (sample.reference or "").strip()
    contexts = tuple(sample.context_texts)
    claims = claims_of(response) if response.strip() else []
    texts = tuple(c.text for c in claims)
    ref_texts = tuple(c.text for c in claims_of(reference)) if pieces.extract_reference else ()
    work: list[JudgeWork] = []
    if pieces.analyse_response and response.strip():
        work.append(
            JudgeWork(
                kind="analyse", text=response, query=sample.query, contexts=contexts, claims=texts
            )
        )
    if pieces.extract_response and response.strip():
        work.append(JudgeWork(kind="extract", text=response, query=sample.query, claims=texts))
    if pieces.extract_reference:
        work.append(JudgeWork(kind="extract", text=reference, query=sample.query, claims=ref_texts))
    if pieces.reference_in_response:
        work.append(JudgeWork(kind="verify", claims=ref_texts, contexts=(response,)))
        work.append(JudgeWork(kind="verify", claims=texts, contexts=(reference,)))
    if pieces.reference_in_contexts:
        work.append(JudgeWork(kind="verify", claims=ref_texts, contexts=contexts))
    if pieces.chunk_entailment and contexts and (texts or ref_texts):
        work.append(JudgeWork(kind="verify_matrix", claims=texts + ref_texts, contexts=contexts))
    if pieces.relevance:
        shown = (*contexts, *((response,) if response.strip() else ()))
        work.append(JudgeWork(kind="rate_relevance", query=sample.query, texts=shown))
    if pieces.citations:
        work.extend(_citation_work(sample, claims))
    return [w for w in work if w.kind != "verify" or w.claims]


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


async def _verify_if(
    wanted: bool, judge: Judge, claims: Sequence[Claim], contexts: Sequence[str]
) -> tuple[ClaimVerdict, ...] | None:
    if not wanted:
        return None
    if not claims:
        return ()
    verdicts = await judge.verify_claims(claims, contexts)
    return tuple(match_verdicts(claims, verdicts))


Rows = tuple[tuple[ClaimVerdict, ...], ...]


async def _matrix_rows(
    wanted: bool,
    judge: Judge,
    claims: Sequence[Claim],
    ref_claims: Sequence[Claim],
    contexts: Sequence[str],
) -> tuple[Rows, Rows] | None:
    """The response's and the reference's rows of the claim-by-chunk matrix, from one
    `verify_matrix` request for both, so an LLM judge answers the whole matrix in one call."""
    if not wanted:
        return None
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
    sample: Sample, judge: Judge, wanted: bool
) -> tuple[tuple[RelevanceVerdict, ...] | None, RelevanceVerdict | None]:
    """Relevance of each context and of the response to the query, in one judge request."""
    if not wanted:
        return None, None
    response = sample.response or ""
    texts = [*sample.context_texts, *([response] if response.strip() else [])]
    ratings: list[Any] = list(await judge.rate_relevance(sample.query, texts)) if texts else []
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
        answers = await _verify_if(True, judge, unique, [sample.contexts[index].text]) or ()
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
