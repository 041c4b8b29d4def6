"""`ProviderOptions`: how every provider call of a run is limited, retried, cached and paid for.

The providers' own options, defined beside them so that the code building a managed model
(`vera.judges._registry`) reads them without importing `vera.plan._settings`, which sits above both:
`Settings` composes this model with the other components' options.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT
from vera.providers._health import DEFAULT_FAIL_FAST
from vera.providers._limits import DEFAULT_CONCURRENCY
from vera.providers._managed import DEFAULT_TIMEOUT

__all__ = ["ProviderOptions"]


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
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    cache: bool = True
    """Reuse provider replies from the response cache."""
    cache_path: Path | None = None
    """The cache file; default `~/.cache/vera/responses.sqlite` (see `VERA_CACHE_DIR`)."""
    max_cost: float | None = Field(default=None, ge=0)
    """US dollars; no new judge call starts once this is spent."""
    lock_timeout: float = Field(default=DEFAULT_LOCK_TIMEOUT, gt=0)
    """Seconds a write to the history or the cache waits for another run's write, before the
    run fails with exit 2."""
