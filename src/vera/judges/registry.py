"""Judges by name, for the CLI and config files: "offline", or "PROVIDER:MODEL"."""

from __future__ import annotations

from vera.errors import ConfigError
from vera.judges.base import Judge
from vera.judges.llm import LLMJudge
from vera.judges.offline import OfflineJudge
from vera.providers.cache import ResponseCache
from vera.providers.cost import CostLedger
from vera.providers.limits import Limiter
from vera.providers.managed import ManagedChatModel
from vera.providers.registry import PROVIDERS, create_chat_model
from vera.settings import Settings

__all__ = ["create_judge", "create_managed_model"]


def create_judge(spec: str, settings: Settings | None = None) -> Judge:
    """Build the judge `spec` names, configured by `settings`.

    "offline" is the embedded judge. "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5" and
    the like are LLM judges, wrapped once with retries, limits, the response cache and cost
    accounting.
    """
    settings = settings or Settings()
    name = spec.strip()
    if name.lower() == "offline":
        return OfflineJudge()
    if ":" not in name:
        known = ", ".join(f"{p}:MODEL" for p in sorted(PROVIDERS))
        raise ConfigError(f"unknown judge {spec!r}; use offline, {known}")
    return LLMJudge(
        create_managed_model(name, settings),
        mode=settings.judge_mode,
        samples=settings.judge_samples,
        temperature=settings.judge_temperature,
        prompts_dir=settings.judge_prompts_dir,
    )


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
