"""`--batch`: the OpenAI Batch API and Anthropic Message Batches through the real SDKs, over
real HTTP to the loopback server's batch endpoints (`tests.support.loopback.BatchApis`).

Submit, poll, results; a request that failed in its batch goes in a later one; an expired
batch loses nothing; a run killed while its batches are pending takes their results when
resumed, and no request reaches the server twice.
"""

from __future__ import annotations

import asyncio
import sqlite3
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Reply, error, ok_anthropic_tool, ok_openai
from tests.support.scripted import GeneratorScript

import vera
from vera import ConfigError, RunStore, estimate_plan, plan_evaluation, run_evaluation
from vera.judges import JudgeOptions
from vera.judges._registry import create_managed_model
from vera.providers import BadRequestError, ChatRequest, ManagedChatModel, Message
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._batch import BatchingChatModel, batch_journal
from vera.providers._batch_journal import HistoryBatchJournal
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the history's batch journal and schema"

SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}}


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),), json_schema=SCHEMA)


def echo(dialect: str, custom_id: str, body: Any) -> Reply:
    """Each request answered with its own prompt, so a reply shows which request it answers."""
    text = body["messages"][-1]["content"]
    if dialect == "openai":
        return ok_openai(f'{{"echo": "{text}"}}')
    return ok_anthropic_tool({"echo": text})


def batching(loopback: LoopbackServer, dialect: str, **options: Any) -> ManagedChatModel:
    inner: Any
    if dialect == "openai":
        inner = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=loopback.openai_url)
    else:
        inner = AnthropicChatModel("claude-haiku-4-5", api_key="k", base_url=loopback.url)
    model = BatchingChatModel(inner, window=0.05, poll=0.01, **options)
    retry = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.01)
    return ManagedChatModel(model, retry=retry, timeout=60)


async def ask_all(model: ManagedChatModel, texts: list[str]) -> list[Any]:
    replies = await asyncio.gather(*(model.complete(request(t)) for t in texts))
    return [r.data["echo"] if r.data else None for r in replies]


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_requests_in_flight_share_one_batch_and_each_gets_its_own_reply(
    loopback: LoopbackServer, dialect: str
) -> None:
    loopback.batches.answer = echo
    loopback.batches.polls_to_end = 2
    model = batching(loopback, dialect)

    texts = [f"question {i}" for i in range(5)]
    assert asyncio.run(ask_all(model, texts)) == texts

    assert len(loopback.batches.created) == 1
    assert len(loopback.batches.received) == 5
    # Nothing went through the interactive endpoint.
    chat = [r for r in loopback.requests if r.path.endswith(("/chat/completions", "/messages"))]
    assert chat == []
    polls = [r for r in loopback.requests if r.method == "GET" and "batches/" in r.path]
    assert len(polls) >= 3  # in progress twice, then ended
    assert model.ledger.total.calls == 5


def test_the_batch_line_is_the_interactive_request(loopback: LoopbackServer) -> None:
    loopback.batches.answer = echo
    model = batching(loopback, "openai")
    asyncio.run(ask_all(model, ["hello"]))
    upload = next(r for r in loopback.requests if r.path == "/v1/files")
    assert b'"url": "/v1/chat/completions"' in upload.raw
    assert b'"response_format": {"type": "json_schema"' in upload.raw
    assert b'"max_tokens": 2048' in upload.raw


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_request_that_failed_in_its_batch_goes_in_the_next_one(
    loopback: LoopbackServer, dialect: str
) -> None:
    failed: list[str] = []

    def flaky(d: str, custom_id: str, body: Any) -> Reply:
        if "two" in body["messages"][-1]["content"] and not failed:
            failed.append(custom_id)
            return error(500)
        return echo(d, custom_id, body)

    loopback.batches.answer = flaky
    model = batching(loopback, dialect)
    assert asyncio.run(ask_all(model, ["one", "two", "three"])) == ["one", "two", "three"]
    assert len(loopback.batches.created) == 2
    # The second batch held the failed request alone.
    assert loopback.batches.received[3:] == failed


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_bad_request_in_a_batch_fails_alone_and_is_not_resent(
    loopback: LoopbackServer, dialect: str
) -> None:
    def refuse_two(d: str, custom_id: str, body: Any) -> Reply:
        if "two" in body["messages"][-1]["content"]:
            return error(400)
        return echo(d, custom_id, body)

    loopback.batches.answer = refuse_two
    model = batching(loopback, dialect)

    async def go() -> list[Any]:
        return await asyncio.gather(
            *(model.complete(request(t)) for t in ["one", "two"]), return_exceptions=True
        )

    one, two = asyncio.run(go())
    assert not isinstance(one, BaseException) and one.data == {"echo": "one"}
    assert isinstance(two, BadRequestError)
    assert len(loopback.batches.created) == 1


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_an_expired_batch_loses_nothing_its_unanswered_requests_are_sent_again(
    loopback: LoopbackServer, dialect: str
) -> None:
    loopback.batches.answer = echo
    loopback.batches.expire_next(answered=1)
    model = batching(loopback, dialect)
    texts = ["a", "b", "c"]
    assert asyncio.run(ask_all(model, texts)) == texts
    assert len(loopback.batches.created) == 2
    assert len(loopback.batches.received) == 3 + 2  # the two unanswered, once more


def test_unanswered_requests_go_directly_with_retry_direct(loopback: LoopbackServer) -> None:
    loopback.batches.answer = echo
    loopback.batches.expire_next(answered=0)
    loopback.default = lambda r: echo("openai", "", r.json)
    model = batching(loopback, "openai", retry="direct")
    assert asyncio.run(ask_all(model, ["a", "b"])) == ["a", "b"]
    assert len(loopback.batches.created) == 1
    chat = [r for r in loopback.requests if r.path.endswith("/chat/completions")]
    assert len(chat) == 2


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_killed_run_resumed_takes_its_pending_batches_results_without_resending(
    loopback: LoopbackServer, dialect: str, tmp_path: Path
) -> None:
    loopback.batches.answer = echo
    loopback.batches.hold = True
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = "20260101-000000-abcdef"
    store.file.execute(
        "INSERT INTO runs (id, created, dataset, options, status) VALUES (?, 0, 'd', '{}', "
        "'running')",
        (run_id,),
    )
    texts = ["a", "b", "c"]

    async def killed() -> None:
        model = batching(loopback, dialect)
        with batch_journal(HistoryBatchJournal(store.file, run_id)):
            tasks = [asyncio.ensure_future(model.complete(request(t))) for t in texts]
            while not store.batches(run_id) or store.batches(run_id)[0].status == "submitted":
                await asyncio.sleep(0.01)
            for task in tasks:  # the process dies: nothing of it survives
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(killed())
    [pending] = store.batches(run_id)
    assert pending.status == "in_progress" and len(pending.keys) == 3

    loopback.batches.hold = False

    async def resumed() -> list[Any]:
        model = batching(loopback, dialect)  # a new process: a new model
        with batch_journal(HistoryBatchJournal(store.file, run_id)):
            return await ask_all(model, [*texts, "d"])

    assert asyncio.run(resumed()) == [*texts, "d"]
    received = loopback.batches.received
    assert len(received) == len(set(received)) == 4
    assert len(loopback.batches.created) == 2  # the pending one, and one for "d"
    statuses = {b.batch_id: b.status for b in store.batches(run_id)}
    assert statuses[pending.batch_id] in ("completed", "ended")
    store.close()


def test_batch_with_a_provider_without_a_batch_api_names_those_with_one() -> None:
    with pytest.raises(ConfigError, match=r"openai or anthropic.*drop --batch"):
        create_managed_model("litellm:gpt-4o-mini", JudgeOptions(batch=True, cache=False))


def test_a_batched_call_is_charged_half(loopback: LoopbackServer) -> None:
    loopback.batches.answer = lambda d, c, b: ok_openai(
        '{"echo": "x"}', prompt_tokens=1_000_000, completion_tokens=0
    )
    options = JudgeOptions(
        batch=True, cache=False, batch_window=0.05, batch_poll=0.01, judge_base_url=None
    )
    model = create_managed_model("openai:gpt-4o-mini", options, base_url=loopback.openai_url)
    asyncio.run(model.complete(request("x")))
    assert model.ledger.total.cost == pytest.approx(0.15 / 2)


def test_the_dry_run_prices_a_batched_run_at_half(loopback: LoopbackServer) -> None:
    samples = [{"id": "a", "query": "q", "response": "It is 5. It is red.", "contexts": ["c"]}]
    costs = []
    for batch in (False, True):
        plan, bindings = plan_evaluation(
            samples, judge="openai:gpt-4o-mini", judge_base_url=loopback.openai_url, batch=batch
        )
        estimate = estimate_plan(plan, bindings)
        assert estimate.batch is batch and estimate.cost_usd
        costs.append(estimate.cost_usd)
    assert costs[1] == pytest.approx(costs[0] / 2)
    assert loopback.request_count == 0


def test_batch_on_a_run_that_makes_no_provider_call_is_refused() -> None:
    samples = [{"id": "a", "query": "q", "response": "It is 5.", "contexts": ["It is 5."]}]
    with pytest.raises(ConfigError, match="makes none"):
        run_evaluation(samples, judge="offline", batch=True)


def test_a_batch_cancelled_at_the_provider_loses_nothing(loopback: LoopbackServer) -> None:
    loopback.batches.answer = echo
    loopback.batches.hold = True
    model = batching(loopback, "openai")

    async def go() -> list[Any]:
        asking = asyncio.ensure_future(ask_all(model, ["a", "b"]))
        while not loopback.batches.created:
            await asyncio.sleep(0.01)
        # Someone cancels the batch in the provider's console; later batches may end.
        loopback.batches.hold = False
        cancel = urllib.request.Request(
            f"{loopback.openai_url}/batches/{loopback.batches.created[0]}/cancel", method="POST"
        )
        await asyncio.to_thread(urllib.request.urlopen, cancel)
        return await asyncio.wait_for(asking, 30)

    assert asyncio.run(go()) == ["a", "b"]
    assert len(loopback.batches.created) == 2
    assert len(loopback.batches.received) == 4  # each once more, after the cancel


def test_batch_with_the_ray_executor_is_refused_before_it_starts() -> None:
    samples = [{"id": "a", "query": "q", "response": "It is 5.", "contexts": ["It is 5."]}]
    with pytest.raises(ConfigError, match="local executor"):
        run_evaluation(samples, judge="openai:gpt-4o-mini", batch=True, executor="ray")


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_failed_look_at_a_pending_batch_is_retried_not_the_batch(
    loopback: LoopbackServer, dialect: str
) -> None:
    loopback.batches.answer = echo
    loopback.batches.failing_polls = 3
    model = batching(loopback, dialect)
    assert asyncio.run(ask_all(model, ["a", "b"])) == ["a", "b"]
    assert len(loopback.batches.created) == 1  # the batch was waited for, not resubmitted
    assert len(loopback.batches.received) == 2


def test_a_history_from_before_batches_reads_as_having_none(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
        db.execute("PRAGMA user_version = 2")
        db.commit()
    reader = RunStore(path, read_only=True)
    assert reader.batches("any") == []
    reader.close()


def test_generator_calls_are_batched_too(loopback: LoopbackServer) -> None:
    loopback.default = GeneratorScript(invented=None)
    report = vera.evaluate(
        "technical",
        ["hallucination_rate"],
        "offline",
        pipeline="naive-rag",
        generator="openai:gpt-4o-mini",
        generator_base_url=loopback.openai_url,
        batch=True,
        batch_window=0.05,
        batch_poll=0.01,
        cache=False,
        quick=True,
    )
    assert report.counts.scored == 10
    assert len(loopback.batches.received) == 10  # one generation per sample, in one batch
    assert len(loopback.batches.created) == 1
    assert not [r for r in loopback.requests if r.path.endswith("/chat/completions")]
