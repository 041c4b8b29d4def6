"""Concurrency and rate limits for one provider model, with adaptive slow-down on 429.

Request starts are paced evenly at the configured requests- and tokens-per-minute, so a run
finishes close to the limit instead of bursting into it. A request claims its start only when
it actually starts, so a stalled event loop cannot release a burst of starts reserved earlier.
A 429 cuts both the concurrency and the pace to 70 %, and successes win them back gradually
(additive increase, multiplicative decrease), so a limit that is lower than configured, or not
configured at all, is found. Only one cut per round trip counts: the 429s of requests that
started before the last cut report the same congestion, not new congestion.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

__all__ = ["DEFAULT_CONCURRENCY", "Limiter"]

DEFAULT_CONCURRENCY = 16
_MIN_PACE = 0.05  # never slow below 5 % of the configured rate
_PACE_RECOVERY = 0.02  # share of the configured rate won back per success
_BACKOFF = 0.7  # what a 429 leaves of concurrency and pace (TCP CUBIC uses the same factor)


class Limiter:
    """Limits for one (provider, model): concurrency, requests/min and tokens/min."""

    def __init__(
        self,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.max_concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._limit = float(concurrency)
        self._active = 0
        self._pace = 1.0
        self._next_request = 0.0
        self._next_tokens = 0.0
        self._last_cut = float("-inf")
        self._changed = asyncio.Condition()
        self.rate_limited = 0

    @property
    def concurrency(self) -> int:
        """How many calls may run at once right now (lower after 429s)."""
        return max(1, int(self._limit))

    def now(self) -> float:
        """The limiter's clock, to stamp when a request started (see `on_rate_limited`)."""
        return self._clock()

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        """Wait for a free slot and this request's turn under the rate limits."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._active < self.concurrency)
            self._active += 1
        try:
            await self._wait_turn(tokens)
            yield
        finally:
            async with self._changed:
                self._active -= 1
                self._changed.notify_all()

    async def _wait_turn(self, tokens: int) -> None:
        # Check and claim happen together, with no await between them, so two requests never
        # take the same turn; a request that wakes late starts the next interval from now.
        while True:
            now = self._clock()
            turn = max(self._next_request if self.requests_per_minute else now, now)
            if self.tokens_per_minute and tokens:
                turn = max(turn, self._next_tokens)
            if turn <= now:
                break
            await self._sleep(turn - now)
        # The next turn follows this one's schedule, so waking a little late does not drift
        # the pace below the limit; after a long stall it restarts from now, allowing at most
        # one extra start, never the burst of every turn that passed.
        if self.requests_per_minute:
            interval = 60.0 / (self.requests_per_minute * self._pace)
            self._next_request = max(self._next_request, now - interval) + interval
        if self.tokens_per_minute and tokens:
            interval = 60.0 * tokens / (self.tokens_per_minute * self._pace)
            self._next_tokens = max(self._next_tokens, now - interval) + interval

    def on_rate_limited(self, started: float | None = None) -> None:
        """A 429 arrived for a request that started at `started`: cut concurrency and pace,
        unless that request started before the last cut (it saw the same congestion)."""
        self.rate_limited += 1
        if started is not None and started <= self._last_cut:
            return
        self._last_cut = self._clock()
        self._limit = max(1.0, self._limit * _BACKOFF)
        self._pace = max(_MIN_PACE, self._pace * _BACKOFF)

    def on_success(self) -> None:
        """A call succeeded: win back a little concurrency and pace."""
        self._limit = min(float(self.max_concurrency), self._limit + 1.0 / self._limit)
        self._pace = min(1.0, self._pace + _PACE_RECOVERY)
