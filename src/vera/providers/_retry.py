"""Retries with exponential backoff and full jitter, honouring Retry-After. Written once."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from vera.providers._base import ProviderTimeoutError, RetryableProviderError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a retryable provider error.

    Attempt n (from 0) waits a random time up to `base_delay * 2**n`, capped at `max_delay`;
    a server's Retry-After replaces that wait when it is longer, since the server knows best.
    A call that timed out is tried at most `timeout_attempts` times: each attempt already waited
    the whole timeout, and a server that hung twice rarely answers the third time.
    """

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 60.0
    timeout_attempts: int = 2

    def gives_up(self, attempt: int, error: RetryableProviderError) -> bool:
        """Whether attempt `attempt` (from 0), which failed with `error`, is the last."""
        if isinstance(error, ProviderTimeoutError) and attempt + 1 >= self.timeout_attempts:
            return True
        return attempt + 1 >= self.max_attempts

    def delay(self, attempt: int, error: RetryableProviderError, rng: random.Random) -> float:
        backoff = rng.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))
        if error.retry_after is not None:
            return max(min(error.retry_after, self.max_delay), backoff)
        return backoff


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
    on_retry: Callable[[RetryableProviderError], None] | None = None,
    rng: random.Random | None = None,
) -> T:
    """Run `call`, retrying retryable errors per `policy`; any other error fails at once."""
    rng = rng or random.Random()
    for attempt in range(policy.max_attempts):
        try:
            return await call()
        except RetryableProviderError as error:
            if policy.gives_up(attempt, error):
                raise
            if on_retry is not None:
                on_retry(error)
            await sleep(policy.delay(attempt, error, rng))
    raise AssertionError("unreachable: the loop returns or raises")
