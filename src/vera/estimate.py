"""`vera eval --dry-run`: what a run would cost, before any judge call is made.

Calls follow the LLM judge's mode (batched: two per sample). Prompt tokens are counted from the
real prompt templates plus the sample's text; completion tokens from the number of claims the
offline segmenter finds (an LLM finds a similar number). Tokens are estimated at four
characters each. Cache hits are not subtracted, so the figure is an upper bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pydantic import BaseModel, ConfigDict

from vera.judges.offline.claims import extract_claims
from vera.judges.prompts import load_prompt
from vera.metrics.base import Need
from vera.providers.base import Usage
from vera.providers.cost import PriceTable
from vera.providers.managed import CHARS_PER_TOKEN
from vera.types import Sample

__all__ = ["CHARS_PER_TOKEN", "RunEstimate", "estimate_run"]

# Tokens a model writes per claim: its text in the extraction, a verdict with quote and reason.
_EXTRACTION_TOKENS_PER_CLAIM = 12
_VERDICT_TOKENS_PER_CLAIM = 45
_RATING_TOKENS = 25


class RunEstimate(BaseModel):
    """Calls, tokens and dollars a run would take."""

    model_config = ConfigDict(frozen=True)

    judge: str
    samples: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    """None when the price of the judge's model is unknown."""


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


@cache
def _fixed(name: str) -> int:
    """Tokens of a prompt's fixed text; read once per prompt, not once per sample."""
    prompt = load_prompt(name)
    return _tokens(prompt.system + prompt.user)


def _other_work(
    sample: Sample, needs: frozenset[Need], claims: int, verify: int, *, verify_only: bool = False
) -> tuple[int, int, int]:
    """Calls, prompt and completion tokens of the judge work beyond the claim analysis."""
    response = sample.response or ""
    reference = (sample.reference or "").strip()
    contexts = sum(_tokens(text) + 2 for text in sample.context_texts)
    calls = prompt = completion = 0
    if Need.RELEVANCE in needs and sample.query.strip():
        texts = len(sample.contexts) + 1
        calls += 1
        prompt += _fixed("rate_relevance") + _tokens(sample.query) + contexts + _tokens(response)
        completion += texts * _RATING_TOKENS
    wants_reference = needs & {Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS}
    if not reference or not wants_reference:
        return calls, prompt, completion
    ref_claims = len(extract_claims(reference))
    if not verify_only:
        calls += 1
        prompt += _fixed("extract_claims") + _tokens(sample.query) + _tokens(reference)
        completion += _tokens(reference) + ref_claims * _EXTRACTION_TOKENS_PER_CLAIM
    if Need.REFERENCE_IN_RESPONSE in needs:
        if Need.CLAIMS not in needs and not verify_only:
            calls += 1
            prompt += _fixed("extract_claims") + _tokens(sample.query) + _tokens(response)
            completion += _tokens(response) + claims * _EXTRACTION_TOKENS_PER_CLAIM
        calls += 2
        prompt += 2 * (verify + _tokens(response) + _tokens(reference))
        completion += (claims + ref_claims) * _VERDICT_TOKENS_PER_CLAIM
    if Need.REFERENCE_IN_CONTEXTS in needs:
        calls += 1
        prompt += verify + contexts + _tokens(reference)
        completion += ref_claims * _VERDICT_TOKENS_PER_CLAIM
    return calls, prompt, completion


def estimate_run(
    samples: Iterable[Sample],
    judge: str,
    prices: PriceTable | None = None,
    *,
    mode: str = "batched",
    draws: int = 1,
    needs: frozenset[Need] = frozenset({Need.CLAIMS}),
    verify_only: bool = False,
) -> RunEstimate:
    """Estimate the cost of judging `samples` with `judge` ("offline" and "nli:…" cost
    nothing).

    `mode` and `draws` are the LLM judge's mode and `samples` setting; `needs` is the judge
    work the selected metrics need (the union of their `needs`). `verify_only` is for a
    cascade, whose claims come from the offline judge: only verification reaches the model,
    counted as if every claim were sent.
    """
    rows = [s for s in samples if s.response is not None]
    if ":" not in judge or judge.partition(":")[0].strip().lower() == "nli":
        return RunEstimate(
            judge=judge,
            samples=len(rows),
            calls=0,
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
        )
    extract, verify = _fixed("extract_claims"), _fixed("verify_claims")
    calls = prompt = completion = 0
    truth_sets: set[tuple[str, ...]] = set()
    for sample in rows:
        response = sample.response or ""
        claims = len(extract_claims(response))
        contexts = sum(_tokens(text) + 2 for text in sample.context_texts)
        asked = _tokens(sample.query) + _tokens(response)
        verdicts = claims * _VERDICT_TOKENS_PER_CLAIM
        more = _other_work(sample, needs, claims, verify, verify_only=verify_only)
        calls, prompt, completion = calls + more[0], prompt + more[1], completion + more[2]
        if Need.CLAIMS not in needs:
            continue
        if verify_only:
            extra_draws = draws  # a cascade verifies in two-step calls, whatever the mode
        elif mode == "single_call":
            calls += 1
            prompt += _fixed("single_call") + asked + contexts
            completion += _tokens(response) + claims * _EXTRACTION_TOKENS_PER_CLAIM + verdicts
            extra_draws = draws - 1
        else:
            calls += 1
            prompt += extract + asked
            completion += _tokens(response) + claims * _EXTRACTION_TOKENS_PER_CLAIM
            extra_draws = draws
        context_set = tuple(sample.context_texts)
        if mode == "truths" and context_set not in truth_sets:
            truth_sets.add(context_set)
            calls += 1
            prompt += _fixed("extract_truths") + contexts
            completion += contexts  # truths restate the contexts, at most
        # Verification: the contexts (or their truths, no longer) and the claims, per draw.
        if mode == "per_claim":
            calls += extra_draws * claims
            prompt += extra_draws * (claims * (verify + contexts) + _tokens(response))
        else:
            calls += extra_draws
            prompt += extra_draws * (verify + contexts + _tokens(response))
        completion += extra_draws * verdicts
    provider, _, model = judge.partition(":")
    price = (prices or PriceTable()).lookup(provider, model)
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion)
    return RunEstimate(
        judge=judge,
        samples=len(rows),
        calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=price.cost(usage) if price is not None else None,
    )
