"""The seam between VERA and LLM providers: one request type, one response type, one protocol.

Errors a provider raises are translated into this tree, which says what may be retried:

    ProviderError                      (VeraError)
     ├── RetryableProviderError        429, 5xx, timeouts, dropped connections
     │    ├── RateLimitError           429; carries Retry-After when the server sent it
     │    ├── ProviderTimeoutError     no reply within the per-call timeout
     │    ├── ProviderConnectionError  the server could not be reached (refused, DNS, reset)
     │    └── UnreadableReplyError     a reply that is not the API's (an HTML page, cut short)
     ├── AuthenticationError           401 / 403: fix the key; never retried; stops the run
     ├── BadRequestError               400 / 422: fix the request; never retried
     │    └── ModelNotFoundError       404: fix the model name or base URL; stops the run
     ├── ProviderUnavailableError      the first calls all failed alike; stops the run
     ├── TruncatedOutputError          the reply hit max_tokens; the caller splits the work
     └── MissingExtraError             the provider's SDK is not installed
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from vera._types._errors import RunStopError, VeraError
from vera._types._secrets import redact


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str
    cache_break: int | None = None
    """Where the part of `content` that repeats across calls ends (instructions and the
    sample's contexts, before what varies): a provider with explicit prompt caching
    (Anthropic) marks a cache breakpoint there when the prefix is long enough to be cached.
    Not part of the response cache key: it changes the bill, never the reply."""


class ChatRequest(BaseModel):
    """What VERA asks a model. Everything here can change the output, so all of it is keyed
    in the response cache (plus the prompt version)."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    json_schema: dict[str, Any] | None = None
    """When set, the reply must be a JSON object matching this schema."""
    schema_name: str = "response"
    temperature: float = 0.0
    max_tokens: int = 2048
    prompt_version: str = ""
    """The version of the prompt that built `messages`; part of the cache key."""
    draw: int = 0
    """Which of several independent draws of the same request this is (`samples=k`). Never
    sent to the provider; keyed in the cache so that k draws are k calls, not one call reused."""


class Usage(BaseModel):
    """Tokens one call used, as the provider reported them."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Prompt tokens read from the provider's prompt cache (part of `prompt_tokens`)."""
    cache_write_prompt_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache (part of `prompt_tokens`); only
    Anthropic reports and bills them apart."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            cache_write_prompt_tokens=self.cache_write_prompt_tokens
            + other.cache_write_prompt_tokens,
        )


class RateLimitInfo(BaseModel):
    """What a provider's rate-limit headers said on one reply; None where a header was absent.

    Limits are per minute (OpenAI's `x-ratelimit-*` and Anthropic's `anthropic-ratelimit-*`
    both count per minute); a reset is the seconds from the reply until that limit is whole
    again.
    """

    model_config = ConfigDict(frozen=True)

    requests_limit: float | None = None
    requests_remaining: float | None = None
    requests_reset: float | None = None
    tokens_limit: float | None = None
    tokens_remaining: float | None = None
    tokens_reset: float | None = None


class ChatResponse(BaseModel):
    """A model's reply: its text, the parsed JSON where a schema was asked for, and usage."""

    model_config = ConfigDict(frozen=True)

    text: str
    data: dict[str, Any] | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    finish_reason: str = "stop"
    cached: bool = False
    """True when the reply came from VERA's response cache, not the provider."""
    rate_limit: RateLimitInfo | None = Field(default=None, exclude=True)
    """The provider's rate-limit headers on this reply, for pacing. Left out of every dump,
    so the response cache never stores it: a cached reply says nothing about the server now."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind some provider. Adapters translate; they never retry or cache."""

    @property
    def provider(self) -> str:
        """The provider's name, e.g. "openai"."""
        ...

    @property
    def model(self) -> str:
        """The model's name at that provider."""
        ...

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Send one request and return the reply, or raise a `ProviderError`."""
        ...


class ProviderError(VeraError):
    """A provider call failed. `status` is the HTTP status where there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        # Messages name the server, whose URL may carry a key; take it out before anyone
        # logs, stores or prints this.
        super().__init__(redact(message))
        self.status = status


class RetryableProviderError(ProviderError):
    """A failure that may pass on a later attempt."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class RateLimitError(RetryableProviderError):
    """429: too many requests or tokens; wait `retry_after` seconds where given.

    `rate_limit` holds the limits the refusal's headers stated, for pacing: a limiter that
    learns them from the first 429 stops the 429s of every request started meanwhile.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        rate_limit: RateLimitInfo | None = None,
    ) -> None:
        super().__init__(message, status=status, retry_after=retry_after)
        self.rate_limit = rate_limit


class ProviderTimeoutError(RetryableProviderError):
    """No reply within the per-call timeout."""


class ProviderConnectionError(RetryableProviderError):
    """The server could not be reached: connection refused or reset, or a DNS failure."""


class UnreadableReplyError(RetryableProviderError):
    """The server answered, but not in the API's format: an HTML error page from a proxy, a
    body cut off half-way, a reply with no choices. A fault of the provider, not of the
    judge's prompt: retried, and counted by the fail-fast check like a 5xx."""


class ProviderUnavailableError(ProviderError, RunStopError):
    """The first calls of a run all failed with the same cause (see `ProviderHealth`): the
    provider is down or misconfigured, so every later call would fail too. Stops the run."""


class AuthenticationError(ProviderError, RunStopError):
    """401/403: the key is missing, wrong or lacks access. Stops the run: every later call
    would be refused the same way."""


class BadRequestError(ProviderError):
    """400/404/422: the request or the model name is wrong."""


class ModelNotFoundError(BadRequestError, RunStopError):
    """404: no such model at this base URL. Stops the run, like a rejected key."""


class TruncatedOutputError(ProviderError):
    """The reply stopped at max_tokens before it was complete."""


class MissingExtraError(ProviderError):
    """A provider's SDK is not installed; the message gives the pip command."""
