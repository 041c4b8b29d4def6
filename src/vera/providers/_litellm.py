"""Any model LiteLLM can reach (Gemini, Bedrock, Ollama, Mistral, …), as `litellm:MODEL`.

MODEL is LiteLLM's own model string: "gemini/gemini-2.0-flash", "ollama/llama3",
"openai/gpt-4o-mini". LiteLLM reads each provider's key from that provider's usual variable.

`litellm` is imported when a model is built, never when VERA is imported. LiteLLM's own retries
and caching are off: VERA's `ManagedChatModel` retries, caches and counts cost in one place, and
a second layer would multiply the attempts and hide calls from the ledger. Its failures, which
subclass the OpenAI SDK's, are mapped onto VERA's errors exactly as the OpenAI adapter's are.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from vera._types._extras import install_hint
from vera.providers._base import (
    ChatRequest,
    ChatResponse,
    MissingExtraError,
    ProviderConnectionError,
    ProviderError,
    RetryableProviderError,
    TruncatedOutputError,
    UnreadableReplyError,
    Usage,
)
from vera.providers._cost import Price, register_price_source
from vera.providers._http import (
    BACKSTOP_TIMEOUT,
    SdkAdapter,
    rate_limit_info,
    resolve_api_key,
    server_message,
    status_error,
)
from vera.providers._jsonparse import try_parse_json_object
from vera.providers._openai import StructuredMode, response_format

# Providers whose credentials are not one `<PROVIDER>_API_KEY`, for the message a rejected
# key gets.
_CREDENTIALS = {
    "bedrock": "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
    "sagemaker": "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
}
_HEADER_PREFIX = "llm_provider-"
_PER_MILLION = 1_000_000


LOCAL_COST_MAP = "LITELLM_LOCAL_MODEL_COST_MAP"


def use_local_cost_map() -> None:
    """Have LiteLLM, once imported, read the price table it ships with.

    Importing LiteLLM fetches its price table from GitHub unless told to use its own copy: on
    a machine without internet that is a timeout before the first call. A value the user set
    (`False`, to get today's prices) is theirs to keep.
    """
    os.environ.setdefault(LOCAL_COST_MAP, "True")


def _import_litellm() -> Any:
    """The `litellm` module, as `Any`: it is the one untyped boundary of this adapter."""
    use_local_cost_map()
    try:
        import litellm
    except ImportError as exc:
        raise MissingExtraError(
            f"the LiteLLM provider needs litellm: {install_hint('litellm')}"
        ) from exc
    # Its "Give Feedback / Get Help" banner goes to stdout on every failure, which VERA
    # retries and reports itself.
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class LiteLLMChatModel(SdkAdapter):
    """A model behind LiteLLM's `acompletion`.

    A JSON schema is sent as a `json_schema` response format where LiteLLM says the model
    supports one, else as JSON mode (`json_object`), as the OpenAI adapter's fallback does;
    either way the reply is parsed tolerantly into `data`.
    """

    provider_label = "LiteLLM"
    default_host = "the provider's default endpoint"
    key_required = False  # a local route (ollama/...) needs none, and LiteLLM knows which

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = BACKSTOP_TIMEOUT,
        structured: StructuredMode | None = None,
    ) -> None:
        self._litellm = _import_litellm()
        self._model = model
        self._base_url = base_url
        self._timeout = timeout
        self._route = _route(self._litellm, model)
        self.key_env = _CREDENTIALS.get(self._route, f"{self._route.upper()}_API_KEY")
        self.url_env = f"{self._route.upper()}_API_BASE"
        self._api_key = resolve_api_key(
            api_key, key_env=self.key_env, base_url=base_url, url_env=self.url_env
        )
        self._structured: StructuredMode = structured or _structured_mode(self._litellm, model)
        self.provider_label = f"LiteLLM ({self._route})"

    @property
    def provider(self) -> str:
        """Always "litellm"; the route is part of the model name ("gemini/...")."""
        return "litellm"

    @property
    def structured(self) -> StructuredMode:
        """How a JSON schema is asked for: "json_schema" or the "json_object" fallback."""
        return self._structured

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send `request` once; translate the reply or the failure into VERA's types."""
        try:
            reply = await self._litellm.acompletion(**self._arguments(request))
        except Exception as exc:
            raise self._error(exc) from exc
        return self._response(request, reply)

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": self._timeout,
            # Both layers of LiteLLM's retries (its own loop and the SDK client's) and its
            # cache: VERA's wrapper does all three, and must see every attempt.
            "num_retries": 0,
            "max_retries": 0,
            "caching": False,
        }
        if self._base_url:
            arguments["api_base"] = self._base_url
        if self._api_key:
            arguments["api_key"] = self._api_key
        found = response_format(request, self._structured)
        if found is not None:
            arguments["response_format"] = found
        return arguments

    def _error(self, exc: Exception) -> ProviderError:
        """VERA's error for a failed `acompletion`, mapped as the OpenAI adapter maps its SDK's."""
        litellm = self._litellm
        # Timeout and APIConnectionError carry a made-up status 408/500: check them first.
        if isinstance(exc, litellm.Timeout):
            return self._timeout_error()
        if isinstance(exc, litellm.APIConnectionError):
            return self._connection_error(exc)
        # LiteLLM reports a refused connection, and a reply it could not read, as its own
        # "HTTP 500": the cause it wraps says which it was.
        refused = _connection_cause(exc)
        if refused is not None:
            return ProviderConnectionError(f"could not reach {self._where()}: {refused}")
        if _unreadable_cause(exc):
            return UnreadableReplyError(
                f"unreadable reply from {self._where()} ({_message(exc)[:200]}); is it the "
                f"API {self._model!r} is served by?"
            )
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and status >= 400:
            return status_error(
                provider=self.provider_label,
                status=status,
                message=server_message(getattr(exc, "body", None), _message(exc)),
                headers=_error_headers(exc),
                key_env=self.key_env,
                hint=self._hint(status),
                secret=self._api_key or os.environ.get(self.key_env),
            )
        if isinstance(exc, ProviderError):
            return exc
        return RetryableProviderError(f"{self.provider_label} call failed: {_message(exc)}")

    def _hint(self, status: int) -> str:
        if status != 404:
            return ""
        return f"check the model name {self._model!r} and the base URL ({self._where()})"

    def _response(self, request: ChatRequest, reply: Any) -> ChatResponse:
        choices = getattr(reply, "choices", None)
        if not choices:
            raise UnreadableReplyError(f"reply from {self._where()} had no choices")
        choice = choices[0]
        if choice.finish_reason == "length":
            raise TruncatedOutputError(
                f"{self._model} stopped at max_tokens={request.max_tokens} before finishing"
            )
        text = str(getattr(choice.message, "content", None) or "")
        data = try_parse_json_object(text) if request.json_schema is not None else None
        return ChatResponse(
            text=text,
            data=data,
            usage=_usage(getattr(reply, "usage", None)),
            model=str(getattr(reply, "model", None) or self._model),
            finish_reason=str(choice.finish_reason or "stop"),
            rate_limit=rate_limit_info(_reply_headers(reply)),
        )


def _route(litellm: Any, model: str) -> str:
    """The provider LiteLLM sends `model` to ("openai", "gemini", …)."""
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:
        # An unmapped name still goes out under its prefix; LiteLLM says more on the call.
        return model.partition("/")[0] if "/" in model else "openai"


def _structured_mode(litellm: Any, model: str) -> StructuredMode:
    try:
        supported = bool(litellm.supports_response_schema(model=model))
    except Exception:
        supported = False  # an unmapped model: JSON mode is what most servers accept
    return "json_schema" if supported else "json_object"


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it wraps, outermost first (each once: a chain may loop)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _connection_cause(exc: BaseException) -> str | None:
    """The connection failure `exc` wraps ("ConnectError: All connection attempts failed"),
    or None when it wraps none."""
    import httpx  # LiteLLM's own dependency, loaded with it
    import openai

    for cause in _causes(exc):
        if isinstance(cause, openai.APITimeoutError):
            return None  # a timeout, which the wrapper's own deadline reports
        if isinstance(cause, httpx.TransportError | ConnectionError):
            return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    return None


_INVALID_REPLY = "invalid response from llm endpoint"


def _unreadable_cause(exc: BaseException) -> bool:
    """Whether `exc` says the server's reply could not be read (not JSON, or not the API's)."""
    return any(isinstance(cause, json.JSONDecodeError) for cause in _causes(exc)) or (
        _INVALID_REPLY in _message(exc).lower()
    )


def _message(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    return str(message) if message else (str(exc) or type(exc).__name__)


def _lower(headers: Any) -> dict[str, str]:
    if not isinstance(headers, Mapping):
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _error_headers(exc: BaseException) -> dict[str, str]:
    """The failed reply's headers: LiteLLM keeps the provider's on the exception it raises;
    its `response` is often one it built, without them."""
    kept = _lower(getattr(exc, "litellm_response_headers", None))
    response = getattr(exc, "response", None)
    return {**_lower(getattr(response, "headers", None)), **kept}


def _reply_headers(reply: Any) -> dict[str, str]:
    """The provider's headers on a reply: raw where LiteLLM kept them, else its copies."""
    raw = _lower(getattr(reply, "_response_headers", None))
    if raw:
        return raw
    hidden = getattr(reply, "_hidden_params", None)
    extra = _lower(hidden.get("additional_headers") if isinstance(hidden, Mapping) else None)
    return {k.removeprefix(_HEADER_PREFIX): v for k, v in extra.items()}


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cached_prompt_tokens=int(cached or 0),
    )


# The ledger asks on every call; the bundled map does not change within a process.
@lru_cache(maxsize=256)
def litellm_price(model: str) -> Price | None:
    """LiteLLM's list price for `model` (its bundled cost map), or None where it has none.

    Registered with the cost ledger once this module is imported, which building any
    `litellm:` model does; VERA's own table is asked first.
    """
    try:
        info = _import_litellm().get_model_info(model)
        per_input = float(info["input_cost_per_token"])
        per_output = float(info["output_cost_per_token"])
    except Exception:
        return None  # unmapped: the ledger lists the model as unpriced
    cached = info.get("cache_read_input_token_cost")
    return Price(
        input=per_input * _PER_MILLION,
        output=per_output * _PER_MILLION,
        cached_input=float(cached) * _PER_MILLION if cached is not None else None,
    )


register_price_source("litellm", litellm_price)
