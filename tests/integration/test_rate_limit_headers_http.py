"""Rate-limit headers from a real HTTP reply, through the real SDKs, reach the limiter.

The limiter runs on a fake clock, so the pacing the headers cause is asserted exactly while
the calls themselves go over HTTP to the loopback server.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from tests.support.loopback import (
    LoopbackServer,
    error,
    ok_anthropic_text,
    ok_anthropic_tool,
    ok_openai,
    with_headers,
)
from tests.unit.test_managed_model import REQUEST, FakeClock

from vera.providers import ChatModel, ChatRequest, ManagedChatModel, Message, RateLimitError
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._limits import Limiter
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the providers' own clients, retries, cache and batches"

OPENAI_HEADERS = {
    "x-ratelimit-limit-requests": "120",
    "x-ratelimit-remaining-requests": "119",
    "x-ratelimit-reset-requests": "500ms",
    "x-ratelimit-limit-tokens": "90000",
    "x-ratelimit-remaining-tokens": "89000",
    "x-ratelimit-reset-tokens": "1m30s",
}
STRUCTURED = ChatRequest(
    messages=(Message(role="user", content="Judge this."),),
    json_schema={"type": "object", "properties": {"verdict": {"type": "string"}}},
)


def anthropic_headers(reset_in: float) -> dict[str, str]:
    reset = (datetime.now(UTC) + timedelta(seconds=reset_in)).isoformat().replace("+00:00", "Z")
    return {
        "anthropic-ratelimit-requests-limit": "120",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": reset,
        "anthropic-ratelimit-tokens-limit": "90000",
        "anthropic-ratelimit-tokens-remaining": "89000",
        "anthropic-ratelimit-tokens-reset": reset,
    }


def managed(inner: ChatModel, clock: FakeClock) -> ManagedChatModel:
    limiter = Limiter(clock=clock, sleep=clock.sleep)
    return ManagedChatModel(inner, limiter=limiter, retry=RetryPolicy(max_attempts=1))


async def starts(model: ManagedChatModel, clock: FakeClock, n: int) -> list[float]:
    """When each of `n` calls in a row started: the fake clock moves only while one waits."""
    times = []
    for _ in range(n):
        await model.complete(REQUEST)
        times.append(clock.now)
    return times


async def test_openai_headers_pace_the_next_requests(loopback: LoopbackServer) -> None:
    loopback.script(*[with_headers(ok_openai("ok"), OPENAI_HEADERS)] * 3)
    clock = FakeClock()
    model = managed(OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_url), clock)
    response = await model.complete(REQUEST)
    assert response.rate_limit is not None
    assert response.rate_limit.requests_reset == pytest.approx(0.5)
    assert response.rate_limit.tokens_reset == pytest.approx(90.0)
    assert model.limiter.paced_requests_per_minute == 120
    assert model.limiter.paced_tokens_per_minute == 90_000
    # 120/min: one start every 0.5 s, which the fake clock shows without real waiting.
    assert await starts(model, clock, 2) == pytest.approx([0.0, 0.5])


async def test_openai_structured_reply_keeps_its_data_with_headers(
    loopback: LoopbackServer,
) -> None:
    loopback.script(with_headers(ok_openai('{"verdict": "yes"}'), OPENAI_HEADERS))
    gpt = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_url)
    response = await gpt.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    assert response.rate_limit is not None and response.rate_limit.requests_limit == 120


async def test_anthropic_headers_hold_starts_until_one_is_back(loopback: LoopbackServer) -> None:
    loopback.script(
        with_headers(ok_anthropic_tool({"verdict": "yes"}, name="response"), anthropic_headers(30))
    )
    clock = FakeClock()
    claude = AnthropicChatModel("claude-test", api_key="k", base_url=loopback.anthropic_url)
    model = managed(claude, clock)
    response = await model.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    info = response.rate_limit
    assert info is not None and info.requests_remaining == 0
    assert info.requests_reset == pytest.approx(30.0, abs=5.0)  # whole seconds, a loaded host
    assert model.limiter.paced_requests_per_minute == 120
    loopback.script(ok_anthropic_text("ok"))
    # Nothing left: the next start waits for one request's share of the limit to come back
    # (0.5 s at 120/min; Anthropic refills its bucket continuously), not for the reset the
    # server named (about 30 s away), which is when the whole limit is back.
    assert await starts(model, clock, 1) == [pytest.approx(0.5)]


async def test_a_server_without_headers_changes_nothing(loopback: LoopbackServer) -> None:
    # The loopback server's unscripted replies carry no rate-limit headers.
    clock = FakeClock()
    for inner in (
        OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_url),
        AnthropicChatModel("claude-test", api_key="k", base_url=loopback.anthropic_url),
    ):
        model = managed(inner, clock)
        response = await model.complete(REQUEST)
        assert response.rate_limit is None
        assert model.limiter.paced_requests_per_minute is None
        assert await starts(model, clock, 2) == [0.0, 0.0]


async def test_a_429_with_headers_is_a_rate_limit_error_that_states_them(
    loopback: LoopbackServer,
) -> None:
    loopback.script(error(429, headers={"retry-after": "3", **OPENAI_HEADERS}))
    gpt = OpenAIChatModel("gpt-test", api_key="k", base_url=loopback.openai_url)
    with pytest.raises(RateLimitError) as caught:
        await gpt.complete(REQUEST)
    assert caught.value.retry_after == 3.0
    stated = caught.value.rate_limit
    assert stated is not None and stated.requests_limit == 120
