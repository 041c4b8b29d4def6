"""Concurrency and rate limits for one provider model, with adaptive slow-down on 429.

Request starts are paced evenly at the configured requests- and tokens-per-minute, so a run
finishes close to the limit instead of bursting into it. A request claims its start only when
it actually starts, so a stalled event loop cannot release a burst of starts reserved earlier.
A 429 cuts both the concurrency and the pace to 70 %, and successes win them back gradually
(additive increase, multiplicative decrease), so a limit that is lower than configured, or not
configured at all, is found. Only one cut per round trip counts: the 429s of requests that
started before the last cut report the same congestion, not new congestion.

Where the provider states its limits in its replies' headers (`RateLimitInfo`), starts are
paced at the stated limit when it is lower than the configured one or none was configured,
so an unconfigured run uses the limit fully without having to find it by 429s. And when the
last reply said less was left than the next request needs, that request waits until enough is
back: the missing part at the stated limit's refill rate, or, with no limit stated, the reset
the server named. Without such headers nothing changes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from vera.providers._base import RateLimitInfo

DEFAULT_CONCURRENCY = 16
_MIN_PACE = 0.05  # never slow below 5 % of the limit being paced at
_PACE_RECOVERY = 0.02  # share of that limit won back per success
_BACKOFF = 0.7  # what a 429 leaves of concurrency and pace (TCP CUBIC uses the same factor)
# A reset further away than one minute belongs to a longer limit (some servers state a daily
# one) or is a misread; waiting for it could stall a run, and a 429 would say more.
_MAX_HOLD = 60.0


@dataclass
class _Allowance:
    """What the server last said was left of one limit until its reset, minus what started
    since: its count predates every request still in flight."""

    left: float | None = None
    reset_at: float = float("-inf")
    heard_at: float = float("-inf")
    refill_per_s: float | None = None
    """How fast the limit refills, where the server stated it (its limit per minute / 60)."""

    def update(
        self, remaining: float | None, reset: float | None, limit: float | None, now: float
    ) -> None:
        # A remaining count without a reset time cannot say how long to wait: ignored.
        if remaining is not None and reset is not None:
            self.left = remaining
            self.reset_at = now + min(reset, _MAX_HOLD)
            self.heard_at = now
        if limit:
            self.refill_per_s = limit / 60.0

    def ready_at(self, need: float, now: float) -> float:
        """When a request needing `need` of this limit may start: now, or once enough of the
        limit is back. The reset is when all of it is back (OpenAI's and Anthropic's
        meaning); where the limit is known, only the missing part is waited for, at its
        refill rate, so a run paced at the limit does not also wait for full resets."""
        if self.left is None or now >= self.reset_at or need <= 0 or self.left >= need:
            return now
        if self.refill_per_s:
            return min(self.reset_at, self.heard_at + (need - self.left) / self.refill_per_s)
        return self.reset_at

    def spend(self, amount: float, now: float) -> None:
        if self.left is not None and now < self.reset_at:
            self.left -= amount


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
        self._server_requests_per_minute: float | None = None
        self._server_tokens_per_minute: float | None = None
        self._limits_stated = float("-inf")  # when the server's stated limits last changed
        self._requests_left = _Allowance()
        self._tokens_left = _Allowance()
        self._changed = asyncio.Condition()
        self.rate_limited = 0

    @property
    def concurrency(self) -> int:
        """How many calls may run at once right now (lower after 429s)."""
        return max(1, int(self._limit))

    @property
    def paced_requests_per_minute(self) -> float | None:
        """The requests/min starts are paced at: the configured limit or the server's, the lower."""
        return _lower(self.requests_per_minute, self._server_requests_per_minute)

    @property
    def paced_tokens_per_minute(self) -> float | None:
        """The tokens/min starts are paced at: the configured limit or the server's, the lower."""
        return _lower(self.tokens_per_minute, self._server_tokens_per_minute)

    def now(self) -> float:
        """The limiter's clock, to stamp when a request started (see `on_rate_limited`)."""
        return self._clock()

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        """Wait for a free slot and this request's turn under the rate limits."""
        async with self._changed:
            try:
                await self._changed.wait_for(lambda: self._active < self.concurrency)
            except asyncio.CancelledError:
                # A wake-up this waiter was given passes to the next one: else a slot could
                # stay free while others wait.
                self._changed.notify(1)
                raise
            self._active += 1
        try:
            await self._wait_turn(tokens)
            yield
        finally:
            async with self._changed:
                self._active -= 1
                # As many waiters as there are free slots: waking them all (48 samples wait
                # for 16 slots in the benchmark) cost each a task switch per call.
                self._changed.notify(max(1, self.concurrency - self._active))

    async def _wait_turn(self, tokens: int) -> None:
        # Check and claim happen together, with no await between them, so two requests never
        # take the same turn; a request that wakes late starts the next interval from now.
        # The limits are read afresh each time round: a reply may have stated new ones.
        while True:
            now = self._clock()
            rpm, tpm = self.paced_requests_per_minute, self.paced_tokens_per_minute
            turn = max(
                self._next_request if rpm else now,
                self._requests_left.ready_at(1, now),
                self._tokens_left.ready_at(tokens, now),
            )
            if tpm and tokens:
                turn = max(turn, self._next_tokens)
            if turn <= now:
                break
            await self._sleep(turn - now)
        self._requests_left.spend(1, now)
        self._tokens_left.spend(tokens, now)
        # The next turn follows this one's schedule, so waking a little late does not drift
        # the pace below the limit; after a long stall it restarts from now, allowing at most
        # one extra start, never the burst of every turn that passed.
        if rpm:
            interval = 60.0 / (rpm * self._pace)
            self._next_request = max(self._next_request, now - interval) + interval
        if tpm and tokens:
            interval = 60.0 * tokens / (tpm * self._pace)
            self._next_tokens = max(self._next_tokens, now - interval) + interval

    def on_rate_limited(self, started: float | None = None) -> None:
        """A 429 arrived for a request that started at `started`: cut concurrency and pace,
        unless that request started before the last cut (it saw the same congestion) or
        before the server's stated limits changed the pace (it was not paced by them)."""
        self.rate_limited += 1
        if started is not None and started <= max(self._last_cut, self._limits_stated):
            return
        self._last_cut = self._clock()
        self._limit = max(1.0, self._limit * _BACKOFF)
        self._pace = max(_MIN_PACE, self._pace * _BACKOFF)

    def on_success(self) -> None:
        """A call succeeded: win back a little concurrency and pace."""
        self._limit = min(float(self.max_concurrency), self._limit + 1.0 / self._limit)
        self._pace = min(1.0, self._pace + _PACE_RECOVERY)

    def on_headers(self, info: RateLimitInfo | None) -> None:
        """A reply or a 429 stated the server's limits (None: it stated none; nothing changes):
        pace at its limits where lower than configured, and hold starts for its reset where
        it has less left than a request needs."""
        if info is None:
            return
        now = self._clock()
        stated = (
            info.requests_limit or self._server_requests_per_minute,
            info.tokens_limit or self._server_tokens_per_minute,
        )
        if stated != (self._server_requests_per_minute, self._server_tokens_per_minute):
            self._server_requests_per_minute, self._server_tokens_per_minute = stated
            self._limits_stated = now
        self._requests_left.update(
            info.requests_remaining, info.requests_reset, info.requests_limit, now
        )
        self._tokens_left.update(info.tokens_remaining, info.tokens_reset, info.tokens_limit, now)


def _lower(configured: float | None, stated: float | None) -> float | None:
    if configured is None or stated is None:
        return configured if stated is None else stated
    return min(configured, stated)
