"""Fail fast on a dead provider, and the per-call timeout, through the one managed wrapper.

The provider is `FakeChatModel` (explicitly scripted); sleeps between retries are skipped.
"""

import asyncio

import pytest

from vera import RunStopError
from vera.providers import (
    BadRequestError,
    ChatRequest,
    ChatResponse,
    ManagedChatModel,
    Message,
    ProviderConnectionError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitError,
    RetryableProviderError,
)
from vera.providers._health import ProviderHealth, failure_cause
from vera.providers._retry import RetryPolicy
from vera.testing import FakeChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

REQUEST = ChatRequest(messages=(Message(role="user", content="Is the sky blue?"),))


async def _no_sleep(seconds: float) -> None:
    return None


def _managed(fake: FakeChatModel, *, threshold: int = 3, **kwargs: object) -> ManagedChatModel:
    return ManagedChatModel(
        fake,
        retry=RetryPolicy(max_attempts=2),
        health=ProviderHealth("fake:m", threshold),
        sleep=_no_sleep,
        **kwargs,  # type: ignore[arg-type]
    )


def _refused() -> ProviderConnectionError:
    return ProviderConnectionError("could not reach http://127.0.0.1:9: Connection refused")


def test_failure_causes_that_suggest_a_dead_provider() -> None:
    assert failure_cause(_refused()) == "connection"
    assert failure_cause(ProviderTimeoutError("slow")) == "timeout"
    assert failure_cause(RetryableProviderError("boom", status=503)) == "server:503"
    assert failure_cause(RateLimitError("slow down", status=429)) is None
    assert failure_cause(BadRequestError("bad", status=400)) is None


async def test_first_calls_all_refused_stop_the_run_with_the_cause() -> None:
    fake = FakeChatModel()
    fake.enqueue(*[_refused() for _ in range(6)])
    model = _managed(fake)
    for _ in range(2):
        with pytest.raises(ProviderConnectionError):
            await model.complete(REQUEST)
    with pytest.raises(ProviderUnavailableError) as stopped:
        await model.complete(REQUEST)
    assert isinstance(stopped.value, RunStopError)
    message = str(stopped.value)
    assert "first 3 calls to fake:m all failed" in message
    assert "Connection refused" in message
    assert "base URL" in message
    sent = len(fake.requests)
    with pytest.raises(ProviderUnavailableError):
        await model.complete(REQUEST)
    assert len(fake.requests) == sent  # no further call is sent once stopped


async def test_a_success_first_means_later_failures_are_per_sample() -> None:
    fake = FakeChatModel()
    fake.enqueue("blue", *[_refused() for _ in range(8)])
    model = _managed(fake)
    assert (await model.complete(REQUEST)).text == "blue"
    for _ in range(4):
        with pytest.raises(ProviderConnectionError):
            await model.complete(REQUEST)


async def test_mixed_causes_do_not_stop_the_run() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        _refused(),
        _refused(),
        RetryableProviderError("500", status=500),
        RetryableProviderError("500", status=500),
        *[_refused() for _ in range(6)],
    )
    model = _managed(fake)
    for _ in range(5):
        with pytest.raises(RetryableProviderError) as raised:
            await model.complete(REQUEST)
        assert not isinstance(raised.value, ProviderUnavailableError)


async def test_fail_fast_zero_never_stops() -> None:
    fake = FakeChatModel()
    fake.enqueue(*[_refused() for _ in range(20)])
    model = _managed(fake, threshold=0)
    for _ in range(10):
        with pytest.raises(ProviderConnectionError):
            await model.complete(REQUEST)


class _Hanging(FakeChatModel):
    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        await asyncio.sleep(30)
        raise AssertionError("the timeout should have cancelled this call")


async def test_per_call_timeout_is_enforced_and_a_timeout_is_tried_twice() -> None:
    hanging = _Hanging()
    model = ManagedChatModel(
        hanging,
        retry=RetryPolicy(max_attempts=6),
        timeout=0.05,
        health=ProviderHealth("fake:m", 2),
        sleep=_no_sleep,
    )
    with pytest.raises(ProviderTimeoutError, match=r"no reply within 0.05s \(--timeout\)"):
        await model.complete(REQUEST)
    assert len(hanging.requests) == 2  # one retry, not five: each attempt waited the timeout
    with pytest.raises(ProviderUnavailableError, match="raise --timeout"):
        await model.complete(REQUEST)


@pytest.mark.slow
async def test_calls_in_flight_end_as_soon_as_the_run_stops() -> None:
    """A hung provider: once the first calls have failed, a call still waiting ends with the
    stop at once instead of waiting out its timeout and its retry."""
    hanging = _Hanging()
    model = ManagedChatModel(
        hanging,
        retry=RetryPolicy(max_attempts=6),
        timeout=0.5,
        health=ProviderHealth("fake:m", 2),
        sleep=_no_sleep,
    )
    first = [asyncio.create_task(model.complete(REQUEST)) for _ in range(2)]
    await asyncio.sleep(0.7)  # the first calls are in their second (last) attempt
    late = asyncio.create_task(model.complete(REQUEST))
    results = await asyncio.gather(*first, late, return_exceptions=True)
    assert all(isinstance(r, ProviderUnavailableError) for r in results[1:])
    # Two attempts for each first call, and one for the late call, cut short by the stop.
    assert len(hanging.requests) == 5


def test_one_model_serves_runs_on_different_event_loops() -> None:
    """`vera.evaluate` twice with one model: each run has its own event loop."""
    fake = FakeChatModel()
    fake.enqueue("first", "second")
    model = _managed(fake)
    assert asyncio.run(model.complete(REQUEST)).text == "first"
    assert asyncio.run(model.complete(REQUEST)).text == "second"
