"""`BatchingChatModel`'s gathering, with an explicit fake batch backend (the real APIs are
tested over HTTP in tests/integration/test_batch_http.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from vera.providers import ChatRequest, ChatResponse, Message, Price, PriceTable, Usage
from vera.providers._batch import BatchingChatModel, BatchResults, BatchStatus, Unanswered
from vera.providers._cost import CostLedger
from vera.testing import FakeChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"


class FakeBackend:
    """Answers each request with its prompt once the batch was polled `polls` times."""

    def __init__(self, polls: int = 1) -> None:
        self.polls = polls
        self.batches: dict[str, list[tuple[str, ChatRequest]]] = {}
        self.looked: dict[str, int] = {}

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], tag: str) -> str:
        batch_id = f"b{len(self.batches)}"
        self.batches[batch_id] = list(items)
        self.looked[batch_id] = 0
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        self.looked[batch_id] += 1
        ended = self.looked[batch_id] > self.polls
        return BatchStatus("ended" if ended else "in_progress", ended)

    async def find(self, tag: str, since: float, count: int) -> list[str]:
        return []  # no run of these tests is resumed

    async def results(self, batch_id: str) -> BatchResults:
        found = {key: r.messages[-1].content for key, r in self.batches[batch_id]}
        return BatchResults(batch_id, found)

    def response(self, request: ChatRequest, outcome: Any) -> ChatResponse:
        return ChatResponse(text=str(outcome))

    def succeeded(self, outcome: Any) -> bool:
        return not isinstance(outcome, Unanswered)


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


def model(backend: FakeBackend, **options: Any) -> BatchingChatModel:
    return BatchingChatModel(FakeChatModel(), backend, window=0.01, poll=0.001, **options)


def test_requests_in_flight_go_in_one_batch_and_a_repeated_one_is_sent_once() -> None:
    backend = FakeBackend(polls=3)
    batching = model(backend)

    async def go() -> list[str]:
        texts = ["a", "b", "a", "c"]
        replies = await asyncio.gather(*(batching.complete(ask(t)) for t in texts))
        return [r.text for r in replies]

    assert asyncio.run(go()) == ["a", "b", "a", "c"]
    assert [len(items) for items in backend.batches.values()] == [3]
    assert batching._in_flight == {}  # answered requests are not kept


def test_a_full_batch_is_submitted_without_waiting_for_the_window() -> None:
    backend = FakeBackend()
    batching = model(backend, max_size=2)

    async def go() -> None:
        await asyncio.gather(*(batching.complete(ask(t)) for t in "abcde"))

    asyncio.run(go())
    assert sorted(len(items) for items in backend.batches.values()) == [1, 2, 2]


def test_later_waves_go_in_later_batches() -> None:
    backend = FakeBackend()
    batching = model(backend)

    async def sample(text: str) -> str:
        first = await batching.complete(ask(text))
        second = await batching.complete(ask(first.text + "!"))
        return second.text

    async def go() -> list[str]:
        return list(await asyncio.gather(*(sample(t) for t in "xyz")))

    assert asyncio.run(go()) == ["x!", "y!", "z!"]
    assert [len(items) for items in backend.batches.values()] == [3, 3]


def test_a_batch_ledger_prices_every_call_at_the_providers_batch_discount() -> None:
    table = PriceTable(
        {"openai:m": Price(input=1.0, output=4.0, cached_input=0.5, batch_discount=0.5)}
    )
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    interactive = CostLedger(table).record("openai", "m", usage, cached=False)
    batched = CostLedger(table, batch=True).record("openai", "m", usage, cached=False)
    assert (interactive, batched) == (5.0, 2.5)


def test_window_and_poll_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        BatchingChatModel(FakeChatModel(), FakeBackend(), window=0)


def test_a_batch_is_submitted_before_its_text_passes_the_size_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("vera.providers._batch.MAX_BATCH_BYTES", 2_500)
    backend = FakeBackend()
    batching = model(backend)

    async def go() -> None:
        await asyncio.gather(*(batching.complete(ask(t * 1_000)) for t in "abcde"))

    asyncio.run(go())
    # About 1,200 bytes a request: two fill a batch, the fifth waits for the window.
    assert sorted(len(items) for items in backend.batches.values()) == [1, 2, 2]
