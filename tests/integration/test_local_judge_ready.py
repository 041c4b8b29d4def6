"""Local judges (issue 45): the readiness check names what is wrong with a server on this
machine before the first call, and a local judge gets the timeouts and concurrency that suit
one local model. Real OpenAI SDK calls against servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, models_list, ok_openai
from tests.support.scripted import scripted_openai

import vera
from vera import Settings
from vera.judges import create_judge
from vera.judges._registry import create_managed_model
from vera.providers import BadRequestError, ChatRequest, Message, ProviderUnavailableError
from vera.providers._ready import LOCAL_DEFAULTS, local_defaults, readiness_for

WHITEBOX = "the providers' own clients, retries, cache and batches"

REQUEST = ChatRequest(messages=(Message(role="user", content="Say ok."),))


def _closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def _complete(spec: str, url: str, request: ChatRequest = REQUEST) -> str:
    settings = Settings(judge=spec, judge_base_url=url, cache=False, retries=0)
    model = create_managed_model(spec, settings)
    return asyncio.run(model.complete(request)).text


def test_a_local_server_that_is_down_is_named_before_any_call() -> None:
    url = _closed_url()
    with pytest.raises(ProviderUnavailableError, match=r"no server answers at http://127\.0\.0\.1"):
        _complete("openai:qwen", url)


def test_a_server_busy_with_another_request_is_not_taken_for_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A CPU server answers one request at a time: its /models waits for another client's
    # generation. Connected but slow is busy, not down; the call then goes through.
    monkeypatch.setattr("vera.providers._ready._PROBE_TIMEOUT", 0.3)

    def busy(request: Recorded) -> Reply:
        time.sleep(0.8)
        return models_list("qwen")(request)

    with LoopbackServer() as server:
        server.models = busy
        server.script(ok_openai("done"))
        assert _complete("openai:qwen", server.openai_url) == "done"


def test_a_model_the_server_does_not_have_is_named_with_those_it_has() -> None:
    with LoopbackServer() as server:
        server.models = models_list("qwen2.5-coder", "llama-3.2")
        with pytest.raises(ProviderUnavailableError) as raised:
            _complete("openai:gpt-4o-mini", server.openai_url)
        assert "has no model 'gpt-4o-mini'; it has: llama-3.2, qwen2.5-coder" in str(raised.value)
        assert server.requests == []  # no chat call was sent


def test_a_listed_model_is_asked_about_once_and_then_called() -> None:
    with LoopbackServer() as server:
        server.models = models_list("qwen2.5-coder")
        server.script(ok_openai("first"), ok_openai("second"))
        url = server.openai_url
        settings = Settings(judge="openai:qwen2.5-coder", judge_base_url=url, cache=False)
        model = create_managed_model("openai:qwen2.5-coder", settings)

        async def twice() -> list[str]:
            return [(await model.complete(REQUEST)).text for _ in range(2)]

        assert asyncio.run(twice()) == ["first", "second"]
        assert server.model_queries[0].path == "/v1/models"
        assert sum(q.path.endswith("/models") for q in server.model_queries) == 1


def test_calls_sent_at_once_ask_the_server_about_its_models_once() -> None:
    # A run starts its first samples together: each one's first call used to run its own
    # check (64 /models and /props probes, each with a new HTTP client, in the benchmark).
    with LoopbackServer() as server:
        server.models = models_list("qwen2.5-coder")
        server.script(*(ok_openai(f"reply {i}") for i in range(8)))
        settings = Settings(
            judge="openai:qwen2.5-coder",
            judge_base_url=server.openai_url,
            cache=False,
            provider_concurrency=8,
        )
        model = create_managed_model("openai:qwen2.5-coder", settings)

        async def together() -> list[str]:
            replies = await asyncio.gather(*(model.complete(REQUEST) for _ in range(8)))
            return [reply.text for reply in replies]

        assert sorted(asyncio.run(together())) == sorted(f"reply {i}" for i in range(8))
        assert sum(q.path.endswith("/models") for q in server.model_queries) == 1


def test_ollama_answers_a_name_without_a_tag_with_its_latest() -> None:
    with LoopbackServer() as server:
        server.models = models_list("qwen2.5:latest")
        server.script(ok_openai("ok"))
        assert _complete("ollama:qwen2.5", server.openai_url) == "ok"


def test_a_prompt_longer_than_the_reported_context_window_is_refused_unsent() -> None:
    with LoopbackServer() as server:
        server.models = models_list("qwen", max_model_len=100)
        long = ChatRequest(messages=(Message(role="user", content="word " * 200),))
        with pytest.raises(BadRequestError, match="context window of 100 tokens"):
            _complete("openai:qwen", server.openai_url, long)
        assert server.requests == []
        server.script(ok_openai("short fits"))
        assert _complete("openai:qwen", server.openai_url) == "short fits"


def test_without_a_models_list_the_first_call_decides() -> None:
    with LoopbackServer() as server:  # /models answers 404, as some proxies do
        server.script(ok_openai("ok"))
        assert _complete("openai:anything", server.openai_url) == "ok"
        assert server.model_queries[0].path == "/v1/models"
        assert sum(q.path.endswith("/models") for q in server.model_queries) == 1


def test_fail_fast_off_and_remote_servers_ask_nothing() -> None:
    assert readiness_for("openai:m", "http://127.0.0.1:8000/v1", fail_fast=0) is None
    assert readiness_for("openai:m", "https://api.openai.com/v1", fail_fast=8) is None
    assert readiness_for("anthropic:claude", None, fail_fast=8) is None
    ollama = readiness_for("ollama:qwen2.5:1.5b", None, fail_fast=8)
    assert ollama is not None and ollama.base_url == "http://127.0.0.1:11434/v1"
    assert ollama.model == "qwen2.5:1.5b"


def test_a_local_judge_gets_local_defaults_unless_set() -> None:
    local = Settings(judge="ollama:qwen2.5:1.5b")
    assert local_defaults(local, local.judge, local.judge_base_url) == LOCAL_DEFAULTS
    on_loopback = Settings(judge="openai:q", judge_base_url="http://localhost:8080/v1", timeout=30)
    changed = local_defaults(on_loopback, on_loopback.judge, on_loopback.judge_base_url)
    assert "timeout" not in changed and changed["sample_timeout"] == 3600.0
    remote = Settings(judge="openai:gpt-4o-mini")
    assert local_defaults(remote, remote.judge, remote.judge_base_url) == {}


def test_the_local_call_timeout_reaches_the_model() -> None:
    settings = Settings(judge="openai:q", judge_base_url="http://127.0.0.1:1/v1")
    assert create_managed_model("openai:q", settings).timeout == LOCAL_DEFAULTS["timeout"]
    remote = Settings(judge="openai:q", judge_base_url="https://example.com/v1")
    assert create_managed_model("openai:q", remote).timeout == Settings().timeout


def test_one_judge_serves_two_runs_each_in_its_own_event_loop() -> None:
    # The benchmark judges one sample per `vera.evaluate`: the second run's loop is new, and
    # the client the first opened belongs to the closed one ("Event loop is closed").
    with LoopbackServer() as server:
        server.keep_alive = True  # the first run's connection is still open when it ends
        server.default = scripted_openai
        settings = Settings(
            judge="openai:qwen", judge_base_url=server.openai_url, cache=False, retries=0
        )
        judge = create_judge(settings.judge, settings)
        sample = vera.Sample(
            id="s", query="Who wrote it?", response="Ann wrote it.", contexts=["Ann wrote it."]
        )
        for _ in range(2):
            report = vera.evaluate([sample], ["faithfulness"], judge=judge, settings=settings)
            assert report.samples[0].status.value == "scored", report.samples[0].error
