"""Anthropic's Messages API, with structured output through a forced tool call.

The `anthropic` SDK is imported when a model is built, never when VERA is imported. Its own
retries are off: VERA retries in one place, once.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from vera._types._extras import install_hint
from vera.providers._base import (
    AuthenticationError,
    ChatRequest,
    ChatResponse,
    MissingExtraError,
    RateLimitInfo,
    TruncatedOutputError,
    Usage,
)
from vera.providers._http import (
    BACKSTOP_TIMEOUT,
    SdkAdapter,
    rate_limit_info,
    resolve_api_key,
)
from vera.providers._jsonparse import try_parse_json_object

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic, Omit
    from anthropic.types import (
        Message,
        MessageParam,
        TextBlockParam,
        ToolChoiceParam,
        ToolParam,
    )

_KEY_ENV = "ANTHROPIC_API_KEY"
_URL_ENV = "ANTHROPIC_BASE_URL"
_TOOL_DESCRIPTION = "Record the answer. The input must follow the schema exactly."


def _import_sdk() -> ModuleType:
    try:
        import anthropic

        # The SDK imports its API resources on first use, which would stall the event loop
        # (~0.3 s) in the middle of the first requests; import them here, before any run.
        import anthropic.resources
    except ImportError as exc:
        raise MissingExtraError(
            f"the Anthropic provider needs the anthropic SDK: {install_hint('anthropic')}"
        ) from exc
    module: ModuleType = anthropic
    return module


class AnthropicChatModel(SdkAdapter):
    """A Claude model behind the Anthropic Messages API.

    A JSON schema becomes the input schema of one tool the model is made to call, so `data` is
    the tool's input. `ChatRequest.temperature` is not sent: the current Messages API (SDK
    2.x) takes no sampling parameters.
    """

    provider_label = "Anthropic"
    key_env = _KEY_ENV
    url_env = _URL_ENV
    default_host = "api.anthropic.com"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = BACKSTOP_TIMEOUT,
    ) -> None:
        self._sdk = _import_sdk()
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._client: AsyncAnthropic | None = None

    @property
    def provider(self) -> str:
        """Always "anthropic"."""
        return "anthropic"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send `request` once; translate the reply or the failure into VERA's types."""
        client = self._get_client()
        tools, tool_choice = self._tooling(request)
        with self.sdk_errors():
            try:
                # The raw response, because the parsed one drops the rate-limit headers.
                raw = await client.messages.with_raw_response.create(
                    model=self._model,
                    max_tokens=request.max_tokens,
                    system=self._system(request),
                    messages=_messages(request, self._model),
                    tools=tools,
                    tool_choice=tool_choice,
                )
                message = await raw.parse()
            except TypeError as exc:
                # The SDK checks for credentials only when it builds the first request.
                if "authentication" not in str(exc):
                    raise
                raise AuthenticationError(
                    f"no Anthropic API key: set {_KEY_ENV} or pass api_key"
                ) from None
        if not isinstance(message, self._sdk.types.Message):
            raise self._unreadable()
        return self._response(request, message, rate_limit_info(raw.headers))

    def _get_client(self) -> AsyncAnthropic:
        if self._client is None:
            key = resolve_api_key(
                self._api_key, key_env=_KEY_ENV, base_url=self._base_url, url_env=_URL_ENV
            )
            self._client = cast(
                "AsyncAnthropic",
                self._sdk.AsyncAnthropic(
                    api_key=key, base_url=self._base_url, timeout=self._timeout, max_retries=0
                ),
            )
        return self._client

    def _system(self, request: ChatRequest) -> str | list[TextBlockParam] | Omit:
        parts = [m.content for m in request.messages if m.role == "system"]
        if not parts:
            return cast("Omit", self._sdk.omit)
        system = "\n\n".join(parts)
        marked = any(m.cache_break is not None for m in request.messages if m.role == "system")
        if marked and pays_to_cache(self._model, _tools_chars(request) + len(system)):
            block = {"type": "text", "text": system, "cache_control": _EPHEMERAL}
            return [cast("TextBlockParam", block)]
        return system

    def _tooling(
        self, request: ChatRequest
    ) -> tuple[list[ToolParam] | Omit, ToolChoiceParam | Omit]:
        if request.json_schema is None:
            omit = cast("Omit", self._sdk.omit)
            return omit, omit
        tool: ToolParam = {
            "name": request.schema_name,
            "description": _TOOL_DESCRIPTION,
            "input_schema": cast(Any, request.json_schema),
        }
        return [tool], {"type": "tool", "name": request.schema_name}

    def _response(
        self, request: ChatRequest, message: Message, rate_limit: RateLimitInfo | None
    ) -> ChatResponse:
        if message.stop_reason == "max_tokens":
            raise TruncatedOutputError(
                f"{self._model} stopped at max_tokens={request.max_tokens} before finishing"
            )
        texts: list[str] = []
        data: dict[str, Any] | None = None
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use" and data is None and isinstance(block.input, dict):
                data = cast("dict[str, Any]", block.input)
        text = "".join(texts)
        if request.json_schema is not None and data is None:
            # Compatible servers without tool support answer in prose; look for JSON in it.
            data = try_parse_json_object(text)
        if not text and data is not None:
            text = json.dumps(data, ensure_ascii=False)
        return ChatResponse(
            text=text,
            data=data,
            usage=_usage(message),
            model=message.model or self._model,
            finish_reason=message.stop_reason or "stop",
            rate_limit=rate_limit,
        )


def _messages(request: ChatRequest, model: str) -> list[MessageParam]:
    """The conversation; a message's repeating part (`Message.cache_break`) ends in a cache
    breakpoint where the prompt up to it is long enough for the model to cache."""
    before = _tools_chars(request) + sum(
        len(m.content) for m in request.messages if m.role == "system"
    )
    out: list[dict[str, Any]] = []
    for m in (m for m in request.messages if m.role != "system"):
        cut = m.cache_break
        if cut is not None and 0 < cut < len(m.content) and pays_to_cache(model, before + cut):
            blocks = [
                {"type": "text", "text": m.content[:cut], "cache_control": _EPHEMERAL},
                {"type": "text", "text": m.content[cut:]},
            ]
            out.append({"role": m.role, "content": blocks})
        else:
            out.append({"role": m.role, "content": m.content})
        before += len(m.content)
    return cast("list[MessageParam]", out)


_EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Anthropic caches no prompt prefix shorter than this many tokens (its prompt-caching docs).
_MIN_CACHED_TOKENS = (("haiku-4", 4096), ("opus-4-5", 4096), ("haiku", 2048))
_DEFAULT_MIN_CACHED_TOKENS = 1024
_CHARS_PER_TOKEN = 4  # an estimate; a prefix a little short is simply not cached


def pays_to_cache(model: str, prefix_chars: int) -> bool:
    """Whether a prefix of `prefix_chars` characters is long enough for `model` to cache: a
    breakpoint on a shorter one is ignored by Anthropic, so it is not sent."""
    name = model.lower()
    minimum = next((n for key, n in _MIN_CACHED_TOKENS if key in name), _DEFAULT_MIN_CACHED_TOKENS)
    return prefix_chars >= minimum * _CHARS_PER_TOKEN


def _tools_chars(request: ChatRequest) -> int:
    # Tools come first in what Anthropic caches: the schema is part of every prefix.
    return len(json.dumps(request.json_schema)) if request.json_schema is not None else 0


def _usage(message: Message) -> Usage:
    usage = message.usage
    cache_read = usage.cache_read_input_tokens or 0
    cache_write = usage.cache_creation_input_tokens or 0
    # Anthropic's input_tokens leaves out cached and cache-writing tokens; OpenAI's
    # prompt_tokens counts them. VERA uses OpenAI's meaning so the two sum alike.
    return Usage(
        prompt_tokens=(usage.input_tokens or 0) + cache_read + cache_write,
        completion_tokens=usage.output_tokens or 0,
        cached_prompt_tokens=cache_read,
        cache_write_prompt_tokens=cache_write,
    )
