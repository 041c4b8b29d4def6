"""`ProviderOptions`: how every provider call of a run is limited, retried, cached and paid for.

The providers' own options, defined beside them so that the code building a managed model
(`vera.judges._registry`) reads them without importing `vera._plan._settings`, which sits above
both: `Settings` composes this model with the other components' options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT
from vera.providers._health import DEFAULT_FAIL_FAST
from vera.providers._limits import DEFAULT_CONCURRENCY
from vera.providers._managed import DEFAULT_TIMEOUT


class ProviderOptions(BaseModel):
    """The provider settings of a run; their keys are `Settings`' (and `vera.toml`'s) too."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider_concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    """Calls in flight at once per provider model."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Seconds one provider call may take; a call that times out is tried once more."""
    retries: int = Field(default=5, ge=0)
    """Further attempts after a provider call fails in a way that may pass (429, 5xx, dropped
    connection)."""
    fail_fast: int = Field(default=DEFAULT_FAIL_FAST, ge=0)
    """Stop the run when this many first provider calls all fail with the same cause
    (connection refused, timeout, 5xx after retries); 0 turns the check off."""
    judge_output: Literal["auto", "schema", "json", "prompt"] = "auto"
    """How JSON is asked of an OpenAI-compatible server (openai:, ollama:, litellm:): "schema"
    (`response_format` json_schema), "json" (json_object, JSON mode), "prompt" (no
    `response_format`: the prompt alone asks), or "auto": the best the server accepts, learnt
    from its first refusal, with one warning (see docs/local-judges.md)."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    cache: bool = True
    """Reuse provider replies from the response cache."""
    cache_path: Path | None = None
    """The cache file; default `~/.cache/vera/responses.sqlite` (see `VERA_CACHE_DIR`)."""
    max_cost: float | None = Field(default=None, ge=0)
    """US dollars; no new judge call starts once this is spent."""
    batch: bool = False
    """Send judge and generator calls through the provider's batch API (OpenAI, Anthropic):
    half the price, replies within hours (see docs/cost.md, "Batch APIs")."""
    batch_retry: Literal["batch", "direct"] = "batch"
    """With `batch`: a request its batch did not answer (expired, cancelled, failed in a way
    that may pass) goes in a later batch, or "direct"ly through the interactive API."""
    batch_poll: float = Field(default=30.0, gt=0)
    """With `batch`: seconds between two looks at a pending batch."""
    batch_window: float = Field(default=2.0, gt=0)
    """With `batch`: a batch is submitted once no new request came for this many seconds."""
    batch_size: int = Field(default=10_000, ge=1, le=50_000)
    """With `batch`: the most requests in one batch, and the samples in flight at once."""
    lock_timeout: float = Field(default=DEFAULT_LOCK_TIMEOUT, gt=0)
    """Seconds a write to the history or the cache waits for another run's write, before the
    run fails with exit 2."""
