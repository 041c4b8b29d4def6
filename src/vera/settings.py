"""One settings object, merged in layers: defaults < config file < environment < CLI flags.

The config file is `vera.toml` in the working directory, else the `[tool.vera]` table of
`pyproject.toml` there. Keys are the field names below (dashes or underscores). The environment
gives `VERA_JUDGE` and `VERA_JUDGE_BASE_URL`; provider keys stay in the providers' own
variables and are never part of settings.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vera.datasets.fields import check_field_map
from vera.errors import ConfigError
from vera.gates import GateConfig
from vera.judges.cascade import DEFAULT_HIGH as DEFAULT_CASCADE_HIGH
from vera.judges.cascade import DEFAULT_LOW as DEFAULT_CASCADE_LOW
from vera.providers.health import DEFAULT_FAIL_FAST
from vera.providers.limits import DEFAULT_CONCURRENCY as DEFAULT_PROVIDER_CONCURRENCY
from vera.providers.managed import DEFAULT_TIMEOUT
from vera.sample_limits import (
    DEFAULT_MAX_CONTEXT_CHARS,
    DEFAULT_MAX_RESPONSE_CHARS,
    DEFAULT_SAMPLE_TIMEOUT,
)
from vera.sqlite_file import DEFAULT_LOCK_TIMEOUT

__all__ = ["DEFAULT_CONCURRENCY", "Settings", "load_settings"]

DEFAULT_CONCURRENCY = 8
"""Samples evaluated at once unless configured."""

ENVIRONMENT = {"VERA_JUDGE": "judge", "VERA_JUDGE_BASE_URL": "judge_base_url"}


class Settings(BaseModel):
    """Everything a run can be configured with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: str = "offline"
    """"offline", "nli:PATH_OR_HUB_ID", "cascade", or PROVIDER:MODEL such as
    "openai:gpt-4o-mini"."""
    judge_base_url: str | None = None
    """The provider's base URL, for OpenAI-compatible servers (vLLM, Ollama, Azure…)."""
    judge_mode: Literal["batched", "per_claim", "truths", "single_call"] = "batched"
    """How an LLM judge splits the work into calls (see `vera.judges.llm`)."""
    judge_samples: int = Field(default=1, ge=1)
    """Verification draws per claim; above 1 the majority verdict is kept."""
    judge_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    judge_max_tokens: int = Field(default=2048, ge=16)
    """The reply budget of one judge call; a reply cut off at it is split into smaller calls."""
    judge_prompts_dir: Path | None = None
    """A folder of prompt files that replace the bundled ones of the same name."""
    cascade_judge: str | None = None
    """With `judge = "cascade"`: the judge (PROVIDER:MODEL) for claims the offline judge is
    unsure of."""
    cascade_low: float = Field(default=DEFAULT_CASCADE_LOW, ge=0.0, le=1.0)
    """An offline entailment probability at most this decides the claim offline."""
    cascade_high: float = Field(default=DEFAULT_CASCADE_HIGH, ge=0.0, le=1.0)
    """An offline entailment probability at least this decides the claim offline."""
    offline_min_support: float | None = Field(default=None, ge=0.0, le=1.0)
    """With `judge = "offline:learned"`: the least P(supported) that counts as FULLY_SUPPORTED
    for a claim words alone do not settle; None keeps the shipped model's threshold."""
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    """Samples evaluated at once."""
    max_response_chars: int = Field(default=DEFAULT_MAX_RESPONSE_CHARS, ge=1)
    """A longer response makes its sample an error, unjudged (see `vera.sample_limits`)."""
    max_context_chars: int = Field(default=DEFAULT_MAX_CONTEXT_CHARS, ge=1)
    """A longer context makes its sample an error, unjudged."""
    sample_timeout: float = Field(default=DEFAULT_SAMPLE_TIMEOUT, gt=0)
    """Seconds the judge work of one sample may take, with any judge; past it, the sample is
    an error and the run goes on."""
    provider_concurrency: int = Field(default=DEFAULT_PROVIDER_CONCURRENCY, ge=1)
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
    max_errors: str = Field(default="0", pattern=r"^\s*\d+(\.\d+)?\s*%?\s*$")
    """Samples that may error or be skipped before the run counts as incomplete (exit 3): a
    count ("5") or a share of the samples ("2%"). Default 0, like inspect's fail_on_error."""
    max_cost: float | None = Field(default=None, ge=0)
    """US dollars; no new judge call starts once this is spent."""
    history: bool = True
    """Store every run and its results as they finish (see `vera.history`)."""
    history_path: Path | None = None
    """The run store; default `.vera/runs.sqlite` in the working directory."""
    lock_timeout: float = Field(default=DEFAULT_LOCK_TIMEOUT, gt=0)
    """Seconds a write to the history or the cache waits for another run's write, before the
    run fails with exit 2."""
    executor: Literal["local", "ray"] = "local"
    """Where samples are evaluated: "local" (this process) or "ray" (worker processes of a
    Ray cluster, the `ray` extra; see `vera.executors.ray`)."""
    ray_address: str | None = None
    """With `executor = "ray"`: the cluster to join ("auto", "ray://HOST:10001"); None
    starts a local Ray on this machine."""
    ray_workers: int | None = Field(default=None, ge=1)
    """With `executor = "ray"`: worker processes; None takes one per CPU of the cluster."""
    gates: GateConfig = Field(default_factory=GateConfig)
    """The `[gates]` table: per-metric, per-category and latency limits (see `vera.gates`)."""
    fields: dict[str, str] = Field(default_factory=dict)
    """The `[fields]` table: VERA field -> the dataset's column that holds it, as RAGAS's
    `column_map` (`contexts = "docs"`; `--field contexts=docs`). Later layers add to it."""

    @field_validator("fields", mode="before")
    @classmethod
    def _known_fields(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError('expected a table of FIELD = "COLUMN"')
        return check_field_map(value)

    def error_budget(self, samples: int) -> int:
        """How many of `samples` may error or be skipped under `max_errors`."""
        text = self.max_errors.strip()
        if text.endswith("%"):
            return int(float(text[:-1]) / 100 * samples)
        return int(float(text))

    def merge(self, overrides: Mapping[str, Any], *, origin: str) -> Settings:
        """A copy with `overrides` applied; None values leave a setting as it is."""
        given = {k.replace("-", "_"): v for k, v in overrides.items() if v is not None}
        if isinstance(given.get("fields"), dict):
            given["fields"] = {**self.fields, **given["fields"]}  # --field adds to the config's
        if isinstance(given.get("max_errors"), int | float):
            given["max_errors"] = str(given["max_errors"])
        try:
            return Settings.model_validate({**self.model_dump(), **given})
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(p) for p in error["loc"])
            raise ConfigError(f"{origin}: setting '{key}': {error['msg'].lower()}") from None


def _config_file(directory: Path) -> tuple[str, dict[str, Any]] | None:
    vera_toml = directory / "vera.toml"
    pyproject = directory / "pyproject.toml"
    for path, table in ((vera_toml, None), (pyproject, "tool.vera")):
        if not path.exists():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML ({exc})") from None
        if table is None:
            return str(path), data
        section = data.get("tool", {}).get("vera")
        if isinstance(section, dict):
            return f"{path} [tool.vera]", section
    return None


def load_settings(
    cli: Mapping[str, Any] | None = None,
    *,
    directory: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings from every layer; CLI values of None mean "not given"."""
    settings = Settings()
    found = _config_file(directory or Path.cwd())
    if found is not None:
        origin, values = found
        settings = settings.merge(values, origin=origin)
    env = os.environ if environ is None else environ
    from_env = {field: env[name] for name, field in ENVIRONMENT.items() if env.get(name)}
    settings = settings.merge(from_env, origin="environment")
    return settings.merge(cli or {}, origin="command line")
