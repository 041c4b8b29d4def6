"""The provider's own rate-limit headers: how they are read, and how the limiter paces by them.

The limiter runs on a fake clock whose sleeps advance it at once, so the start times it allows
can be asserted exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.unit.test_managed_model import REQUEST, FakeClock

from vera.providers import ChatRequest, ChatResponse, ManagedChatModel, RateLimitError
from vera.providers._base import RateLimitInfo
from vera.providers._cache import ResponseCache
from vera.providers._http import rate_limit_info
from vera.providers._limits import Limiter
from vera.testing import FakeChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

NOW = datetime(2025, 1, 1, tzinfo=UTC).timestamp()

# --- reading the headers -----------------------------------------------------------------------


def test_openai_headers() -> None:
    info = rate_limit_info(
        {
            "x-ratelimit-limit-requests": "3000",
            "x-ratelimit-remaining-requests": "2999",
            "x-ratelimit-reset-requests": "20ms",
            "x-ratelimit-limit-tokens": "250000",
            "x-ratelimit-remaining-tokens": "249000",
            "x-ratelimit-reset-tokens": "6m0s",
        }
    )
    assert info is not None
    assert info.model_dump() == pytest.approx(
        {
            "requests_limit": 3000,
            "requests_remaining": 2999,
            "requests_reset": 0.02,
            "tokens_limit": 250_000,
            "tokens_remaining": 249_000,
            "tokens_reset": 360,
        }
    )


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1m30s", 90.0),
        ("250ms", 0.25),
        ("1.5s", 1.5),
        ("1h2m3.5s", 3723.5),
        ("500us", 0.0005),
        ("7", 7.0),  # bare seconds, as some compatible servers send
        ("0.25", 0.25),
        ("soon", None),
        ("1x", None),
        ("-1s", None),
    ],
)
def test_duration_forms(value: str, seconds: float | None) -> None:
    info = rate_limit_info({"x-ratelimit-reset-requests": value})
    assert info is not None
    assert info.requests_reset == (None if seconds is None else pytest.approx(seconds))


def test_anthropic_headers_with_rfc3339_resets() -> None:
    info = rate_limit_info(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-requests-reset": "2025-01-01T00:00:01.5Z",
            "anthropic-ratelimit-tokens-limit": "80000",
            "anthropic-ratelimit-tokens-remaining": "79000",
            "anthropic-ratelimit-tokens-reset": "2025-01-01T01:00:30+01:00",  # 00:00:30 UTC
            "anthropic-ratelimit-input-tokens-limit": "40000",
        },
        now=NOW,
    )
    assert info is not None
    assert info.model_dump() == pytest.approx(
        {
            "requests_limit": 50,
            "requests_remaining": 49,
            "requests_reset": 1.5,
            "tokens_limit": 80_000,
            "tokens_remaining": 79_000,
            "tokens_reset": 30.0,
        }
    )


def test_anthropic_input_token_limits_stand_in_for_missing_token_limits() -> None:
    info = rate_limit_info(
        {
            "anthropic-ratelimit-input-tokens-limit": "40000",
            "anthropic-ratelimit-input-tokens-remaining": "100",
            "anthropic-ratelimit-input-tokens-reset": "2025-01-01T00:00:02Z",
        },
        now=NOW,
    )
    assert info == RateLimitInfo(tokens_limit=40_000, tokens_remaining=100, tokens_reset=2.0)


@pytest.mark.parametrize(
    ("reset", "seconds"),
    [
        ("2024-12-31T23:59:00Z", 0.0),  # already past: no wait
        ("2025-01-01T00:00:00", None),  # no time zone: whose midnight?
        ("tomorrow", None),
    ],
)
def test_rfc3339_edge_cases(reset: str, seconds: float | None) -> None:
    info = rate_limit_info({"anthropic-ratelimit-requests-reset": reset}, now=NOW)
    assert info is not None and info.requests_reset == seconds


def test_no_headers_no_info_and_unreadable_values_count_as_absent() -> None:
    assert rate_limit_info({"content-type": "application/json", "retry-after": "1"}) is None
    info = rate_limit_info(
        {"x-ratelimit-limit-requests": "lots", "x-ratelimit-remaining-requests": "nan"}
    )
    assert info == RateLimitInfo()


# --- pacing from them --------------------------------------------------------------------------


def limiter(clock: FakeClock, rpm: float | None = None, tpm: float | None = None) -> Limiter:
    return Limiter(
        concurrency=100,
        requests_per_minute=rpm,
        tokens_per_minute=tpm,
        clock=clock,
        sleep=clock.sleep,
    )


async def starts(limiter: Limiter, clock: FakeClock, n: int, tokens: int = 0) -> list[float]:
    times = []
    for _ in range(n):
        async with limiter.slot(tokens):
            times.append(clock.now)
    return times


async def test_an_unconfigured_limiter_paces_at_the_stated_limit() -> None:
    clock = FakeClock()
    paced = limiter(clock)
    assert await starts(paced, clock, 3) == [0.0, 0.0, 0.0]  # nothing known: no pacing
    paced.on_headers(RateLimitInfo(requests_limit=120))
    assert paced.paced_requests_per_minute == 120
    assert await starts(paced, clock, 3) == pytest.approx([0.0, 0.5, 1.0])


@pytest.mark.parametrize(("configured", "stated", "paced"), [(60, 120, 60), (600, 120, 120)])
async def test_the_lower_of_configured_and_stated_limits_wins(
    configured: float, stated: float, paced: float
) -> None:
    clock = FakeClock()
    both = limiter(clock, rpm=configured, tpm=configured * 100)
    both.on_headers(RateLimitInfo(requests_limit=stated, tokens_limit=stated * 100))
    assert both.paced_requests_per_minute == paced
    assert both.paced_tokens_per_minute == paced * 100
    assert both.requests_per_minute == configured  # the setting itself is kept


async def test_tokens_are_paced_at_the_stated_token_limit() -> None:
    clock = FakeClock()
    paced = limiter(clock)
    paced.on_headers(RateLimitInfo(tokens_limit=6000))
    assert await starts(paced, clock, 2, tokens=1000) == pytest.approx([0.0, 10.0])


async def test_nothing_left_holds_starts_until_the_reset() -> None:
    clock = FakeClock()
    held = limiter(clock)
    clock.now = 1.0
    held.on_headers(RateLimitInfo(requests_remaining=0, requests_reset=2.0))
    # Held until 1 + 2 s; after the reset the limit is whole again and nothing holds.
    assert await starts(held, clock, 3) == pytest.approx([3.0, 3.0, 3.0])


async def test_starts_since_the_last_reply_count_against_what_it_said_was_left() -> None:
    clock = FakeClock()
    held = limiter(clock)
    held.on_headers(RateLimitInfo(requests_remaining=2, requests_reset=5.0))
    assert await starts(held, clock, 4) == pytest.approx([0.0, 0.0, 5.0, 5.0])


async def test_with_the_limit_known_only_the_missing_part_is_waited_for() -> None:
    # The reset is when the whole limit is back: a bucket of 10 at 50/s that is empty says
    # 200 ms, but the next request's share is back in 20 ms. Waiting for the full reset at
    # every empty reply cost a run paced at the limit 5-10 % of it (benchmarks/llm_judges).
    clock = FakeClock()
    held = limiter(clock)
    clock.now = 1.0
    held.on_headers(RateLimitInfo(requests_limit=3000, requests_remaining=0, requests_reset=0.2))
    assert await starts(held, clock, 3) == pytest.approx([1.02, 1.04, 1.06])
    tokens = limiter(clock)
    tokens.on_headers(RateLimitInfo(tokens_limit=60_000, tokens_remaining=500, tokens_reset=9.0))
    assert await starts(tokens, clock, 1, tokens=1500) == pytest.approx([1.06 + 1.0])


async def test_a_request_larger_than_the_tokens_left_waits_for_the_reset() -> None:
    clock = FakeClock()
    held = limiter(clock)
    held.on_headers(RateLimitInfo(tokens_remaining=1500, tokens_reset=3.0))
    assert await starts(held, clock, 1, tokens=1000) == [0.0]
    assert await starts(held, clock, 1, tokens=1000) == [3.0]  # 500 left, 1000 needed


async def test_holds_are_capped_at_a_minute_and_need_a_reset_time() -> None:
    clock = FakeClock()
    held = limiter(clock)
    held.on_headers(RateLimitInfo(requests_remaining=0, requests_reset=86_400.0))  # a daily limit
    assert await starts(held, clock, 1) == [60.0]
    held.on_headers(RateLimitInfo(requests_remaining=0))  # when it resets is unknown
    assert await starts(held, clock, 1) == [60.0]


async def test_a_429_from_before_the_limits_were_stated_cuts_nothing() -> None:
    clock = FakeClock()
    paced = limiter(clock)
    paced.on_headers(RateLimitInfo(requests_limit=600))  # at t=0
    paced.on_rate_limited(started=0.0)  # started unpaced, before the limit was known
    assert paced.concurrency == 100 and paced.rate_limited == 1
    assert await starts(paced, clock, 2) == pytest.approx([0.0, 0.1])
    paced.on_headers(RateLimitInfo(requests_limit=600))  # the same limit again: no news
    paced.on_rate_limited(started=0.1)  # paced by the stated limit, and still refused
    assert paced.concurrency == 70
    assert await starts(paced, clock, 2) == pytest.approx([0.2, 0.2 + 0.1 / 0.7])


async def test_no_headers_change_nothing() -> None:
    clock = FakeClock()
    plain = limiter(clock, rpm=120)
    plain.on_headers(None)
    plain.on_headers(RateLimitInfo())
    assert plain.paced_requests_per_minute == 120
    assert await starts(plain, clock, 3) == pytest.approx([0.0, 0.5, 1.0])


# --- through the managed model -----------------------------------------------------------------


async def test_a_429_that_states_the_limits_paces_the_retry() -> None:
    clock = FakeClock()
    fake = FakeChatModel()
    stated = RateLimitInfo(requests_limit=60, requests_remaining=0, requests_reset=2.0)
    fake.enqueue(RateLimitError("429", status=429, retry_after=0.0, rate_limit=stated), "ok")
    model = ManagedChatModel(fake, limiter=limiter(clock), sleep=clock.sleep)
    assert (await model.complete(REQUEST)).text == "ok"
    assert model.limiter.paced_requests_per_minute == 60
    assert model.limiter.concurrency == 100  # the first 429 taught the limit; no cut
    # The retry waited for its share of the limit to come back (1 s at 60/min), not for the
    # whole limit (the 2 s reset).
    assert clock.now == pytest.approx(1.0)


class StatingModel:
    """A chat model whose replies carry the given rate-limit headers."""

    provider = "fake"
    model = "stating"

    def __init__(self, info: RateLimitInfo) -> None:
        self.info = info

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text="ok", rate_limit=self.info)


async def test_each_reply_reaches_the_limiter_and_a_cached_reply_carries_none(
    tmp_path: Path,
) -> None:
    info = RateLimitInfo(requests_limit=90, requests_remaining=89, requests_reset=0.7)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = ManagedChatModel(StatingModel(info), cache=cache)
    first = await model.complete(REQUEST)
    assert first.rate_limit == info
    assert model.limiter.paced_requests_per_minute == 90
    again = await model.complete(REQUEST)
    assert again.cached and again.rate_limit is None
    assert model.provider_calls == 1
