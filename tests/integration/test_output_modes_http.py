"""Structured output negotiated, not assumed: the OpenAI adapter against a loopback server that
refuses `response_format` json_schema as llama-cpp-python's server does (HTTP 500 naming the
field), through the real SDK, the retrying wrapper and the judge."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai, refusing_json_schema
from tests.support.scripted import scripted_openai

from vera import Claim, ConfigError, RunStopError, Settings, Verdict
from vera.judges import LLMJudge, create_judge
from vera.providers import ChatRequest, ManagedChatModel, Message, create_chat_model
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the providers' own clients, retries, cache and batches"

REQUEST = ChatRequest(
    messages=(Message(role="user", content="Judge this."),),
    json_schema={"type": "object", "properties": {"v": {"type": "array"}}, "required": ["v"]},
)


def formats(loopback: LoopbackServer) -> list[Any]:
    return [(r.json.get("response_format") or {}).get("type") for r in loopback.requests]


def answer_ok(_: Recorded) -> Reply:
    return ok_openai('{"v": []}')


async def no_wait(_: float) -> None:
    return None


def managed(model: OpenAIChatModel) -> ManagedChatModel:
    return ManagedChatModel(model, retry=RetryPolicy(max_attempts=6), sleep=no_wait)


async def test_a_refused_schema_falls_back_to_json_mode_once_with_one_warning(
    loopback: LoopbackServer,
) -> None:
    loopback.default = refusing_json_schema(answer_ok)
    model = managed(OpenAIChatModel("qwen", base_url=loopback.openai_url, timeout=5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert (await model.complete(REQUEST)).data == {"v": []}
    # One refusal, learnt at once (no retry of the refused request), then JSON mode only.
    assert formats(loopback) == ["json_schema", "json_object", "json_object", "json_object"]
    assert model.inner.structured == "json_object"  # type: ignore[attr-defined]
    lines = [str(w.message) for w in caught]
    assert len(lines) == 1 and "refused response_format json_schema" in lines[0]
    assert "HTTP 500" in lines[0] and "--judge-output" in lines[0]


async def test_json_mode_refused_too_falls_back_to_the_prompt(loopback: LoopbackServer) -> None:
    loopback.default = refusing_json_schema(answer_ok, status=400, json_object=False)
    model = managed(OpenAIChatModel("m", base_url=loopback.openai_url, timeout=5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await model.complete(REQUEST)
        await model.complete(REQUEST)
    assert formats(loopback) == ["json_schema", "json_object", None, None]


async def test_a_chosen_mode_refused_stops_instead_of_being_retried(
    loopback: LoopbackServer,
) -> None:
    loopback.default = refusing_json_schema(answer_ok)
    model = managed(
        OpenAIChatModel("m", base_url=loopback.openai_url, timeout=5, structured="json_schema")
    )
    with pytest.raises(RunStopError) as raised:
        await model.complete(REQUEST)
    assert loopback.request_count == 1  # not retried as if the server were down
    message = str(raised.value)
    assert "--judge-output schema" in message and "--judge-output json" in message


async def test_a_500_that_does_not_name_the_field_is_still_retried(
    loopback: LoopbackServer,
) -> None:
    from tests.support.loopback import error

    loopback.script(error(500, {"error": {"message": "CUDA out of memory"}}))
    loopback.default = answer_ok
    model = managed(OpenAIChatModel("m", base_url=loopback.openai_url, timeout=5))
    assert (await model.complete(REQUEST)).data == {"v": []}
    assert formats(loopback) == ["json_schema", "json_schema"]
    assert model.inner.structured == "json_schema"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("output", "sent"), [("schema", "json_schema"), ("json", "json_object"), ("prompt", None)]
)
async def test_judge_output_setting_reaches_the_request(
    loopback: LoopbackServer, output: str, sent: str | None
) -> None:
    loopback.default = scripted_openai
    settings = Settings(
        judge="openai:m", judge_base_url=loopback.openai_url, judge_output=output, cache=False
    )
    judge = create_judge(settings.judge, settings)
    assert isinstance(judge, LLMJudge)
    verdicts = await judge.verify_claims(
        [Claim("c1", "Refunds go to the card.")], ["Refunds go to the original card."]
    )
    assert verdicts[0].verdict is Verdict.FULLY_SUPPORTED
    assert formats(loopback) == [sent]


def test_judge_output_is_refused_for_a_provider_with_one_way() -> None:
    with pytest.raises(ConfigError, match="--judge-output json applies to OpenAI-compatible"):
        create_chat_model("anthropic:claude-x", api_key="k", output="json")


async def test_ollama_spec_uses_the_openai_compatible_api(loopback: LoopbackServer) -> None:
    loopback.default = answer_ok
    model = create_chat_model("ollama:qwen2.5:1.5b", base_url=loopback.openai_url)
    assert (model.provider, model.model) == ("ollama", "qwen2.5:1.5b")
    await model.complete(REQUEST)
    assert loopback.requests[0].path == "/v1/chat/completions"
    assert loopback.requests[0].json["model"] == "qwen2.5:1.5b"


def test_ollama_default_base_url() -> None:
    model = create_chat_model("ollama:llama3.2")
    assert "127.0.0.1:11434/v1" in repr(model)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "Requested tokens (5012) exceed context window of 4096"),  # llama-cpp-python
        (400, "the request exceeds the available context size, try increasing it"),  # llama.cpp
        (400, "This model's maximum context length is 4096 tokens."),  # vLLM, OpenAI
    ],
)
async def test_a_context_too_short_is_named_and_not_retried(
    loopback: LoopbackServer, status: int, message: str
) -> None:
    from tests.support.loopback import error

    from vera.providers import BadRequestError

    loopback.default = lambda _: error(status, {"error": {"message": message}})
    model = managed(OpenAIChatModel("m", base_url=loopback.openai_url, timeout=5))
    with pytest.raises(BadRequestError) as raised:
        await model.complete(REQUEST)
    assert loopback.request_count == 1
    assert "does not fit the model's context window" in str(raised.value)
    assert "--n_ctx" in str(raised.value)
