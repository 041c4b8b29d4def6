"""Workers, judge replies and small leaks (docs/reliability.md, the section of that name).

Fail-fast across Ray workers and SIGINT/SIGTERM under Ray are real `vera eval --executor ray`
runs (each starts its own local Ray, which is slow on a small machine: two tests only). The
reply faults are real SDKs talking to the loopback server on 127.0.0.1, which serves what a
proxy or a broken server would: an HTML page, a body cut in half.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.reliability.runs import ENV, wait_for_results, write_dataset
from tests.support import faults
from tests.support.cli import run_vera
from tests.support.extras import needs_extra, without
from tests.support.faults import Handler, Provider, judge_args
from tests.support.loopback import LoopbackServer, Recorded, Reply, error, ok_openai
from tests.support.testset_script import TestsetScript
from vera import Claim, JudgeResponseError, Settings, Verdict, generate_testset
from vera._generate import REASONS
from vera._run import Quota, QuotaClient
from vera._types import mask_secret
from vera.judges import LLMJudge
from vera.judges._registry import create_managed_model
from vera.providers import (
    AuthenticationError,
    ChatRequest,
    ManagedChatModel,
    Message,
    ProviderConnectionError,
    ProviderUnavailableError,
    RetryableProviderError,
)
from vera.providers._base import UnreadableReplyError
from vera.providers._retry import RetryPolicy
from vera.testing import FakeChatModel

WHITEBOX = "the generator's own parts"

SAMPLES = 12
FLAGS = ("--no-history", "--no-cache", "--retries", "2", "--timeout", "0.5", "--concurrency", "4")
RAY_FLAGS = ("--executor", "ray", "--ray-workers", "2")
HELLO = ChatRequest(messages=(Message(role="user", content="hi"),), json_schema={"type": "object"})
# The source tree under test, where it is not the installed one (a worktree).
SOURCE = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}


def _eval(
    tmp_path: Path, server: LoopbackServer, *args: str, provider: Provider = "openai"
) -> subprocess.CompletedProcess[str]:
    write_dataset(tmp_path / "data.jsonl", SAMPLES)
    env = {**ENV, **SOURCE, "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "test"}
    return subprocess.run(
        [sys.executable, "-m", "vera", "eval", "-d", "data.jsonl", *judge_args(server, provider),
         *FLAGS, "-o", "report.json", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _report(tmp_path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())
    ids = sorted(sample["id"] for sample in report["samples"])
    assert ids == [f"s{i:02d}" for i in range(SAMPLES)]  # nothing lost, none twice
    return report


# --- fail-fast across workers -----------------------------------------------------------------


@needs_extra("ray", "ray")
def test_a_dead_provider_stops_every_ray_worker_as_it_stops_a_local_run(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.default = faults.server_error()
        result = _eval(tmp_path, server, *RAY_FLAGS)
    assert result.returncode == 2, result.stderr  # was 3: every worker counted its own 8
    assert "the first 8 calls to openai:loopback-model all failed" in result.stderr
    assert "Traceback" not in result.stderr
    report = _report(tmp_path)
    assert report["stopped"] is not None
    assert report["counts"]["scored"] == 0 and report["counts"]["skipped"] > 0


@needs_extra("ray", "ray")
@pytest.mark.parametrize("how", ["SIGTERM"])  # SIGTERM is turned into SIGINT: one path
def test_a_signal_under_ray_ends_quietly_with_the_resume_hint(tmp_path: Path, how: str) -> None:
    write_dataset(tmp_path / "data.jsonl", 40)
    history = tmp_path / "runs.sqlite"
    with LoopbackServer() as server:
        server.default = faults.hang(0.3)  # slow enough to be caught in the middle
        with open(tmp_path / "err", "wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "vera", "eval", "-d", "data.jsonl", *judge_args(server),
                 "--history", str(history), "--no-cache", "--timeout", "5", "--concurrency", "2",
                 *RAY_FLAGS],
                cwd=tmp_path, env={**ENV, **SOURCE, "HOME": str(tmp_path)},
                stdout=subprocess.DEVNULL, stderr=err,
            )  # fmt: skip
        try:
            wait_for_results(history, 3, process, timeout=180)
            process.send_signal(getattr(signal, how))
            code = process.wait(60)
        finally:
            process.kill()
    stderr = (tmp_path / "err").read_text()
    assert code == 130, stderr  # was -6 (SIGABRT) for SIGTERM, after Ray's stack dump
    last = stderr.strip().splitlines()[-1]
    assert "finish it with: vera eval --resume" in last, stderr  # the hint is the last word
    for noise in ("ActorDiedError", "never retrieved", "Traceback", "SIGTERM received"):
        assert noise not in stderr


class _Handle:
    """A Ray actor handle's shape over a local object, for the quota without Ray:
    `handle.method.remote(...)` schedules the call and returns its future."""

    def __init__(self, target: object) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)

        async def call(*args: Any) -> Any:
            result = method(*args)
            return await result if inspect.isawaitable(result) else result

        return SimpleNamespace(remote=lambda *args: asyncio.ensure_future(call(*args)))


class _DeadModel:
    """An explicit fake chat model whose every call fails with a 500."""

    provider, model = "fake", "dead"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest) -> Any:
        self.calls += 1
        raise RetryableProviderError("fake returned HTTP 500", status=500)


async def test_the_quota_counts_failed_calls_over_every_worker() -> None:
    settings = Settings(fail_fast=4)
    quota = _Handle(Quota(None, None, settings.fail_fast))
    workers = []
    for _ in range(2):
        limiter, ledger, health = QuotaClient(quota, settings)("fake:dead", settings)
        inner = _DeadModel()
        model = ManagedChatModel(
            inner, retry=RetryPolicy(max_attempts=1), limiter=limiter, ledger=ledger, health=health
        )
        workers.append((model, inner))
    (first, first_inner), (second, _) = workers
    for model in (first, second, first):  # 3 failures over two workers: not yet decided
        with pytest.raises(RetryableProviderError):
            await model.complete(HELLO)
    with pytest.raises(ProviderUnavailableError, match="the first 4 calls to fake:dead"):
        await second.complete(HELLO)  # the 4th, in another worker than the 3rd
    with pytest.raises(ProviderUnavailableError):
        await first.complete(HELLO)  # told at its next turn: no call is sent
    assert first_inner.calls == 2


# --- unreadable replies -----------------------------------------------------------------------

HTML_PAGE = Reply(
    body=b"<html><body><h1>Welcome to nginx!</h1></body></html>",
    headers={"content-type": "text/html"},
)


def _cut_in_half(provider: Provider) -> Handler:
    correct = faults.scripted(provider)

    def handle(request: Recorded) -> Reply:
        whole = correct(request)
        return Reply(body=whole.body[: len(whole.body) // 2], headers=whole.headers)

    return handle


UNREADABLE = {
    "an HTML page": lambda provider: lambda request: HTML_PAGE,
    "a body cut in half": _cut_in_half,
}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", list(UNREADABLE))
def test_unreadable_replies_on_every_call_stop_the_run(
    tmp_path: Path, provider: Provider, name: str
) -> None:
    with LoopbackServer() as server:
        server.default = UNREADABLE[name](provider)
        result = _eval(tmp_path, server, provider=provider)
    assert result.returncode == 2, result.stderr  # was 3: every sample tried, then errored
    assert "the first 8 calls to" in result.stderr
    assert "unreadable reply from" in result.stderr
    assert "check that the base url (--judge-base-url) is the api's" in result.stderr.lower()
    report = _report(tmp_path)
    assert report["stopped"] is not None and report["counts"]["skipped"] > 0


# --- judge replies checked -------------------------------------------------------------------


def _context_99(provider: Provider, times: int | None) -> Handler:
    """Verification replies whose verdicts cite context 99 and sentence 99 (the samples have
    one context of a few sentences)."""

    def fault(request: Recorded) -> Reply | None:
        data = faults.payload(request)
        if "verdicts" not in data:
            return None
        cited = [{**verdict, "context": 99, "sentence": 99} for verdict in data["verdicts"]]
        return faults.answer(provider, request, {"verdicts": cited})

    return faults._faulty(fault, times, provider)


INVENTED = "The moon orbits Jupiter every {n} hours."


def _invented_claims(provider: Provider, count: int, *, keep: bool) -> Handler:
    """Extraction replies with `count` claims the answer never made (after its own, if `keep`)."""

    def fault(request: Recorded) -> Reply | None:
        data = faults.payload(request)
        if "claims" not in data:
            return None
        own = data["claims"] if keep else []
        made_up = [{"number": len(own) + n, "text": INVENTED.format(n=n)} for n in range(count)]
        return faults.answer(provider, request, {"claims": [*own, *made_up]})

    return faults._faulty(fault, None, provider)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_verdict_citing_a_sentence_that_does_not_exist_costs_its_citation(
    tmp_path: Path, provider: Provider
) -> None:
    # Issue 45: a citation that does not exist costs the citation, not the sample: the
    # verdict has no evidence, so it cannot support (NO_EVIDENCE), and the answer is
    # unfaithful (issue 38): exit 1, never a pass. (Issue 28 once made it an error.)
    with LoopbackServer() as server:
        server.default = _context_99(provider, times=None)
        result = _eval(tmp_path, server, provider=provider)
        requests = len(server.requests)
    assert result.returncode == 1, result.stderr
    assert f"unfaithful answers: {SAMPLES} of {SAMPLES}" in " ".join(result.stderr.split())
    report = _report(tmp_path)
    assert report["counts"]["scored"] == SAMPLES and report["counts"]["errors"] == 0
    claims = [c for s in report["samples"] for c in s["claims"]]
    assert claims and all(c["verdict"] == "NO_EVIDENCE" for c in claims)
    assert all("does not exist" in c["reason"] for c in claims)
    assert requests == 2 * SAMPLES  # claims, then verdicts: a bad citation is not asked again


def test_one_reply_citing_a_missing_sentence_costs_only_its_sample(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.default = _context_99("openai", times=1)
        result = _eval(tmp_path, server)
    assert result.returncode == 1, result.stderr
    report = _report(tmp_path)
    assert report["counts"]["scored"] == SAMPLES
    unfaithful = [s["id"] for s in report["samples"] if s["verdict"]["status"] == "unfaithful"]
    assert len(unfaithful) == 1, unfaithful


def test_thousands_of_invented_claims_are_an_invalid_reply(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.default = _invented_claims("openai", 5000, keep=False)
        result = _eval(tmp_path, server)
    assert result.returncode == 3, result.stderr  # was 0 or 1: 5,000 claims scored as real
    assert "5000 of the 5000 claims share no word with the answer" in result.stderr
    assert _report(tmp_path)["counts"]["errors"] == SAMPLES


def test_an_invented_claim_is_flagged_and_counted(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        server.default = _invented_claims("openai", 1, keep=True)
        result = _eval(tmp_path, server)
    report = _report(tmp_path)
    assert report["counts"]["scored"] == SAMPLES, result.stderr
    claims = [c for s in report["samples"] for c in s["claims"]]
    flagged = [c["text"] for c in claims if c["traceable"] is False]
    assert flagged == [INVENTED.format(n=0)] * SAMPLES
    assert all(c["traceable"] is True for c in claims if c["text"] not in flagged)
    assert report["judge_details"]["untraceable_claims"] == {
        "untraceable": SAMPLES,
        "claims": 3 * SAMPLES,
    }
    assert f"Judge claims: {SAMPLES} of {3 * SAMPLES} claims share no word" in result.stdout


async def test_a_matrix_cell_for_a_context_that_does_not_exist_costs_the_cell() -> None:
    # Issue 45: a citation that does not exist costs the citation, not the sample, and is not
    # asked again; the claim is then supported by no context (issue 38: never a pass).
    fake = FakeChatModel()
    row = {"context": 3, "verdict": "FULLY_SUPPORTED", "quote": "The sky is blue."}
    fake.enqueue({"claims": [{"claim": 1, "contexts": [row]}]})  # 2 contexts shown
    claim = Claim("c1", "The sky is blue.")
    rows = await LLMJudge(fake).verify_matrix([claim], ["The sky is blue.", "Grass is green."])
    verdicts = [v.verdict for row_ in rows for v in row_]
    assert verdicts and all(v is Verdict.NO_EVIDENCE for v in verdicts), verdicts
    assert len(fake.requests) == 1


async def test_a_truth_credited_to_a_context_that_does_not_exist_is_invalid() -> None:
    # Truths mode (seed 004) asks for the facts each context states; one credited to context 5
    # of 2 was dropped without a word, and the context's facts read as none.
    fake = FakeChatModel()
    truths = {"truths": [{"context": 5, "text": "The sky is blue."}]}
    fake.enqueue(truths)
    fake.enqueue(truths)
    claim = Claim("c1", "The sky is blue.")
    judge = LLMJudge(fake, mode="truths")
    with pytest.raises(JudgeResponseError, match="context 5 does not exist: there are 2"):
        await judge.verify_claims([claim], ["The sky is blue.", "Grass is green."])
    assert len(fake.requests) == 2  # asked again once, saying why
    assert "context 5 does not exist" in fake.requests[1].messages[-1].content


# --- vera generate: bounded answers and quotes -------------------------------------------------


def _repeating(script: TestsetScript, times: int) -> Handler:
    """The scripted generator, its answer (or decoy) one sentence said `times` times over."""

    def handle(request: Recorded) -> Reply:
        item = json.loads(script(request).body)["choices"][0]["message"]["content"]
        data = json.loads(item)
        for key in ("answer", "decoy_answer"):
            if data[key]:
                data[key] = " ".join([data[key]] * times)
        return ok_openai(json.dumps(data))

    return handle


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    text = "The lease runs for twelve months from the signing date. Rent is due monthly."
    for n in range(3):
        (folder / f"doc{n}.txt").write_text(f"{text} Clause {n} names the landlord as Ann.\n")
    return folder


def test_a_generated_answer_of_megabytes_is_rejected_and_counted(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    loopback.default = _repeating(TestsetScript("good"), 40_000)  # about 2 MB per answer
    settings = Settings(judge_base_url=loopback.openai_url, cache=False, history=False)
    result = generate_testset(corpus, "openai:loopback-model", n=4, settings=settings)
    assert result.kept_total == 0 and result.dataset["queries"] == []  # was kept, 2.2 MB
    assert result.rejections == {"too_long": sum(result.attempted.values())}
    assert "too_long" in REASONS


def test_the_bounds_are_flags_and_a_too_long_item_is_said(
    loopback: LoopbackServer, corpus: Path
) -> None:
    loopback.default = TestsetScript("good")
    made = run_vera(
        corpus.parent, "generate", "--documents", str(corpus), "--generator",
        "openai:loopback-model", "--judge-base-url", loopback.openai_url, "--n", "2",
        "--max-answer-chars", "20", "-o", "generated.json", "--no-cache",
        OPENAI_API_KEY="test", **SOURCE,
    )  # fmt: skip
    assert made.returncode == 3, made.stderr  # nothing kept
    assert "too_long" in made.stdout and "max_answer_chars" in made.stdout


# --- LiteLLM: connection errors named, and no price-table download --------------------------


async def _litellm_call(base_url: str, tmp_path: Path) -> None:
    pytest.importorskip("litellm", reason=without("litellm"))
    settings = Settings(judge_base_url=base_url, retries=0, fail_fast=0, cache=False, history=False)
    model = create_managed_model("litellm:openai/loopback-model", settings)
    await model.complete(HELLO)


async def test_litellm_names_a_refused_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-0123456789")
    with pytest.raises(ProviderConnectionError) as raised:
        await _litellm_call(faults.unreachable_url(), tmp_path)
    message = str(raised.value)
    assert message.startswith("could not reach http://127.0.0.1:")  # was "HTTP 500 …"
    assert "HTTP 500" not in message and "ConnectError" in message


async def test_litellm_names_an_unreadable_reply(
    tmp_path: Path, loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-0123456789")
    loopback.default = lambda request: HTML_PAGE
    with pytest.raises(UnreadableReplyError, match=r"unreadable reply from http://127\.0\.0\.1:"):
        await _litellm_call(loopback.openai_url, tmp_path)


def test_litellm_is_imported_with_its_local_cost_map(tmp_path: Path) -> None:
    pytest.importorskip("litellm", reason=without("litellm"))
    code = (
        "import os; from vera.providers._litellm import _import_litellm; _import_litellm(); "
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "True", done.stderr


def test_a_users_own_cost_map_choice_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from vera.providers._litellm import use_local_cost_map

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
    use_local_cost_map()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "False"


# --- redaction of short keys ------------------------------------------------------------------


async def test_a_one_letter_key_garbles_no_message(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    echo = "OpenAIException - Incorrect API key provided: x. Fix it."
    loopback.default = lambda request: error(401, {"error": {"message": echo}})
    settings = Settings(judge_base_url=loopback.openai_url, cache=False, history=False)
    with pytest.raises(AuthenticationError) as raised:
        await create_managed_model("openai:loopback-model", settings).complete(HELLO)
    assert echo in str(raised.value)  # was "OpenAIE***ception - Incorrect API key provided: ***"


@pytest.mark.parametrize(
    ("text", "secret", "expected"),
    [
        ("key sk-secret-123 rejected", "sk-secret-123", "key *** rejected"),
        ("key 'sk-secret-123'.", "sk-secret-123", "key '***'."),
        ("xsk-secret-123 and sk-secret-1234", "sk-secret-123", "xsk-secret-123 and sk-secret-1234"),
        ("OpenAIException for key test", "test", "OpenAIException for key test"),
        ("key 1234567 rejected", "1234567", "key 1234567 rejected"),
        ("key 12345678 rejected", "12345678", "key *** rejected"),
    ],
)
def test_a_key_is_masked_only_whole_and_only_from_8_characters(
    text: str, secret: str, expected: str
) -> None:
    assert mask_secret(text, secret) == expected
