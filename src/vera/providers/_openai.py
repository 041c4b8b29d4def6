"""OpenAI chat completions, and every server that speaks the same API (vLLM, Ollama, llama.cpp).

The `openai` SDK is imported when a model is built, never when VERA is imported, so VERA runs
without it. The SDK's own retries are off: VERA retries in one place, once.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, cast

from vera.providers._base import (
    AuthenticationError,
    ChatRequest,
    ChatResponse,
    MissingExtraError,
    RateLimitInfo,
    TruncatedOutputError,
    UnreadableReplyError,
    Usage,
)
from vera.providers._http import (
    BACKSTOP_TIMEOUT,
    SdkAdapter,
    rate_limit_info,
    resolve_api_key,
)
from vera.providers._jsonparse import try_parse_json_object
from vera.types._extras import install_hint

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

__all__ = ["OpenAIChatModel", "StructuredMode", "response_format"]

StructuredMode = Literal["json_schema", "json_object", "none"]


_KEY_ENV = "OPENAI_API_KEY"
_URL_ENV = "OPENAI_BASE_URL"


def _import_sdk() -> ModuleType:
    try:
        import openai

        # The SDK imports its API resources on first use, which would stall the event loop
        # (~0.3 s) in the middle of the first requests; import them here, before any run.
        import openai.resources
    except ImportError as exc:
        raise MissingExtraError(
            f"the OpenAI provider needs the openai SDK: {install_hint('openai')}"
        ) from exc
    return openai


class OpenAIChatModel(SdkAdapter):
    """A model behind the OpenAI chat-completions API.

    `structured` says how a JSON schema is asked for: "json_schema" (OpenAI, recent vLLM),
    "json_object" (servers that only promise *some* JSON), or "none" (the prompt alone asks).
    Either way the reply is parsed tolerantly into `data`; when it holds no JSON object, `data`
    is None and `text` has the reply, for the caller to re-ask.
    """

    provider_label = "OpenAI"
    key_env = _KEY_ENV
    url_env = _URL_ENV
    default_host = "api.openai.com"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = BACKSTOP_TIMEOUT,
        structured: StructuredMode = "json_schema",
    ) -> None:
        self._sdk = _import_sdk()
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._structured: StructuredMode = structured
        self._client: AsyncOpenAI | None = None

    @property
    def provider(self) -> str:
        """Always "openai", whichever server `base_url` points at."""
        return "openai"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send `request` once; translate the reply or the failure into VERA's types."""
        client = self._get_client()
        with self.sdk_errors():
            # The raw response, because the parsed one drops the rate-limit headers.
            raw = await client.chat.completions.with_raw_response.create(
                model=self._model,
                messages=_messages(request),
                **_sampling(self._model, request),
                # Sent as it is: the SDK's typed transform walks every node of the JSON
                # schema on each call, which costs more than the rest of the request.
                extra_body=self._response_format(request),
            )
            completion = raw.parse()
        if not isinstance(completion, self._sdk.types.chat.ChatCompletion):
            raise self._unreadable()
        return self._response(request, completion, rate_limit_info(raw.headers))

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> AsyncOpenAI:
        key = resolve_api_key(
            self._api_key, key_env=_KEY_ENV, base_url=self._base_url, url_env=_URL_ENV
        )
        try:
            client = self._sdk.AsyncOpenAI(
                api_key=key, base_url=self._base_url, timeout=self._timeout, max_retries=0
            )
        except self._sdk.OpenAIError as exc:
            raise AuthenticationError(
                f"no OpenAI API key: set {_KEY_ENV} or pass api_key; a local server "
                f"(base_url=http://localhost:...) needs none"
            ) from exc
        return cast("AsyncOpenAI", client)

    def _response_format(self, request: ChatRequest) -> dict[str, Any]:
        """The `response_format` body field for `request`, or nothing to add."""
        found = response_format(request, self._structured)
        return {} if found is None else {"response_format": found}

    def _response(
        self, request: ChatRequest, completion: ChatCompletion, rate_limit: RateLimitInfo | None
    ) -> ChatResponse:
        if not completion.choices:
            raise UnreadableReplyError(f"reply from {self._where()} had no choices")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise TruncatedOutputError(
                f"{self._model} stopped at max_tokens={request.max_tokens} before finishing"
            )
        text = choice.message.content or ""
        data = try_parse_json_object(text) if request.json_schema is not None else None
        return ChatResponse(
            text=text,
            data=data,
            usage=_usage(completion),
            model=completion.model or self._model,
            finish_reason=choice.finish_reason or "stop",
            rate_limit=rate_limit,
        )


def response_format(request: ChatRequest, structured: StructuredMode) -> dict[str, Any] | None:
    """The OpenAI-style `response_format` asking for `request`'s JSON schema in the way
    `structured` says, or None when nothing is to be asked (also used by the LiteLLM adapter,
    whose OpenAI-compatible routes take the same field)."""
    if request.json_schema is None or structured == "none":
        return None
    if structured == "json_object":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        # Not strict: strict mode rejects common schema features (optional fields,
        # open objects), and VERA validates the reply anyway.
        "json_schema": {
            "name": request.schema_name,
            "schema": request.json_schema,
            "strict": False,
        },
    }


_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


def _sampling(model: str, request: ChatRequest) -> dict[str, Any]:
    """Length and temperature as the model accepts them.

    OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…) refuse `max_tokens` and any temperature
    but the default; other servers (vLLM, Ollama, older models) know only `max_tokens`.
    """
    if _REASONING_MODEL.match(model.rsplit("/", 1)[-1].lower()):
        return {"max_completion_tokens": request.max_tokens}
    return {"max_tokens": request.max_tokens, "temperature": request.temperature}


def _messages(request: ChatRequest) -> list[ChatCompletionMessageParam]:
    return cast(
        "list[ChatCompletionMessageParam]",
        [{"role": m.role, "content": m.content} for m in request.messages],
    )


def _usage(completion: ChatCompletion) -> Usage:
    usage = completion.usage
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = details.cached_tokens if details is not None else None
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cached_prompt_tokens=cached or 0,
    )
