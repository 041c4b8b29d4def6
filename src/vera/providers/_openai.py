"""OpenAI chat completions, and every server that speaks the same API (vLLM, Ollama, llama.cpp).

The `openai` SDK is imported when a model is built, never when VERA is imported, so VERA runs
without it. The SDK's own retries are off: VERA retries in one place, once.

Structured output is negotiated, not assumed: servers that speak this API support different
subsets of `response_format` (llama-cpp-python's server takes `json_object` but answers
`json_schema` with HTTP 500; older Ollama and LM Studio builds differ again). By default
("auto") a model asks for a JSON schema first; a refusal that names the field (a 400, 422 or 500
whose body names `response_format`) makes it fall back, once per model, to JSON mode and then to
JSON asked in the prompt alone, with one warning. A mode the user chose (`--judge-output`) is
never changed: its refusal is an `OutputModeRefusedError`, which stops the run instead of being
retried as if the server were down.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, cast

from vera._types._errors import RunStopError
from vera._types._extras import install_hint
from vera.providers._base import (
    AuthenticationError,
    BadRequestError,
    ChatRequest,
    ChatResponse,
    MissingExtraError,
    ProviderError,
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

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

StructuredMode = Literal["json_schema", "json_object", "none"]

OUTPUT_MODES: dict[str, StructuredMode] = {
    "schema": "json_schema",
    "json": "json_object",
    "prompt": "none",
}
"""`--judge-output` (`judge_output` in vera.toml) and the `response_format` each asks for:
a JSON schema, JSON mode, or no field at all (the prompt alone asks for JSON)."""

_FALLBACK: dict[StructuredMode, StructuredMode] = {
    "json_schema": "json_object",
    "json_object": "none",
}
_WORD = {mode: word for word, mode in OUTPUT_MODES.items()}
# The statuses servers answer an unsupported `response_format` with: OpenAI and vLLM 400,
# FastAPI-based servers 422, llama-cpp-python's server 500 (its error handler wraps the 422).
_REFUSAL_STATUSES = frozenset({400, 422, 500})


def structured_mode(output: str) -> StructuredMode | Literal["auto"]:
    """The `structured` mode for a `judge_output` setting ("auto", "schema", "json", "prompt")."""
    return "auto" if output == "auto" else OUTPUT_MODES[output]


class OutputModeRefusedError(BadRequestError, RunStopError):
    """The server refused the structured-output mode the user chose (`--judge-output`): every
    later call would be refused alike, so the run stops with the modes left to try."""


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
    module: ModuleType = openai
    return module


class OpenAIChatModel(SdkAdapter):
    """A model behind the OpenAI chat-completions API.

    `structured` says how a JSON schema is asked for: "json_schema" (OpenAI, recent vLLM),
    "json_object" (servers that only promise *some* JSON), "none" (the prompt alone asks), or
    "auto" (the default): the best the server accepts, learnt from its first refusal (see the
    module docstring). Either way the reply is parsed tolerantly into `data`; when it holds no
    JSON object, `data` is None and `text` has the reply, for the caller to re-ask.
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
        structured: StructuredMode | Literal["auto"] = "auto",
    ) -> None:
        self._sdk = _import_sdk()
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._negotiates = structured == "auto"
        self._structured: StructuredMode = "json_schema" if structured == "auto" else structured
        self._client: AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def structured(self) -> StructuredMode:
        """How a JSON schema is asked for now: the chosen mode, or the one negotiated so far."""
        return self._structured

    @property
    def provider(self) -> str:
        """Always "openai", whichever server `base_url` points at."""
        return "openai"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send `request`; translate the reply or the failure into VERA's types. A refusal of
        the structured-output mode is answered by the next mode down (when negotiating), never
        by a retry of the same request."""
        while True:
            mode = self._structured
            try:
                return await self._send(request, mode)
            except ProviderError as error:
                if not self._refuses_output(error, request, mode):
                    raise
                self._fall_back(mode, error)

    def _refuses_output(self, error: ProviderError, request: ChatRequest, mode: str) -> bool:
        """Whether `error` is the server refusing `response_format` (it names the field)."""
        if request.json_schema is None or mode == "none":
            return False
        text = str(error).lower()
        named = "response_format" in text or "json_schema" in text
        return error.status in _REFUSAL_STATUSES and named

    def _fall_back(self, refused: StructuredMode, error: ProviderError) -> None:
        """Learn from the refusal of `refused`: the next mode down (one warning), or, for a
        mode the user chose, the error that stops the run."""
        if not self._negotiates:
            raise OutputModeRefusedError(
                f"{error}; the server does not accept --judge-output {_WORD[refused]} "
                f"(response_format {refused}): use --judge-output "
                f"{_WORD[_FALLBACK[refused]]}, or leave it unset to let VERA choose",
                status=error.status,
            ) from error
        if self._structured != refused:
            return  # a concurrent call learnt it already
        self._structured = _FALLBACK[refused]
        warnings.warn(
            f"{self._where()} refused response_format {refused} for {self._model} "
            f"(HTTP {error.status}); asking for {_describe_mode(self._structured)} from now "
            "on (set --judge-output to choose)",
            stacklevel=2,
        )

    async def _send(self, request: ChatRequest, mode: StructuredMode) -> ChatResponse:
        client = self._get_client()
        with self.sdk_errors():
            # The raw response, because the parsed one drops the rate-limit headers.
            raw = await client.chat.completions.with_raw_response.create(
                model=self._model,
                messages=_messages(request),
                **_sampling(self._model, request),
                # Sent as it is: the SDK's typed transform walks every node of the JSON
                # schema on each call, which costs more than the rest of the request.
                extra_body=_body_format(request, mode),
            )
            completion = raw.parse()
        if not isinstance(completion, self._sdk.types.chat.ChatCompletion):
            raise self._unreadable()
        return self._response(request, completion, rate_limit_info(raw.headers))

    def _get_client(self) -> AsyncOpenAI:
        # The client's connections belong to the event loop that opened them: a model that
        # serves a second run (`vera.evaluate` again, its own loop) opens a client of its own.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = self._make_client()
            self._client_loop = loop
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
        """The `response_format` body field for `request` in the current mode (the batch API
        sends the same), or nothing to add."""
        return _body_format(request, self._structured)

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


DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434/v1"
"""Where `ollama serve` listens by default, with the path of its OpenAI-compatible API."""


class OllamaChatModel(OpenAIChatModel):
    """A model an Ollama server runs ("ollama:qwen2.5:1.5b"), through Ollama's
    OpenAI-compatible API at `DEFAULT_OLLAMA_URL` unless `base_url` says otherwise. Structured
    output is negotiated as for any OpenAI-compatible server (Ollama 0.5 and later take a JSON
    schema)."""

    provider_label = "Ollama"
    default_host = "127.0.0.1:11434"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = BACKSTOP_TIMEOUT,
        structured: StructuredMode | Literal["auto"] = "auto",
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url or DEFAULT_OLLAMA_URL,
            timeout=timeout,
            structured=structured,
        )

    @property
    def provider(self) -> str:
        """Always "ollama", so that the judge's spec names the server it runs on."""
        return "ollama"


def _describe_mode(mode: StructuredMode) -> str:
    if mode == "none":
        return "JSON in the prompt alone (no response_format)"
    return f"response_format {mode}"


def _body_format(request: ChatRequest, mode: StructuredMode) -> dict[str, Any]:
    """The `response_format` body field for `request` in `mode`, or nothing to add."""
    found = response_format(request, mode)
    return {} if found is None else {"response_format": found}


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
    # Without the SDK installed (`mypy src` on the base install) its types are Any and the
    # cast is redundant; with it, the cast narrows VERA's roles to the SDK's literals.
    return cast(  # type: ignore[redundant-cast, unused-ignore]
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
