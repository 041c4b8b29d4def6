"""`ManagedChatModel`: the one wrapper that adds cache, budget, limits and retries to any model.

Order of a call: cache lookup (a hit costs nothing and touches no limit), budget check, a slot
under the concurrency and rate limits, the provider call with retries, accounting, cache store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from vera.providers.base import ChatModel, ChatRequest, ChatResponse, RateLimitError
from vera.providers.cache import ResponseCache, cache_key
from vera.providers.cost import CostLedger
from vera.providers.limits import Limiter
from vera.providers.retry import RetryPolicy, call_with_retries

__all__ = ["CHARS_PER_TOKEN", "ManagedChatModel", "estimate_tokens"]

CHARS_PER_TOKEN = 4
"""The rough size of a token in English text, for estimates made before a call."""
_EXPECTED_COMPLETION = 512


def estimate_tokens(request: ChatRequest) -> int:
    """A rough token count for pacing under a tokens-per-minute limit, before the call."""
    chars = sum(len(m.content) for m in request.messages)
    return chars // CHARS_PER_TOKEN + min(request.max_tokens, _EXPECTED_COMPLETION)


class ManagedChatModel:
    """Wraps a `ChatModel` with everything cross-cutting; is itself a `ChatModel`."""

    def __init__(
        self,
        inner: ChatModel,
        *,
        retry: RetryPolicy | None = None,
        limiter: Limiter | None = None,
        cache: ResponseCache | None = None,
        ledger: CostLedger | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.inner = inner
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or Limiter(sleep=sleep)
        self.cache = cache
        self.ledger = ledger or CostLedger()
        self._sleep = sleep
        self.provider_calls = 0

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(self, request: ChatRequest, *, label: str = "") -> ChatResponse:
        """Answer from the cache, or call the provider within limits, retrying what may pass."""
        cache = self.cache
        key = cache_key(self.provider, self.model, request) if cache is not None else None
        if cache is not None and key is not None:
            hit = cache.get(key)
            if hit is not None:
                self.ledger.record(self.provider, self.model, hit.usage, cached=True, label=label)
                return hit
        self.ledger.check_budget()

        async def attempt() -> ChatResponse:
            async with self.limiter.slot(estimate_tokens(request)):
                self.provider_calls += 1
                started = self.limiter.now()
                try:
                    response = await self.inner.complete(request)
                except RateLimitError:
                    self.limiter.on_rate_limited(started)
                    raise
                self.limiter.on_success()
                return response

        response = await call_with_retries(attempt, self.retry, sleep=self._sleep)
        self.ledger.record(self.provider, self.model, response.usage, cached=False, label=label)
        if cache is not None and key is not None:
            cache.put(key, response)
        return response
