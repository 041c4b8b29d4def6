"""The judge work for one sample, done once and shared by every metric that reads it.

Which pieces are done depends on what the selected metrics need (`Need`): five claim metrics
cost the same judge calls as one. Independent pieces run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from vera.errors import ConfigError, JudgeResponseError
from vera.judges.base import Judge, judge_name, match_verdicts
from vera.metrics.base import CitationCheck, ClaimAnalysis, Need
from vera.metrics.citations import attach_citations, parse_citations, resolve_citation
from vera.types import Claim, ClaimVerdict, Relevance, RelevanceVerdict, Sample, Verdict

__all__ = ["analyse_claims", "analyse_sample"]


async def analyse_claims(
    sample: Sample, judge: Judge
) -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]:
    """Claims of the sample's response and one verdict each, against its contexts.

    A judge with an `analyse(response, contexts, query=...)` method does this its own way (an
    LLM judge in single-call mode does both in one call); any other judge extracts claims, then
    verifies all of them in one `verify_claims` call.
    """
    response = sample.response or ""
    analyse = getattr(judge, "analyse", None)
    if callable(analyse):
        claims, verdicts = await analyse(response, sample.context_texts, query=sample.query or None)
    else:
        claims = await judge.extract_claims(response, query=sample.query or None)
        verdicts = await judge.verify_claims(claims, sample.context_texts) if claims else []
    if not claims:
        return (), ()
    return tuple(claims), tuple(match_verdicts(claims, verdicts))


async def analyse_sample(sample: Sample, judge: Judge, needs: frozenset[Need]) -> ClaimAnalysis:
    """Do the pieces of judge work in `needs` for `sample`, each once."""
    response = sample.response or ""
    reference = (sample.reference or "").strip()
    wants_reference = bool(reference) and bool(
        needs & {Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS}
    )

    async def response_claims() -> tuple[tuple[Claim, ...], tuple[ClaimVerdict, ...]]:
        if Need.CLAIMS in needs:
            return await analyse_claims(sample, judge)
        if Need.REFERENCE_IN_RESPONSE in needs and reference:
            return tuple(await judge.extract_claims(response, query=sample.query or None)), ()
        return (), ()

    async def reference_claims() -> tuple[Claim, ...] | None:
        if not wants_reference:
            return None
        return tuple(await judge.extract_claims(reference, query=sample.query or None))

    (claims, verdicts), ref_claims, relevance = await asyncio.gather(
        response_claims(), reference_claims(), _relevance(sample, judge, needs)
    )
    ref_in_response = resp_in_reference = ref_in_contexts = None
    if ref_claims is not None:
        ref_in_response, resp_in_reference, ref_in_contexts = await asyncio.gather(
            _verify_if(Need.REFERENCE_IN_RESPONSE in needs, judge, ref_claims, [response]),
            _verify_if(Need.REFERENCE_IN_RESPONSE in needs, judge, claims, [reference]),
            _verify_if(
                Need.REFERENCE_IN_CONTEXTS in needs, judge, ref_claims, sample.context_texts
            ),
        )
    context_relevance, answer_relevance = relevance
    citations = (
        await _citation_checks(sample, judge, claims, verdicts) if Need.CITATIONS in needs else None
    )
    return ClaimAnalysis(
        claims=claims,
        verdicts=verdicts,
        reference_claims=ref_claims,
        reference_in_response=ref_in_response,
        response_in_reference=resp_in_reference,
        reference_in_contexts=ref_in_contexts,
        context_relevance=context_relevance,
        answer_relevance=answer_relevance,
        citations=citations,
    )


async def _verify_if(
    wanted: bool, judge: Judge, claims: Sequence[Claim], contexts: Sequence[str]
) -> tuple[ClaimVerdict, ...] | None:
    if not wanted:
        return None
    if not claims:
        return ()
    verdicts = await judge.verify_claims(claims, contexts)
    return tuple(match_verdicts(claims, verdicts))


async def _relevance(
    sample: Sample, judge: Judge, needs: frozenset[Need]
) -> tuple[tuple[RelevanceVerdict, ...] | None, RelevanceVerdict | None]:
    """Relevance of each context and of the response to the query, in one judge request."""
    if Need.RELEVANCE not in needs or not sample.query.strip():
        return None, None
    rate = getattr(judge, "rate_relevance", None)
    if not callable(rate):
        raise ConfigError(
            f"judge {judge_name(judge)} cannot rate relevance (it has no rate_relevance method)"
        )
    response = sample.response or ""
    texts = [*sample.context_texts, *([response] if response.strip() else [])]
    ratings: list[Any] = list(await rate(sample.query, texts)) if texts else []
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
