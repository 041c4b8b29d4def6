"""`ManagedChatModel`: the one wrapper that adds cache, budget, limits and retries to any model.

Order of a call: cache lookup (a hit costs nothing and touches no limit), the provider health
check, budget check, a slot under the concurrency and rate limits, the provider call within the
per-call timeout with retries, accounting, cache store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from vera.providers._base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
    RetryableProviderError,
)
from vera.providers._cache import ResponseCache, cache_key
from vera.providers._cost import CostLedger
from vera.providers._health import ProviderHealth
from vera.providers._limits import Limiter
from vera.providers._ready import ServerReadiness
from vera.providers._retry import RetryPolicy, call_with_retries

DEFAULT_TIMEOUT = 60.0
"""Seconds one provider call may take before it counts as timed out."""

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
        timeout: float = DEFAULT_TIMEOUT,
        readiness: ServerReadiness | None = None,
        health: ProviderHealth | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.inner = inner
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or Limiter(sleep=sleep)
        self.cache = cache
        self.ledger = ledger or CostLedger()
        self.timeout = timeout
        self.readiness = readiness
        self.health = health or ProviderHealth(f"{inner.provider}:{inner.model}")
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
        await self._ready(request)
        self.health.check()
        self.ledger.check_budget()
        try:
            response = await call_with_retries(
                lambda: self._attempt(request), self.retry, sleep=self._sleep
            )
        except RetryableProviderError as error:
            await self.health.on_failure(error)
            raise
        await self.health.on_success()
        self.ledger.record(self.provider, self.model, response.usage, cached=False, label=label)
        if cache is not None and key is not None:
            cache.put(key, response)
        return response

    async def _ready(self, request: ChatRequest) -> None:
        """A local server's readiness, asked before the first call; a server found not
        ready stops the run as a dead provider does."""
        if self.readiness is None:
            return
        try:
            await self.readiness.check()
        except ProviderUnavailableError as stop:
            self.health.learn(stop)
            raise
        self.readiness.check_fits(request, CHARS_PER_TOKEN)

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        """One provider call under the limits and the per-call timeout."""
        async with self.limiter.slot(estimate_tokens(request)):
            self.provider_calls += 1
            started = self.limiter.now()
            try:
                async with asyncio.timeout(self.timeout):
                    response = await self.health.unless_stopped(self.inner.complete(request))
            except TimeoutError:
                raise ProviderTimeoutError(
                    f"{self.provider}:{self.model} gave no reply within {self.timeout:g}s "
                    "(--timeout)"
                ) from None
            except RateLimitError as error:
                # Headers first: a 429 that first states the limits is not news of congestion.
                self.limiter.on_headers(error.rate_limit)
                self.limiter.on_rate_limited(started)
                raise
            self.limiter.on_success()
            self.limiter.on_headers(response.rate_limit)
            return response
