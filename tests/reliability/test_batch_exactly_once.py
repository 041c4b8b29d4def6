"""`--batch` pays for each request once: the intent is recorded before a batch is created, a
batch created but not recorded (a kill, a full history) is found again by its request hash on
`--resume`, and a batch's unreadable result lines cost only their own requests.

The CLI runs in a subprocess against the loopback server's simulated batch APIs
(`tests.support.batch_apis`), through the real SDKs; a full history is a SQLite trigger that
refuses the write as a full disk does ("database or disk is full").
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.runs import ENV, write_dataset
from tests.support.cli import run_vera
from tests.support.faults import judge_args, scripted
from tests.support.loopback import LoopbackServer, Reply, ok_anthropic_tool, ok_openai
from vera import RunStore
from vera.providers import ChatRequest, ManagedChatModel, Message
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._batch import BatchingChatModel, batch_journal
from vera.providers._batch_journal import BATCHES, HistoryBatchJournal
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the history's batch journal and schema"

SAMPLES = 3
KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def vera(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_vera(cwd, *args, timeout=180, **KEYS)


def setup(tmp_path: Path) -> None:
    write_dataset(tmp_path / "d.jsonl", SAMPLES)
    (tmp_path / "vera.toml").write_text("batch_window = 0.05\nbatch_poll = 0.05\n")


def eval_args(loopback: LoopbackServer, provider: Any) -> tuple[str, ...]:
    return ("eval", "-d", "d.jsonl", "--history", "h.sqlite", "--batch", "--no-cache",
            *judge_args(loopback, provider))  # fmt: skip


def run_id(history: Path) -> str:
    with closing(sqlite3.connect(history)) as db:
        [(found,)] = db.execute("SELECT id FROM runs").fetchall()
    return str(found)


def scores(path: Path) -> dict[str, float]:
    report = json.loads(path.read_text())
    return {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]}


def assert_paid_once(loopback: LoopbackServer) -> None:
    received = loopback.batches.received
    assert len(received) == len(set(received)), "a request was sent in two batches"
    assert len(received) == 2 * SAMPLES  # claims, then verdicts, for each sample


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_full_history_when_the_batch_id_is_recorded_stops_clearly_and_resume_finds_the_batch(
    loopback: LoopbackServer, tmp_path: Path, provider: str
) -> None:
    loopback.default = scripted(provider)  # type: ignore[arg-type]
    setup(tmp_path)
    history = tmp_path / "h.sqlite"
    store = RunStore(history)
    store.file.adopt(BATCHES)  # what the batch journal does when it first saves
    store.close()
    with closing(sqlite3.connect(history)) as db:  # the intent fits, the batch's id does not
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON batches WHEN NEW.batch_id NOT LIKE 'intent-%' "
            "BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END"
        )
        db.commit()

    stopped = vera(tmp_path, *eval_args(loopback, provider))
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode == 2, said
    assert "Run stopped: h.sqlite" in said and "(database or disk is full)" in said
    assert "Task exception was never retrieved" not in said and "no samples" not in said
    assert "Traceback" not in said
    assert len(loopback.batches.created) == 1  # created, and its id never recorded

    with closing(sqlite3.connect(history)) as db:
        db.execute("DROP TRIGGER full")
        db.commit()
    resumed = vera(tmp_path, "eval", "--resume", run_id(history), "--history", "h.sqlite",
                   "-o", "r.json", *judge_args(loopback, provider))  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "found by its request hash" in resumed.stderr
    assert scores(tmp_path / "r.json") == {f"s{i:02d}": 1.0 for i in range(SAMPLES)}
    assert_paid_once(loopback)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_kill_between_creating_a_batch_and_recording_it_never_pays_for_it_twice(
    loopback: LoopbackServer, tmp_path: Path, provider: str
) -> None:
    loopback.default = scripted(provider)  # type: ignore[arg-type]
    loopback.batches.create_delay = 60.0  # the batch exists; its id has not come back
    setup(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", *eval_args(loopback, provider)],
        cwd=tmp_path,
        env={**ENV, **KEYS, "HOME": str(tmp_path), "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not loopback.batches.created and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert len(loopback.batches.created) == 1
    loopback.batches.create_delay = 0.0

    history = tmp_path / "h.sqlite"
    shown = vera(tmp_path, "runs", "show", run_id(history), "--history", "h.sqlite")
    assert shown.returncode == 0, shown.stderr
    assert "Batches: 1 (1 unconfirmed)" in shown.stdout
    assert f"unconfirmed · {SAMPLES} requests · created or not" in shown.stdout
    resumed = vera(tmp_path, "eval", "--resume", run_id(history), "--history", "h.sqlite",
                   "-o", "r.json", *judge_args(loopback, provider))  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert scores(tmp_path / "r.json") == {f"s{i:02d}": 1.0 for i in range(SAMPLES)}
    assert_paid_once(loopback)
    assert len(loopback.batches.created) == 2  # the found one, and the verdicts' wave


def test_a_full_history_before_the_batch_is_created_pays_for_nothing(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted("openai")
    setup(tmp_path)
    history = tmp_path / "h.sqlite"
    store = RunStore(history)
    store.file.adopt(BATCHES)  # what the batch journal does when it first saves
    store.close()
    with closing(sqlite3.connect(history)) as db:
        db.execute(
            "CREATE TRIGGER full BEFORE INSERT ON batches "
            "BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END"
        )
        db.commit()
    stopped = vera(tmp_path, *eval_args(loopback, "openai"))
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode == 2, said
    assert "Run stopped: h.sqlite" in said and "Traceback" not in said
    assert loopback.batches.created == [] and loopback.batches.received == []


# -- unreadable result lines ------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"echo": {"type": "string"}}}


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),), json_schema=SCHEMA)


def echo(dialect: str, custom_id: str, body: Any) -> Reply:
    text = body["messages"][-1]["content"]
    if dialect == "openai":
        return ok_openai(json.dumps({"echo": text}))
    return ok_anthropic_tool({"echo": text})


def managed(loopback: LoopbackServer, dialect: str) -> ManagedChatModel:
    inner: Any
    if dialect == "openai":
        inner = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=loopback.openai_url)
    else:
        inner = AnthropicChatModel("claude-haiku-4-5", api_key="k", base_url=loopback.url)
    retry = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.01)
    return ManagedChatModel(BatchingChatModel(inner, window=0.05, poll=0.01), retry=retry)


def broken_first_batch(lines: list[str]) -> list[str]:
    """Line 1 is good, then repeated with another answer after it (the first must win);
    line 2 is not JSON; line 3 lost its custom_id; line 4 has its id but not the API's
    shape; line 5 is good, then repeated broken (the broken one must not win)."""
    one, _, three, four, five = (json.loads(x) for x in lines)
    other = lines[0].replace("one", "eno")  # the same id, answered otherwise
    assert other != lines[0]
    del three["custom_id"]
    four_bad = {"custom_id": four["custom_id"], "response": {"status_code": 200, "body": [1]}}
    four_bad |= {"result": {"type": "succeeded", "message": {"kvlistValue": [1]}}}
    five_bad = {"custom_id": five["custom_id"], "response": 7, "result": 7}
    return [json.dumps(one), other, "{not json, " + lines[1][:20],
            json.dumps(three), json.dumps(four_bad), json.dumps(five), json.dumps(five_bad),
            '{"custom_id": "x", "n": NaN}']  # fmt: skip


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_unreadable_result_lines_cost_only_their_requests_and_are_reported_clearly(
    loopback: LoopbackServer, dialect: str
) -> None:
    loopback.batches.answer = echo
    served: list[int] = []

    def once(lines: list[str]) -> list[str]:
        served.append(len(lines))
        return broken_first_batch(lines) if len(served) == 1 else lines

    loopback.batches.mangle = once
    model = managed(loopback, dialect)
    said: list[str] = []
    texts = ["one", "two", "three", "four", "five"]

    async def ask() -> list[Any]:
        with batch_journal(HistoryBatchJournal(None, None, said.append)):
            replies = await asyncio.gather(*(model.complete(request(t)) for t in texts))
        return [r.data["echo"] if r.data else None for r in replies]

    assert asyncio.run(ask()) == texts
    received = loopback.batches.received
    first, second = received[:5], received[5:]
    # Only the three requests whose lines were unreadable went again, in one more batch.
    assert sorted(second) == sorted(first[1:4]) and len(loopback.batches.created) == 2
    [problem] = [line for line in said if "unreadable result line" in line]
    assert "5 unreadable result line(s), their requests are sent again" in problem
    assert "line 3: not JSON" in problem and "line 4: no custom_id" in problem
    assert "line 5 (custom_id" in problem and "; and 2 more" in problem
    assert "AttributeError" not in " ".join(said) and "validation error" not in " ".join(said)


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_a_batch_list_that_cannot_be_read_sends_the_requests_again_and_says_so(
    loopback: LoopbackServer, dialect: str, tmp_path: Path
) -> None:
    loopback.batches.answer = echo
    loopback.batches.create_delay = 2.0
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = "20260101-000000-abcdef"
    store.file.execute(
        "INSERT INTO runs (id, created, dataset, options, status) VALUES (?, 0, 'd', '{}', "
        "'running')",
        (run_id,),
    )
    texts = ["a", "b"]

    async def killed() -> None:  # between the create and its reply: only the intent is kept
        model = managed(loopback, dialect)
        with batch_journal(HistoryBatchJournal(store.file, run_id)):
            tasks = [asyncio.ensure_future(model.complete(request(t))) for t in texts]
            while not loopback.batches.created:
                await asyncio.sleep(0.01)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(killed())
    assert store.batches(run_id) == [] and len(store.batches(run_id, intents=True)) == 1
    loopback.batches.create_delay = 0.0
    loopback.batches.refuse_list = 404
    said: list[str] = []

    async def resumed() -> list[Any]:
        model = managed(loopback, dialect)
        with batch_journal(HistoryBatchJournal(store.file, run_id, said.append)):
            replies = await asyncio.gather(*(model.complete(request(t)) for t in texts))
        return [r.data["echo"] if r.data else None for r in replies]

    assert asyncio.run(resumed()) == texts
    [warning] = [line for line in said if "could not list" in line]
    assert "2 request(s) are sent again: if that batch exists, cancel it" in warning
    assert len(loopback.batches.received) == 4  # paid twice, and said so
    store.close()
