"""Fail fast on a dead provider: the first calls of a run all failing alike stop the run.

A rejected key (401) or an unknown model (404) already stops a run at once. A server that is not
running, a wrong host, or one that answers every call with 500 or not at all fails more slowly:
each call first spends its retries. Without this check every sample would go through the same
wait and end as an error, and a run of thousands of samples would take hours to say what the
first few calls already showed. Once any call succeeds the provider is known to work, and later
failures are the ordinary, per-sample kind.

A reply the server sends that is not the API's (an HTML page from a proxy, a body cut short)
counts as a failure of the provider too: a base URL that points at a web page fails that way
on every call. Where several processes call one provider (the Ray executor), one shared health
decides for all of them (`vera._run._quota.SharedHealth`): a dead provider is told apart
after the same number of calls, whichever process made them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from vera.providers._base import (
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
    RetryableProviderError,
    UnreadableReplyError,
)

T = TypeVar("T")

DEFAULT_FAIL_FAST = 8
"""How many first calls must all fail alike before the run stops."""

_ADVICE = {
    "connection": "check that the server is running and that the base URL "
    "(--judge-base-url) and network are right",
    "timeout": "check that the server is up and not overloaded, or raise --timeout",
    "server": "the server keeps failing; check its logs or status page, then resume the run",
    "unreadable": "the server answers, but not as the API does (a web page, a reply cut "
    "short); check that the base URL (--judge-base-url) is the API's and not a web page or "
    "proxy, then resume the run",
}


def failure_cause(error: ProviderError) -> str | None:
    """The kind of failure `error` is, when it suggests the provider is down; else None.

    Rate limits are left out: a 429 says the provider is up and pacing is the fix.
    """
    if isinstance(error, ProviderConnectionError):
        return "connection"
    if isinstance(error, ProviderTimeoutError):
        return "timeout"
    if isinstance(error, RateLimitError):
        return None
    if isinstance(error, UnreadableReplyError):
        return "unreadable"
    if isinstance(error, RetryableProviderError) and (error.status or 0) >= 500:
        return f"server:{error.status}"
    return None


class ProviderHealth:
    """Watches the first calls to one provider model; `threshold` 0 turns the check off."""

    def __init__(self, name: str, threshold: int = DEFAULT_FAIL_FAST) -> None:
        if threshold < 0:
            raise ValueError("threshold must be 0 (off) or more")
        self.name = name
        self.threshold = threshold
        self._proven = threshold == 0
        self._failures: list[tuple[str, ProviderError]] = []
        self.stopped: ProviderUnavailableError | None = None
        self._stop_events: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}

    def check(self) -> None:
        """Raise the stop once it is decided, so no further call is sent."""
        if self.stopped is not None:
            raise self.stopped

    async def unless_stopped(self, call: Awaitable[T]) -> T:
        """Await `call`, but end it with the stop as soon as one is decided: calls in flight
        to a dead provider (a hung one, say) do not each wait out their timeout first."""
        self.check()
        task = asyncio.ensure_future(call)
        stop = asyncio.ensure_future(self._stop_event().wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the caller was cancelled (its timeout): the call goes too
            task.cancel()
            raise
        finally:
            stop.cancel()
        if not task.done():
            task.cancel()
            self.check()
        return task.result()

    def _stop_event(self) -> asyncio.Event:
        # An event belongs to one event loop, and a model may serve several runs, each with
        # its own loop (`vera.evaluate` called twice); only the current loop's is kept.
        loop = asyncio.get_running_loop()
        event = self._stop_events.get(loop)
        if event is None:
            self._stop_events = {loop: asyncio.Event()}
            event = self._stop_events[loop]
        return event

    async def on_success(self) -> None:
        """What the wrapper calls after a reply: `succeeded` (a shared health also tells the
        others)."""
        self.succeeded()

    async def on_failure(self, error: ProviderError) -> None:
        """What the wrapper calls after a call failed for good: `failed` (a shared health
        lets the one place that decides for every process count it)."""
        self.failed(error)

    def succeeded(self) -> None:
        """A call got a reply: the provider works, and this check is over."""
        self._proven = True
        self._failures.clear()

    def failed(self, error: ProviderError) -> None:
        """A call failed for good (after its retries); raise the stop when this decides it."""
        if self._proven or self.stopped is not None:
            self.check()
            return
        cause = failure_cause(error)
        if cause is None or (self._failures and self._failures[0][0] != cause):
            # Mixed or ordinary failures do not show a dead provider.
            self._proven = True
            return
        self._failures.append((cause, error))
        if len(self._failures) >= self.threshold:
            stop = self._stop(cause, error)
            self.learn(stop)
            raise stop from error

    def learn(self, stop: ProviderUnavailableError) -> None:
        """Take `stop` as decided (here, or by the health every process shares): no further
        call is sent, and calls in flight end with it."""
        if self.stopped is None:
            self.stopped = stop
        for event in self._stop_events.values():
            event.set()

    def _stop(self, cause: str, error: ProviderError) -> ProviderUnavailableError:
        advice = _ADVICE[cause.partition(":")[0]]
        return ProviderUnavailableError(
            f"the first {len(self._failures)} calls to {self.name} all failed ({error}); "
            f"stopped the run: {advice}",
            status=error.status,
        )
