"""Judges by name, for the CLI and config files: "offline", "nli:MODEL", "cascade", or
"PROVIDER:MODEL"."""

from __future__ import annotations

from vera.errors import ConfigError
from vera.judges.base import Judge
from vera.judges.cascade import CascadeJudge
from vera.judges.llm import LLMJudge
from vera.judges.nli import NLIJudge
from vera.judges.offline import OfflineJudge
from vera.providers.cache import ResponseCache
from vera.providers.cost import CostLedger
from vera.providers.limits import Limiter
from vera.providers.managed import ManagedChatModel
from vera.providers.registry import PROVIDERS, create_chat_model
from vera.settings import Settings

__all__ = ["cascade_spec", "create_judge", "create_managed_model"]


def create_judge(spec: str, settings: Settings | None = None) -> Judge:
    """Build the judge `spec` names, configured by `settings`.

    "offline" is the embedded judge; "offline:learned" the same with its learned support model.
    "nli:PATH_OR_HUB_ID" is a local NLI model (the `nli`
    extra). "cascade" is the offline judge backed by the judge `settings.cascade_judge` names
    for the claims it is unsure of. "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5" and the
    like are LLM judges, wrapped once with retries, limits, the response cache and cost
    accounting.
    """
    settings = settings or Settings()
    name = spec.strip()
    kind, _, rest = name.partition(":")
    if name.lower() == "offline":
        return OfflineJudge()
    if name.lower().replace(" ", "") == "offline:learned":
        return OfflineJudge(learned=True, min_support=settings.offline_min_support)
    if name.lower() == "cascade":
        return _cascade(settings)
    if kind.strip().lower() == "nli":
        if not rest.strip():
            raise ConfigError("the NLI judge needs a model: nli:PATH_OR_HUB_ID")
        return NLIJudge(rest.strip())
    if ":" not in name:
        known = ", ".join(f"{p}:MODEL" for p in sorted(PROVIDERS))
        raise ConfigError(f"unknown judge {spec!r}; use offline, nli:MODEL, cascade, {known}")
    return LLMJudge(
        create_managed_model(name, settings),
        mode=settings.judge_mode,
        samples=settings.judge_samples,
        temperature=settings.judge_temperature,
        prompts_dir=settings.judge_prompts_dir,
    )


def _cascade(settings: Settings) -> CascadeJudge:
    """The offline judge first, the judge `cascade_judge` names for the claims it is unsure of;
    that judge is built as `create_judge` builds any, with the run's limits, cache and budget."""
    second = create_judge(cascade_spec(settings), settings)  # settings are checked first
    return CascadeJudge(
        OfflineJudge(learned=True),
        second,
        low=settings.cascade_low,
        high=settings.cascade_high,
    )


def cascade_spec(settings: Settings) -> str:
    """The judge `settings` name for a cascade's unsure claims; `ConfigError` if none is named
    or the cascade settings cannot work."""
    second = (settings.cascade_judge or "").strip()
    if not second:
        raise ConfigError(
            "--judge cascade needs the judge for uncertain claims: --cascade-judge "
            "PROVIDER:MODEL (or cascade-judge in vera.toml)"
        )
    if second.lower() == "cascade":
        raise ConfigError("--cascade-judge cannot itself be cascade")
    if settings.cascade_low > settings.cascade_high:
        raise ConfigError(
            f"--cascade-low ({settings.cascade_low}) must not exceed "
            f"--cascade-high ({settings.cascade_high})"
        )
    return second


def create_managed_model(
    spec: str,
    settings: Settings | None = None,
    *,
    ledger: CostLedger | None = None,
    base_url: str | None = None,
) -> ManagedChatModel:
    """The chat model `spec` ("PROVIDER:MODEL") names, wrapped once with retries, limits, the
    response cache and cost accounting as `settings` say; `ledger` shares one budget.
    `base_url` defaults to the judge's."""
    settings = settings or Settings()
    model = create_chat_model(spec.strip(), base_url=base_url or settings.judge_base_url)
    return ManagedChatModel(
        model,
        limiter=Limiter(
            concurrency=settings.provider_concurrency,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
        ),
        cache=ResponseCache(settings.cache_path) if settings.cache else None,
        ledger=ledger or CostLedger(max_cost=settings.max_cost),
    )
