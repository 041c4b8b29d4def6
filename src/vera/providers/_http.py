"""HTTP-level helpers shared by the provider adapters: status to error, Retry-After, rate-limit
headers, local URLs.

Both official SDKs come from the same generator and fail alike, so one mapping serves both.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import os
import re
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, cast
from urllib.parse import urlsplit

from vera._types._secrets import mask_secret
from vera.providers._base import (
    AuthenticationError,
    BadRequestError,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    RateLimitInfo,
    RetryableProviderError,
    UnreadableReplyError,
)

LOCAL_PLACEHOLDER_KEY = "not-needed"
"""Sent as the key to local servers, which ignore it but whose clients insist on one."""

BACKSTOP_TIMEOUT = 600.0
"""The SDK clients' own timeout, in seconds. The per-call timeout a run is configured with is
enforced by `ManagedChatModel` for every provider alike; this only ends a call that nothing
else would."""


def status_error(
    *,
    provider: str,
    status: int,
    message: str,
    headers: Mapping[str, str],
    key_env: str,
    hint: str = "",
    secret: str | None = None,
) -> ProviderError:
    """The VERA error for an HTTP error status from `provider`.

    `secret` is scrubbed from the server's message (`mask_secret`): some servers echo the key
    they rejected.
    """
    message = mask_secret(message, secret)
    detail = f"{provider} returned HTTP {status}: {message}"
    if hint:
        detail += f" ({hint})"
    if status in (400, 413, 422, 500) and _CONTEXT_TOO_SHORT.search(message):
        # Said with 400 by most servers and 500 by llama-cpp-python's: either way a retry
        # would be refused alike; only a longer context (or a shorter prompt) helps.
        return BadRequestError(f"{detail}. {CONTEXT_ADVICE}", status=status)
    if status in (401, 403):
        return AuthenticationError(
            f"{detail}. Check the key: set {key_env} or pass api_key", status=status
        )
    if status == 429:
        return RateLimitError(
            detail,
            status=status,
            retry_after=retry_after_seconds(headers),
            rate_limit=rate_limit_info(headers),
        )
    if status >= 500 or status in (408, 409):
        return RetryableProviderError(
            detail, status=status, retry_after=retry_after_seconds(headers)
        )
    if status == 404:
        return ModelNotFoundError(detail, status=status)
    if status in (400, 413, 422):
        return BadRequestError(detail, status=status)
    return ProviderError(detail, status=status)


_CONTEXT_TOO_SHORT = re.compile(
    r"exceeds? (?:the )?(?:available )?context|context window|context length|context size|"
    r"maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)
"""How servers say a prompt does not fit the model's context: llama-cpp-python ("Requested
tokens (5000) exceed context window of 4096"), llama.cpp's llama-server ("the request exceeds
the available context size"), vLLM and OpenAI ("maximum context length is ...")."""

CONTEXT_ADVICE = (
    "The prompt does not fit the model's context window on this server: start it with a "
    "longer context (llama-server -c 8192, llama-cpp-python --n_ctx 8192, vLLM "
    "--max-model-len 8192, Ollama num_ctx), or lower --max-tokens, --max-context-chars"
)
"""What to do when a server says the prompt is longer than its context."""


def sdk_status_error(
    exc: Any, *, provider: str, model: str, where: str, key_env: str, secret: str | None
) -> ProviderError:
    """The VERA error for an SDK's `APIStatusError` (both SDKs shape it alike)."""
    status = cast(int, exc.status_code)
    hint = f"check the model name {model!r} and the base URL ({where})" if status == 404 else ""
    return status_error(
        provider=provider,
        status=status,
        message=server_message(exc.body, cast(str, exc.message)),
        headers=exc.response.headers,
        key_env=key_env,
        hint=hint,
        secret=secret,
    )


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return _non_negative(float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _non_negative(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return _non_negative(when.timestamp() - (time.time() if now is None else now))


def _non_negative(seconds: float) -> float | None:
    return max(seconds, 0.0) if math.isfinite(seconds) else None


# (limit, remaining, reset) header names for one limit, in each dialect, first match wins.
# Anthropic's `tokens-*` are the most restrictive token limit in force; a server that sends
# only the input-token ones is paced by those.
_REQUEST_HEADERS = (
    ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    (
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
    ),
)
_TOKEN_HEADERS = (
    ("x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    (
        "anthropic-ratelimit-tokens-limit",
        "anthropic-ratelimit-tokens-remaining",
        "anthropic-ratelimit-tokens-reset",
    ),
    (
        "anthropic-ratelimit-input-tokens-limit",
        "anthropic-ratelimit-input-tokens-remaining",
        "anthropic-ratelimit-input-tokens-reset",
    ),
)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")
_DURATION = re.compile(rf"(?:{_DURATION_PART.pattern})+")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def rate_limit_info(
    headers: Mapping[str, str], *, now: float | None = None
) -> RateLimitInfo | None:
    """The rate limits a reply's headers state (OpenAI's or Anthropic's), or None without any.

    A header that cannot be read counts as absent: pacing is an optimisation, never a reason
    to fail a call that succeeded.
    """
    requests = _limit_headers(headers, _REQUEST_HEADERS, now)
    tokens = _limit_headers(headers, _TOKEN_HEADERS, now)
    if requests is None and tokens is None:
        return None
    r_limit, r_left, r_reset = requests or (None, None, None)
    t_limit, t_left, t_reset = tokens or (None, None, None)
    return RateLimitInfo(
        requests_limit=r_limit,
        requests_remaining=r_left,
        requests_reset=r_reset,
        tokens_limit=t_limit,
        tokens_remaining=t_left,
        tokens_reset=t_reset,
    )


def _limit_headers(
    headers: Mapping[str, str], dialects: tuple[tuple[str, str, str], ...], now: float | None
) -> tuple[float | None, float | None, float | None] | None:
    for limit, remaining, reset in dialects:
        values = (headers.get(limit), headers.get(remaining), headers.get(reset))
        if any(v is not None for v in values):
            return _count(values[0]), _count(values[1]), _reset_seconds(values[2], now=now)
    return None


def _count(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _reset_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds until a limit resets, from a duration ("1s", "6m0s", "20ms", "1m30s": OpenAI),
    bare seconds, or an RFC 3339 time ("2025-01-01T00:00:30Z": Anthropic)."""
    if value is None:
        return None
    value = value.strip()
    if _DURATION.fullmatch(value):
        parts = _DURATION_PART.findall(value)
        return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    seconds = _count(value)
    if seconds is not None:
        return seconds
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None  # a time without a zone could be anyone's
    return _non_negative(when.timestamp() - (time.time() if now is None else now))


def is_local_url(url: str | None) -> bool:
    """True for a base URL on this machine or a private network, where servers need no key."""
    if not url:
        return False
    host = urlsplit(url if "//" in url else f"//{url}").hostname
    if host is None:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def resolve_api_key(
    api_key: str | None, *, key_env: str, base_url: str | None, url_env: str
) -> str | None:
    """The key to hand an SDK: the given one, else None so the SDK reads `key_env`, else, for
    a local server that needs none, a placeholder its client will accept."""
    if api_key or os.environ.get(key_env):
        return api_key
    if is_local_url(base_url or os.environ.get(url_env)):
        return LOCAL_PLACEHOLDER_KEY
    return None


def missing_api_key(model: object) -> str | None:
    """The variable a chat model (or the managed model around it) would read its key from,
    when no key is given or set there and its server is not a local one that needs none;
    None when it has one, or is no SDK's model. For `--dry-run`, which calls nothing and so
    would otherwise never say that the run will fail for want of a key."""
    while hasattr(model, "inner"):
        model = getattr(model, "inner")  # noqa: B009 (a managed model's, untyped here)
    if not isinstance(model, SdkAdapter) or not model.key_required:
        return None
    key = resolve_api_key(
        model._api_key, key_env=model.key_env, base_url=model._base_url, url_env=model.url_env
    )
    return None if key or os.environ.get(model.key_env) else model.key_env


def describe_cause(exc: BaseException) -> str:
    """The underlying reason for a connection failure; SDKs wrap it in "Connection error."."""
    cause = exc.__cause__ or exc
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


def server_message(body: object, fallback: str) -> str:
    """The human-readable message in an error body, else `fallback`."""
    # OpenAI's SDK hands over the inner {"message": ...}; Anthropic's the whole
    # {"type": "error", "error": {"message": ...}}.
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return cast(str, inner["message"])
        if isinstance(body.get("message"), str):
            return cast(str, body["message"])
    return fallback


class SdkAdapter:
    """What both SDK adapters share: the model name, a key-free repr, and what they say when a
    call fails (where it went, and the error to raise).

    An adapter sets the class attributes and keeps `_model`, `_api_key`, `_base_url` and
    `_timeout`.
    """

    provider_label: str
    key_env: str
    url_env: str
    default_host: str
    key_required: bool = True
    """Whether a call without a key fails (`missing_api_key`); LiteLLM's routes vary."""
    _model: str
    _api_key: str | None
    _base_url: str | None
    _timeout: float
    _sdk: Any

    @property
    def model(self) -> str:
        """The model name sent with each request."""
        return self._model

    def __repr__(self) -> str:
        # The key is deliberately absent: reprs end up in logs and tracebacks.
        url = f", base_url={self._base_url!r}" if self._base_url else ""
        return f"{type(self).__name__}({self._model!r}{url})"

    def _where(self) -> str:
        return self._base_url or os.environ.get(self.url_env) or self.default_host

    def _status_error(self, exc: Any) -> ProviderError:
        return sdk_status_error(
            exc,
            provider=self.provider_label,
            model=self._model,
            where=self._where(),
            key_env=self.key_env,
            secret=self._api_key or os.environ.get(self.key_env),
        )

    def _timeout_error(self) -> ProviderTimeoutError:
        return ProviderTimeoutError(
            f"{self.provider_label} request to {self._where()} timed out after {self._timeout:g}s"
        )

    def _connection_error(self, exc: BaseException) -> ProviderConnectionError:
        return ProviderConnectionError(f"could not reach {self._where()}: {describe_cause(exc)}")

    def _unreadable(self) -> UnreadableReplyError:
        return UnreadableReplyError(
            f"unreadable reply from {self._where()}; is it an {self.provider_label}-compatible API?"
        )

    @contextlib.contextmanager
    def sdk_errors(self) -> Iterator[None]:
        """The SDK's failures inside, as VERA's errors: one translation for the interactive
        calls and the batch APIs alike."""
        sdk = self._sdk
        try:
            yield
        except sdk.APIStatusError as exc:
            raise self._status_error(exc) from None
        except sdk.APITimeoutError as exc:
            raise self._timeout_error() from exc
        except sdk.APIConnectionError as exc:
            raise self._connection_error(exc) from exc
        except (sdk.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise self._unreadable() from exc
