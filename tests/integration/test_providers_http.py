"""The provider adapters over their real SDKs, against a scripted server on 127.0.0.1."""

from __future__ import annotations

import importlib
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from tests.support.loopback import (
    LoopbackServer,
    delay,
    error,
    malformed,
    ok_anthropic_text,
    ok_anthropic_tool,
    ok_openai,
    reset,
)

from vera import ConfigError
from vera.providers import (
    AuthenticationError,
    BadRequestError,
    ChatModel,
    ChatRequest,
    Message,
    ModelNotFoundError,
    RateLimitError,
    RetryableProviderError,
    TruncatedOutputError,
    create_chat_model,
)
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._base import MissingExtraError
from vera.providers._http import is_local_url, retry_after_seconds
from vera.providers._jsonparse import MalformedJSONError, parse_json_object
from vera.providers._openai import OpenAIChatModel, StructuredMode

WHITEBOX = "the providers' own clients, retries, cache and batches"

SECRET = "sk-test-0123456789abcdef"
SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}},
    "required": ["verdict"],
}
PLAIN = ChatRequest(messages=(Message(role="user", content="Say hi."),))
STRUCTURED = ChatRequest(
    messages=(
        Message(role="system", content="You are a strict judge."),
        Message(role="user", content="Judge this."),
    ),
    json_schema=SCHEMA,
    schema_name="verdicts",
    max_tokens=256,
)


@pytest.fixture
def gpt(loopback: LoopbackServer) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-test", api_key=SECRET, base_url=loopback.openai_url, timeout=5)


@pytest.fixture
def claude(loopback: LoopbackServer) -> AnthropicChatModel:
    return AnthropicChatModel(
        "claude-test", api_key=SECRET, base_url=loopback.anthropic_url, timeout=5
    )


# --- OpenAI ------------------------------------------------------------------------------------


async def test_openai_plain_text(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(ok_openai("Hi there."))
    response = await gpt.complete(PLAIN)
    assert response.text == "Hi there."
    assert response.data is None
    assert response.finish_reason == "stop"
    assert response.model == "loopback-model"
    (sent,) = loopback.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.json["model"] == "gpt-test"
    assert sent.json["messages"] == [{"role": "user", "content": "Say hi."}]
    assert "response_format" not in sent.json


async def test_openai_sends_the_schema_as_response_format(
    gpt: OpenAIChatModel, loopback: LoopbackServer
) -> None:
    loopback.script(ok_openai('{"verdict": "yes"}'))
    response = await gpt.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    body = loopback.requests[0].json
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdicts", "schema": SCHEMA, "strict": False},
    }
    assert body["max_tokens"] == 256
    assert body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": "You are a strict judge."}


@pytest.mark.parametrize(
    ("structured", "expected"), [("json_object", {"type": "json_object"}), ("none", None)]
)
async def test_openai_structured_modes(
    loopback: LoopbackServer, structured: StructuredMode, expected: object
) -> None:
    model = OpenAIChatModel(
        "m", api_key=SECRET, base_url=loopback.openai_url, structured=structured
    )
    loopback.script(ok_openai('{"verdict": "no"}'))
    assert (await model.complete(STRUCTURED)).data == {"verdict": "no"}
    assert loopback.requests[0].json.get("response_format") == expected


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"verdict": "yes"}\n```',
        'Here is the result: {"verdict": "yes"} Hope this helps!',
    ],
)
async def test_openai_wrapped_json_is_parsed(
    gpt: OpenAIChatModel, loopback: LoopbackServer, content: str
) -> None:
    loopback.script(ok_openai(content))
    response = await gpt.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    assert response.text == content


async def test_openai_malformed_json(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    # The reply is returned, not raised: it was paid for, and the judge re-asks with it.
    loopback.script(ok_openai("I would rather not answer in JSON."))
    response = await gpt.complete(STRUCTURED)
    assert response.data is None
    assert response.text == "I would rather not answer in JSON."
    with pytest.raises(MalformedJSONError, match="rather not"):
        parse_json_object(response.text)


async def test_openai_usage(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(ok_openai("x", prompt_tokens=120, completion_tokens=30, cached_tokens=64))
    usage = (await gpt.complete(PLAIN)).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens) == (
        120,
        30,
        64,
    )


async def test_openai_truncated(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(ok_openai('{"verdict": "ye', finish_reason="length"))
    with pytest.raises(TruncatedOutputError, match="max_tokens=256"):
        await gpt.complete(STRUCTURED)


async def test_openai_rate_limit_carries_retry_after(
    gpt: OpenAIChatModel, loopback: LoopbackServer
) -> None:
    loopback.script(error(429, headers={"retry-after": "2"}))
    with pytest.raises(RateLimitError) as caught:
        await gpt.complete(PLAIN)
    assert caught.value.retry_after == 2.0
    assert caught.value.status == 429


async def test_openai_server_error_is_retryable_and_sent_once(
    gpt: OpenAIChatModel, loopback: LoopbackServer
) -> None:
    loopback.script(error(500))
    with pytest.raises(RetryableProviderError) as caught:
        await gpt.complete(PLAIN)
    assert not isinstance(caught.value, RateLimitError)
    assert caught.value.status == 500
    assert len(loopback.requests) == 1  # the SDK's own retries are off


async def test_openai_bad_key(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    # Real servers echo (part of) the rejected key; it must not reach VERA's message.
    loopback.script(error(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    with pytest.raises(AuthenticationError) as caught:
        await gpt.complete(PLAIN)
    message = str(caught.value)
    assert "OPENAI_API_KEY" in message
    assert SECRET not in message
    assert SECRET not in repr(gpt)
    assert len(loopback.requests) == 1


async def test_openai_unknown_model(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(error(404, {"error": {"message": "The model `gpt-test` does not exist"}}))
    with pytest.raises(ModelNotFoundError, match=r"does not exist.*check the model name"):
        await gpt.complete(PLAIN)


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5-mini", "azure/o4-mini"])
async def test_openai_reasoning_models_get_max_completion_tokens(
    loopback: LoopbackServer, model: str
) -> None:
    loopback.script(ok_openai('{"verdict": "yes"}'))
    reasoning = OpenAIChatModel(model, api_key=SECRET, base_url=loopback.openai_url, timeout=5)
    await reasoning.complete(STRUCTURED)
    body = loopback.requests[0].json
    assert body["max_completion_tokens"] == 256
    assert "max_tokens" not in body and "temperature" not in body


async def test_openai_reset_connection(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(reset())
    with pytest.raises(RetryableProviderError, match="could not reach"):
        await gpt.complete(PLAIN)
    assert len(loopback.requests) == 1


async def test_openai_timeout(loopback: LoopbackServer) -> None:
    model = OpenAIChatModel("m", api_key=SECRET, base_url=loopback.openai_url, timeout=0.5)
    loopback.script(delay(3))
    with pytest.raises(RetryableProviderError, match=r"timed out after 0\.5s"):
        await model.complete(PLAIN)
    assert len(loopback.requests) == 1


async def test_openai_non_json_body(gpt: OpenAIChatModel, loopback: LoopbackServer) -> None:
    loopback.script(malformed("<html>502 Bad Gateway</html>"))
    with pytest.raises(RetryableProviderError, match="unreadable reply"):
        await gpt.complete(PLAIN)


async def test_openai_local_server_needs_no_key(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", loopback.openai_url)
    loopback.script(ok_openai("local"))
    assert (await OpenAIChatModel("llama3").complete(PLAIN)).text == "local"
    assert loopback.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_openai_no_key_for_a_remote_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        await OpenAIChatModel("gpt-4o-mini").complete(PLAIN)


# --- Anthropic ---------------------------------------------------------------------------------


async def test_anthropic_tool_use_gives_data(
    claude: AnthropicChatModel, loopback: LoopbackServer
) -> None:
    loopback.script(ok_anthropic_tool({"verdict": "yes"}, name="verdicts"))
    response = await claude.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    assert response.text == '{"verdict": "yes"}'
    (sent,) = loopback.requests
    assert sent.path == "/v1/messages"
    assert sent.json["system"] == "You are a strict judge."
    assert sent.json["messages"] == [{"role": "user", "content": "Judge this."}]
    assert sent.json["tools"] == [
        {
            "name": "verdicts",
            "description": sent.json["tools"][0]["description"],
            "input_schema": SCHEMA,
        }
    ]
    assert sent.json["tool_choice"] == {"type": "tool", "name": "verdicts"}
    assert sent.json["max_tokens"] == 256


async def test_anthropic_plain_text(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    loopback.script(ok_anthropic_text("Hello."))
    response = await claude.complete(PLAIN)
    assert (response.text, response.data, response.finish_reason) == ("Hello.", None, "end_turn")
    assert "tools" not in loopback.requests[0].json
    assert "system" not in loopback.requests[0].json


async def test_anthropic_usage(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    loopback.script(
        ok_anthropic_tool(
            {"verdict": "no"},
            name="verdicts",
            input_tokens=40,
            output_tokens=9,
            cache_read_input_tokens=100,
        )
    )
    usage = (await claude.complete(STRUCTURED)).usage
    # prompt_tokens counts cached tokens too, as OpenAI's does.
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens) == (
        140,
        9,
        100,
    )


async def test_anthropic_truncated(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    loopback.script(ok_anthropic_tool({"verdict": "y"}, stop_reason="max_tokens"))
    with pytest.raises(TruncatedOutputError):
        await claude.complete(STRUCTURED)


async def test_anthropic_prose_reply_is_searched_for_json(
    claude: AnthropicChatModel, loopback: LoopbackServer
) -> None:
    loopback.script(
        ok_anthropic_text('Sure: {"verdict": "yes"}'),
        ok_anthropic_text("No JSON today."),
    )
    assert (await claude.complete(STRUCTURED)).data == {"verdict": "yes"}
    response = await claude.complete(STRUCTURED)
    assert (response.data, response.text) == (None, "No JSON today.")


async def test_anthropic_rate_limit(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    loopback.script(error(429, body, headers={"retry-after": "7"}))
    with pytest.raises(RateLimitError, match="Slow down") as caught:
        await claude.complete(PLAIN)
    assert caught.value.retry_after == 7.0
    assert len(loopback.requests) == 1


async def test_anthropic_overloaded(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    loopback.script(error(529, body))
    with pytest.raises(RetryableProviderError) as caught:
        await claude.complete(PLAIN)
    assert caught.value.status == 529
    assert len(loopback.requests) == 1


async def test_anthropic_bad_key(claude: AnthropicChatModel, loopback: LoopbackServer) -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": SECRET}}
    loopback.script(error(401, body))
    with pytest.raises(AuthenticationError) as caught:
        await claude.complete(PLAIN)
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(claude)


async def test_anthropic_unknown_model(
    claude: AnthropicChatModel, loopback: LoopbackServer
) -> None:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "model: x"}}
    loopback.script(error(404, body))
    with pytest.raises(BadRequestError, match="check the model name"):
        await claude.complete(PLAIN)


async def test_anthropic_reset_and_timeout(loopback: LoopbackServer) -> None:
    model = AnthropicChatModel("c", api_key=SECRET, base_url=loopback.anthropic_url, timeout=0.5)
    loopback.script(reset(), delay(3, ok_anthropic_text("late")))
    with pytest.raises(RetryableProviderError, match="could not reach"):
        await model.complete(PLAIN)
    with pytest.raises(RetryableProviderError, match="timed out"):
        await model.complete(PLAIN)
    assert len(loopback.requests) == 2


# --- registry, missing SDKs, helpers -----------------------------------------------------------


def test_registry_builds_adapters() -> None:
    model = create_chat_model("openai:gpt-4o-mini", api_key=SECRET)
    assert isinstance(model, OpenAIChatModel)
    assert isinstance(model, ChatModel)
    assert (model.provider, model.model) == ("openai", "gpt-4o-mini")
    claude = create_chat_model("Anthropic:claude-sonnet-4-5")
    assert isinstance(claude, AnthropicChatModel)
    assert claude.model == "claude-sonnet-4-5"
    assert create_chat_model("openai:llama3.1:8b", base_url="http://localhost:11434/v1").model == (
        "llama3.1:8b"
    )


@pytest.mark.parametrize("spec", ["gpt-4o-mini", "openai:", "mystery:model", ":model"])
def test_registry_rejects_bad_specs(spec: str) -> None:
    with pytest.raises(ConfigError, match="anthropic, litellm, ollama, openai"):
        create_chat_model(spec)


@pytest.mark.parametrize(
    ("sdk", "module", "cls", "spec"),
    [
        ("openai", "vera.providers._openai", "OpenAIChatModel", "openai:m"),
        ("anthropic", "vera.providers._anthropic", "AnthropicChatModel", "anthropic:m"),
    ],
)
def test_missing_sdk_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, sdk: str, module: str, cls: str, spec: str
) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)
    adapter = importlib.import_module(module)
    command = f"pip install 'vera-eval[{sdk}]'"
    with pytest.raises(MissingExtraError, match=command.replace("[", r"\[")):
        getattr(adapter, cls)("m")
    with pytest.raises(MissingExtraError) as caught:
        create_chat_model(spec)
    assert command in str(caught.value)
    assert f"pip install -e '.[{sdk}]'" in str(caught.value)  # from a clone, too


def test_importing_vera_imports_no_sdk() -> None:
    code = (
        "import sys, vera, vera.providers, vera.providers._registry, vera.providers._openai, "
        "vera.providers._anthropic; "
        "assert not {'openai', 'anthropic'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_tests_cannot_reach_the_network() -> None:
    with (
        socket.socket() as sock,
        pytest.raises(ConnectionRefusedError, match="may not reach the network"),
    ):
        sock.connect(("203.0.113.1", 443))


def test_retry_after_forms() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": date}, now=now.timestamp()) == 30.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://[::1]:8080", True),
        ("http://192.168.1.20:8000/v1", True),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_is_local_url(url: str | None, local: bool) -> None:
    assert is_local_url(url) is local
