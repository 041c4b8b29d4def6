"""One rate limit, one budget and one provider health for every worker process of a run.

A `Quota` lives in one place (a Ray actor) and paces every provider call of every worker with
the same `Limiter` per model, adds up what they spend, and counts their failed calls with one
`ProviderHealth` per model, so a dead provider stops every worker after the `--fail-fast`
calls a local run would make, not after that many per worker. In each worker, `SharedLimiter`,
`SharedLedger` and `SharedHealth` stand in for the `Limiter`, `CostLedger` and
`ProviderHealth` a `ManagedChatModel` is built with: they keep the worker's own concurrency and
accounting, ask the quota for each call's turn (which also says whether the provider was
found dead), and report each call that failed for good.
The quota's handle is duck-typed (`handle.method.remote(...)` returns an awaitable), so this
module does not import Ray.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from vera.providers._base import ProviderError, ProviderUnavailableError, RateLimitInfo, Usage
from vera.providers._cost import BudgetExceededError, CostLedger
from vera.providers._health import DEFAULT_FAIL_FAST, ProviderHealth
from vera.providers._limits import Limiter
from vera.providers._options import ProviderOptions

_UNBOUNDED = 1_000_000  # the quota paces starts; each worker bounds its own concurrency
# A turn reaches its worker, and its request the server, a variable few milliseconds after the
# quota grants it, which bunches some starts closer than the pace; pacing a little under the
# limit keeps the rate the server sees under it (measured: 101-103 % of the limit without).
_MARGIN = 0.95

Stop = tuple[str, int | None]
"""A provider stop as it crosses processes: its message and HTTP status."""


class Quota:
    """The shared side, one per pass: a `Limiter` and a `ProviderHealth` per model, and the
    dollars spent so far."""

    def __init__(
        self,
        requests_per_minute: float | None,
        tokens_per_minute: float | None,
        fail_fast: int = DEFAULT_FAIL_FAST,
    ):
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.fail_fast = fail_fast
        self.limiters: dict[str, Limiter] = {}
        self.health: dict[str, ProviderHealth] = {}
        self.spent = 0.0

    def _health(self, spec: str) -> ProviderHealth:
        if spec not in self.health:
            self.health[spec] = ProviderHealth(spec, self.fail_fast)
        return self.health[spec]

    def stopped(self, spec: str) -> Stop | None:
        """The stop decided for `spec`'s provider, if any."""
        stop = self._health(spec).stopped
        return None if stop is None else (str(stop), stop.status)

    def failed(self, spec: str, error: ProviderError) -> Stop | None:
        """Count a call to `spec` that failed for good, in any worker; the stop once decided."""
        # The stop is told by the return, so that every worker learns it alike.
        with suppress(ProviderUnavailableError):
            self._health(spec).failed(error)
        return self.stopped(spec)

    def succeeded(self, spec: str) -> None:
        self._health(spec).succeeded()

    def _limiter(self, spec: str) -> Limiter:
        if spec not in self.limiters:
            self.limiters[spec] = Limiter(
                concurrency=_UNBOUNDED,
                requests_per_minute=_under(self.requests_per_minute),
                tokens_per_minute=_under(self.tokens_per_minute),
            )
        return self.limiters[spec]

    async def acquire(self, spec: str, tokens: int) -> tuple[float, float, Stop | None]:
        """Wait for a call's turn under the limits of `spec`; the quota's clock at the turn
        (to stamp the call with), the dollars spent by every worker, and the stop decided for
        the provider (then at once: a call to a dead provider need not wait its turn)."""
        limiter = self._limiter(spec)
        stop = self.stopped(spec)
        if stop is not None:
            return limiter.now(), self.spent, stop
        async with limiter.slot(tokens):
            return limiter.now(), self.spent, self.stopped(spec)

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


class SharedHealth(ProviderHealth):
    """A worker's health check of one model: the quota counts the failed calls of every
    worker and decides; this worker learns the decision from the failure it reports, or from
    its next call's turn."""

    def __init__(self, quota: Any, spec: str, threshold: int) -> None:
        super().__init__(spec, threshold)
        self._quota = quota
        self._spec = spec
        self._told_success = threshold == 0

    async def on_success(self) -> None:
        self.succeeded()
        if not self._told_success:  # once is enough: the quota's check is then over
            self._told_success = True
            self._quota.succeeded.remote(self._spec)

    async def on_failure(self, error: ProviderError) -> None:
        if self.threshold == 0:
            return
        self.check()
        stop = await self._quota.failed.remote(self._spec, error)
        if stop is not None:
            self.learn_remote(stop)
            self.check()

    def learn_remote(self, stop: Stop) -> None:
        """Take the stop the quota decided."""
        message, status = stop
        self.learn(ProviderUnavailableError(message, status=status))


class SharedLimiter(Limiter):
    """A worker's limiter for one model: its own concurrency, the quota's pace."""

    def __init__(
        self, quota: Any, spec: str, *, concurrency: int, spent: _Spent, health: SharedHealth
    ) -> None:
        super().__init__(concurrency=concurrency)
        self._quota = quota
        self._spec = spec
        self._spent = spent
        self._health = health
        self._granted: ContextVar[float | None] = ContextVar("vera_quota_turn", default=None)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[None]:
        async with super().slot(tokens):
            granted, spent, stop = await self._quota.acquire.remote(self._spec, tokens)
            if stop is not None:  # another worker's calls showed the provider dead
                self._health.learn_remote(stop)
                self._health.check()
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
        self,
        provider: str,
        model: str,
        usage: Usage,
        *,
        cached: bool,
        label: str = "",
        batch: bool = False,
    ) -> float:
        cost = super().record(provider, model, usage, cached=cached, label=label, batch=batch)
        if cost:
            self._spent.dollars += cost
            self._quota.spend.remote(cost)
        return cost


class QuotaClient:
    """The `shared_limits` parts of one worker: a `SharedLimiter` and a `SharedHealth` per
    model, one ledger."""

    def __init__(self, quota: Any, settings: ProviderOptions) -> None:
        self._quota = quota
        self._spent = _Spent()
        self.ledger = SharedLedger(quota, max_cost=settings.max_cost, spent=self._spent)
        self._parts: dict[str, tuple[SharedLimiter, SharedHealth]] = {}

    def __call__(
        self, spec: str, settings: ProviderOptions
    ) -> tuple[Limiter, CostLedger, ProviderHealth]:
        if spec not in self._parts:
            health = SharedHealth(self._quota, spec, settings.fail_fast)
            limiter = SharedLimiter(
                self._quota,
                spec,
                concurrency=settings.provider_concurrency,
                spent=self._spent,
                health=health,
            )
            self._parts[spec] = (limiter, health)
        limiter, health = self._parts[spec]
        return limiter, self.ledger, health
