"""The one wrapper for retries, limits, cache and cost, driven through FakeChatModel.

FakeChatModel is a scripted fake provider; the sleeps are recorded instead of waited, so the
backoff and pacing arithmetic can be asserted exactly.
"""

import asyncio
import random
from pathlib import Path

import pytest

from vera.providers import (
    AuthenticationError,
    ChatRequest,
    ManagedChatModel,
    Message,
    Price,
    PriceTable,
    RateLimitError,
    RetryableProviderError,
    Usage,
)
from vera.providers._cache import ResponseCache, cache_key
from vera.providers._cost import BudgetExceededError, CostLedger, merge_summaries
from vera.providers._limits import Limiter
from vera.providers._retry import RetryPolicy, call_with_retries
from vera.testing import FakeChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

REQUEST = ChatRequest(messages=(Message(role="user", content="Is the sky blue?"),))


class RecordedSleep:
    """Records requested sleeps and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_retries_retryable_errors_then_succeeds() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        RetryableProviderError("500", status=500),
        RateLimitError("429", status=429, retry_after=7.0),
        "blue",
    )
    sleep = RecordedSleep()
    model = ManagedChatModel(fake, sleep=sleep)
    response = await model.complete(REQUEST)
    assert response.text == "blue"
    assert len(fake.requests) == 3
    assert len(sleep.delays) >= 2
    assert 7.0 in sleep.delays  # Retry-After is honoured
    assert model.limiter.rate_limited == 1


async def test_non_retryable_errors_fail_fast() -> None:
    fake = FakeChatModel()
    fake.enqueue(AuthenticationError("bad key", status=401), "never reached")
    model = ManagedChatModel(fake, sleep=RecordedSleep())
    with pytest.raises(AuthenticationError):
        await model.complete(REQUEST)
    assert len(fake.requests) == 1


async def test_gives_up_after_max_attempts() -> None:
    fake = FakeChatModel()
    fake.enqueue(*[RetryableProviderError("503", status=503) for _ in range(3)])
    model = ManagedChatModel(fake, retry=RetryPolicy(max_attempts=3), sleep=RecordedSleep())
    with pytest.raises(RetryableProviderError):
        await model.complete(REQUEST)
    assert len(fake.requests) == 3


def test_backoff_is_exponential_capped_and_jittered() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0)
    rng = random.Random(0)
    error = RetryableProviderError("x")
    for attempt in range(8):
        delays = [policy.delay(attempt, error, rng) for _ in range(200)]
        assert all(0 <= d <= min(10.0, 2**attempt) for d in delays)
        assert len(set(delays)) > 100  # jittered, not a fixed schedule
    assert policy.delay(0, RateLimitError("x", retry_after=99.0), rng) == 10.0


async def test_call_with_retries_reports_each_retry() -> None:
    seen: list[int | None] = []
    attempts = iter(
        [RetryableProviderError("a", status=502), RetryableProviderError("b", status=504)]
    )

    async def call() -> str:
        error = next(attempts, None)
        if error:
            raise error
        return "ok"

    sleep = RecordedSleep()
    result = await call_with_retries(
        call, RetryPolicy(), sleep=sleep, on_retry=lambda e: seen.append(e.status)
    )
    assert result == "ok" and seen == [502, 504]


async def test_cache_second_run_makes_zero_calls(tmp_path: Path) -> None:
    fake = FakeChatModel()
    fake.enqueue({"verdict": "yes"})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    ledger = CostLedger()
    model = ManagedChatModel(fake, cache=cache, ledger=ledger, sleep=RecordedSleep())
    first = await model.complete(REQUEST)
    # A new wrapper over the same file: a later run.
    again = ManagedChatModel(fake, cache=ResponseCache(tmp_path / "cache.sqlite"), ledger=ledger)
    second = await again.complete(REQUEST)
    assert len(fake.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.data == {"verdict": "yes"}
    assert ledger.total.calls == 2 and ledger.total.cached_calls == 1


def test_cache_key_covers_what_changes_output_and_nothing_secret() -> None:
    base = cache_key("openai", "m", REQUEST)
    assert base == cache_key("openai", "m", REQUEST.model_copy())
    variants = [
        REQUEST.model_copy(update={"temperature": 0.7}),
        REQUEST.model_copy(update={"prompt_version": "v2"}),
        REQUEST.model_copy(update={"json_schema": {"type": "object"}}),
        REQUEST.model_copy(update={"max_tokens": 10}),
    ]
    assert len({cache_key("openai", "m", r) for r in variants} | {base}) == 5
    assert cache_key("openai", "other", REQUEST) != base
    assert cache_key("anthropic", "m", REQUEST) != base


async def test_cost_accounting_and_budget_stop() -> None:
    prices = PriceTable({"fake:fake-model": Price(input=1.0, output=2.0)})
    ledger = CostLedger(prices, max_cost=0.0005)
    fake = FakeChatModel()
    fake.enqueue("a", "b", "c", prompt_tokens=100, completion_tokens=100)
    model = ManagedChatModel(fake, ledger=ledger, sleep=RecordedSleep())
    await model.complete(REQUEST, label="faithfulness")  # 100*1 + 100*2 = 300 per 1e6 = $0.0003
    assert ledger.total.cost == pytest.approx(0.0003)
    await model.complete(REQUEST, label="faithfulness")  # now $0.0006, over budget
    with pytest.raises(BudgetExceededError, match="budget"):
        await model.complete(REQUEST)
    assert len(fake.requests) == 2
    summary = ledger.summary()
    assert summary["by_label"]["faithfulness"]["calls"] == 2  # type: ignore[index]
    assert summary["cost_usd"] == pytest.approx(0.0006)


def test_prices_match_dated_model_names_and_report_unpriced() -> None:
    table = PriceTable()
    assert table.lookup("openai", "gpt-4o-mini-2024-07-18") == table.prices["openai:gpt-4o-mini"]
    assert table.lookup("openai", "gpt-4o-2024-08-06") == table.prices["openai:gpt-4o"]
    ledger = CostLedger(table)
    ledger.record("vllm", "llama-3-8b", Usage(prompt_tokens=5), cached=False)
    assert ledger.summary()["unpriced_models"] == ["vllm:llama-3-8b"]


def test_ledgers_of_several_workers_merge_into_one_summary() -> None:
    one, two = CostLedger(), CostLedger()
    one.record("openai", "gpt-4o-mini", Usage(prompt_tokens=1000), cached=False, label="v")
    two.record("openai", "gpt-4o-mini", Usage(prompt_tokens=3000), cached=False, label="v")
    two.record("openai", "gpt-4o-mini", Usage(prompt_tokens=3000), cached=True, label="e")
    two.record("vllm", "llama", Usage(completion_tokens=7), cached=False, label="e")
    together = CostLedger()
    for args in [(1000, False, "v"), (3000, False, "v"), (3000, True, "e")]:
        usage = Usage(prompt_tokens=args[0])
        together.record("openai", "gpt-4o-mini", usage, cached=args[1], label=args[2])
    together.record("vllm", "llama", Usage(completion_tokens=7), cached=False, label="e")
    assert merge_summaries([one.summary(), two.summary()]) == together.summary()


async def test_concurrency_limit_holds_and_is_cut_on_429() -> None:
    limiter = Limiter(concurrency=4)
    active = peak = 0

    async def job() -> None:
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.005)
            active -= 1

    await asyncio.gather(*(job() for _ in range(20)))
    assert peak == 4
    limiter.on_rate_limited()
    assert limiter.concurrency == 2
    for _ in range(50):
        limiter.on_success()
    assert limiter.concurrency == 4


async def test_a_waiter_cancelled_after_its_wake_up_passes_the_free_slot_on() -> None:
    # A freed slot wakes one waiter, not all (64 samples queue for 16 slots: waking each
    # cost a task switch per call); a woken waiter that is cancelled before it runs (its
    # sample timed out) must pass the wake-up on, or the slot stays free while others wait.
    limiter = Limiter(concurrency=1)
    order: list[str] = []
    release = asyncio.Event()

    async def waiter(name: str) -> None:
        async with limiter.slot():
            order.append(name)

    async def holder() -> None:
        async with limiter.slot():
            await release.wait()
        woken.cancel()  # told of the free slot, not yet run

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    woken = asyncio.create_task(waiter("woken"))
    other = asyncio.create_task(waiter("other"))
    await asyncio.sleep(0)
    release.set()
    await first
    await asyncio.wait_for(other, timeout=2)
    assert order == ["other"]
    assert woken.cancelled()


async def test_a_raised_limit_fills_every_free_slot_when_a_call_ends() -> None:
    limiter = Limiter(concurrency=4)
    limiter.on_rate_limited()  # cut to 2
    gates = [asyncio.Event() for _ in range(8)]
    active = 0

    async def job(i: int) -> None:
        nonlocal active
        async with limiter.slot():
            active += 1
            await gates[i].wait()
            active -= 1

    jobs = [asyncio.create_task(job(i)) for i in range(8)]
    await asyncio.sleep(0.01)
    assert active == 2
    for _ in range(50):
        limiter.on_success()  # back to 4: the next call to end frees three slots
    gates[0].set()
    await jobs[0]
    await asyncio.sleep(0.01)
    assert active == 4
    for gate in gates:
        gate.set()
    await asyncio.gather(*jobs)


class FakeClock:
    """A fake clock for the limiter: sleeping advances it at once, and starts are recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.late = 0.0  # how much later than asked a sleeper wakes

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds + self.late


async def test_requests_per_minute_are_paced_evenly() -> None:
    clock = FakeClock()
    limiter = Limiter(concurrency=100, requests_per_minute=120, clock=clock, sleep=clock.sleep)
    starts = []
    for _ in range(5):
        async with limiter.slot():
            starts.append(clock.now)
    # 120/min = one start every 0.5 s.
    assert starts == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0])
    limiter.on_rate_limited()  # pace cut to 70 %: the next gap is 0.5 / 0.7 s
    for _ in range(2):
        async with limiter.slot():
            starts.append(clock.now)
    # The cut applies from the next claim; the limiter alone sees no success after it.
    assert starts[5:] == pytest.approx([2.5, 2.5 + 0.5 / 0.7])


async def test_a_stalled_loop_does_not_release_a_burst() -> None:
    clock = FakeClock()
    limiter = Limiter(concurrency=100, requests_per_minute=600, clock=clock, sleep=clock.sleep)
    async with limiter.slot():
        pass
    clock.now += 5.0  # the event loop was blocked for 5 s (an import, a slow callback)
    starts = []
    for _ in range(3):
        async with limiter.slot():
            starts.append(clock.now)
    # At most one extra start, then one per 0.1 s again: not the 50 turns that passed.
    assert starts == pytest.approx([5.0, 5.0, 5.1])


async def test_waking_a_little_late_does_not_slow_the_pace() -> None:
    clock = FakeClock()
    limiter = Limiter(concurrency=100, requests_per_minute=600, clock=clock, sleep=clock.sleep)
    starts = []
    for late in (0.0, 0.02, 0.0):
        clock.late = late  # the event loop ran this request 20 ms after its turn
        async with limiter.slot():
            starts.append(clock.now)
    assert starts == pytest.approx([0.0, 0.12, 0.2])


async def test_only_one_cut_per_round_trip() -> None:
    clock = FakeClock()
    limiter = Limiter(concurrency=16, clock=clock, sleep=clock.sleep)
    clock.now = 10.0
    for _ in range(6):  # six requests of one burst, all started at t=10, all refused
        limiter.on_rate_limited(started=10.0)
    assert limiter.concurrency == 11 and limiter.rate_limited == 6  # 16 * 0.7, once
    limiter.on_rate_limited(started=10.5)  # started after the cut: new congestion
    assert limiter.concurrency == 7  # 11.2 * 0.7


async def test_tokens_per_minute_pacing_scales_with_request_size() -> None:
    clock = FakeClock()
    limiter = Limiter(tokens_per_minute=6000, clock=clock, sleep=clock.sleep)
    starts = []
    async with limiter.slot(tokens=1000):
        starts.append(clock.now)
    async with limiter.slot(tokens=100):
        starts.append(clock.now)
    assert starts == pytest.approx([0.0, 10.0])  # 1000 tokens at 6000/min = 10 s
