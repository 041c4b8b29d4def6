"""One rate limit and one budget for every worker process of a run.

A `Quota` lives in one place (a Ray actor) and paces every provider call of every worker with
the same `Limiter` per model, and adds up what they spend. In each worker, `SharedLimiter` and
`SharedLedger` stand in for the `Limiter` and `CostLedger` a `ManagedChatModel` is built with:
they keep the worker's own concurrency and accounting, and ask the quota for each call's turn.
The quota's handle is duck-typed (`handle.method.remote(...)` returns an awaitable), so this
module does not import Ray.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from vera.providers.base import RateLimitInfo, Usage
from vera.providers.cost import BudgetExceededError, CostLedger
from vera.providers.limits import Limiter
from vera.settings import Settings

__all__ = ["Quota", "QuotaClient", "SharedLedger", "SharedLimiter"]

_UNBOUNDED = 1_000_000  # the quota paces starts; each worker bounds its own concurrency
# A turn reaches its worker, and its request the server, a variable few milliseconds after the
# quota grants it, which bunches some starts closer than the pace; pacing a little under the
# limit keeps the rate the server sees under it (measured: 101-103 % of the limit without).
_MARGIN = 0.95


class Quota:
    """The shared side, one per pass: a `Limiter` per model and the dollars spent so far."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.limiters: dict[str, Limiter] = {}
        self.spent = 0.0

    def _limiter(self, spec: str) -> Limiter:
        if spec not in self.limiters:
            self.limiters[spec] = Limiter(
                concurrency=_UNBOUNDED,
                requests_per_minute=_under(self.requests_per_minute),
                tokens_per_minute=_under(self.tokens_per_minute),
            )
        return self.limiters[spec]

    async def acquire(self, spec: str, tokens: int) -> tuple[float, float]:
        """Wait for a call's turn under the limits of `spec`; the quota's clock at the turn
        (to stamp the call with) and the dollars spent by every worker."""
        limiter = self._limiter(spec)
        async with limiter.slot(tokens):
            return limiter.now(), self.spent

    def on_rate_limited(self, spec: str, started: float | None) -> None:
        self._limiter(spec).on_rate_limited(started)

    def on_success(self, spec: str) -> None:
        self._limiter(spec).on_success()

    def on_headers(self, spec: str, info: RateLimitInfo) -> None:
        self._limiter(spec).on_headers(info)

    def spend(self, dollars: float) -> float:
        """Add a call's cost; the total spent."""
        self.spent += dollars
        return self.spent

    def total(self) -> float:
        return self.spent


def _under(limit: float | None) -> float | None:
    return None if limit is None else limit * _MARGIN


@dataclass
class _Spent:
    """What this worker last heard every worker had spent."""

    dollars: float = 0.0


class SharedLimiter(Limiter):
    """A worker's limiter for one model: its own concurrency, the quota's pace."""

    def __init__(self, quota: Any, spec: str, *, concurrency: int, spent: _Spent) -> None:
        super().__init__(concurrency=concurrency)
        self._quota = quota
        self._spec = spec
        self._spent = spent
        self._granted: ContextVar[float | None] = ContextVar("vera_quota_turn", default=None)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        async with super().slot(tokens):
            granted, spent = await self._quota.acquire.remote(self._spec, tokens)
            self._granted.set(granted)
            self._spent.dollars = max(self._spent.dollars, spent)
            yield

    def now(self) -> float:
        """When this task's call got its turn, on the quota's clock (another machine's)."""
        granted = self._granted.get()
        return super().now() if granted is None else granted

    def on_rate_limited(self, started: float | None = None) -> None:
        super().on_rate_limited()  # local concurrency; `started` is on the quota's clock
        self._quota.on_rate_limited.remote(self._spec, started)

    def on_success(self) -> None:
        super().on_success()
        self._quota.on_success.remote(self._spec)

    def on_headers(self, info: RateLimitInfo | None) -> None:
        if info is not None:
            self._quota.on_headers.remote(self._spec, info)


class SharedLedger(CostLedger):
    """A worker's ledger: its own accounting, and the budget checked against every worker's
    spending (as last heard, plus its own since)."""

    def __init__(self, quota: Any, *, max_cost: float | None, spent: _Spent) -> None:
        super().__init__(max_cost=max_cost)
        self._quota = quota
        self._spent = spent

    def check_budget(self) -> None:
        spent = max(self._spent.dollars, self.total.cost)
        if self.max_cost is not None and spent >= self.max_cost:
            raise BudgetExceededError(
                f"the budget of ${self.max_cost:.4f} is spent (${spent:.4f} by all workers); "
                "no new judge calls are started"
            )

    def record(
        self, provider: str, model: str, usage: Usage, *, cached: bool, label: str = ""
    ) -> float:
        cost = super().record(provider, model, usage, cached=cached, label=label)
        if cost:
            self._spent.dollars += cost
            self._quota.spend.remote(cost)
        return cost


class QuotaClient:
    """The `shared_limits` parts of one worker: a `SharedLimiter` per model, one ledger."""

    def __init__(self, quota: Any, settings: Settings) -> None:
        self._quota = quota
        self._spent = _Spent()
        self.ledger = SharedLedger(quota, max_cost=settings.max_cost, spent=self._spent)
        self._limiters: dict[str, SharedLimiter] = {}

    def __call__(self, spec: str, settings: Settings) -> tuple[Limiter, CostLedger]:
        if spec not in self._limiters:
            self._limiters[spec] = SharedLimiter(
                self._quota, spec, concurrency=settings.provider_concurrency, spent=self._spent
            )
        return self._limiters[spec], self.ledger
