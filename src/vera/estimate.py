"""`vera eval --dry-run`: what a run would cost, before any judge call is made.

Per sample with a response, the batched LLM judge makes two calls. Prompt tokens are counted
from the real prompt templates plus the sample's text; completion tokens from the number of
claims the offline segmenter finds (an LLM finds a similar number). Tokens are estimated at four
characters each. Cache hits are not subtracted, so the figure is an upper bound.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from vera.judges.offline.claims import extract_claims
from vera.judges.prompts import load_prompt
from vera.providers.base import Usage
from vera.providers.cost import PriceTable
from vera.providers.managed import CHARS_PER_TOKEN
from vera.types import Sample

__all__ = ["CHARS_PER_TOKEN", "RunEstimate", "estimate_run"]

CALLS_PER_SAMPLE = 2
# Tokens a model writes per claim: its text in the extraction, a verdict with quote and reason.
_EXTRACTION_TOKENS_PER_CLAIM = 12
_VERDICT_TOKENS_PER_CLAIM = 45


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


def estimate_run(
    samples: Iterable[Sample], judge: str, prices: PriceTable | None = None
) -> RunEstimate:
    """Estimate the cost of judging `samples` with `judge` ("offline" costs nothing)."""
    rows = [s for s in samples if s.response is not None]
    if ":" not in judge:
        return RunEstimate(
            judge=judge,
            samples=len(rows),
            calls=0,
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
        )
    extract, verify = load_prompt("extract_claims"), load_prompt("verify_claims")
    fixed = _tokens(extract.system + extract.user) + _tokens(verify.system + verify.user)
    prompt = completion = 0
    for sample in rows:
        response = sample.response or ""
        claims = len(extract_claims(response))
        context_tokens = sum(_tokens(text) + 2 for text in sample.context_texts)
        # The response appears in the extraction prompt; its claims again in verification.
        prompt += fixed + _tokens(sample.query) + 2 * _tokens(response) + context_tokens
        completion += _tokens(response) + claims * (
            _EXTRACTION_TOKENS_PER_CLAIM + _VERDICT_TOKENS_PER_CLAIM
        )
    provider, _, model = judge.partition(":")
    price = (prices or PriceTable()).lookup(provider, model)
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion)
    return RunEstimate(
        judge=judge,
        samples=len(rows),
        calls=CALLS_PER_SAMPLE * len(rows),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=price.cost(usage) if price is not None else None,
    )
