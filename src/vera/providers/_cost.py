"""Token and cost accounting per call, per model, per label (metric) and per run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from vera._types._errors import RunStopError
from vera.providers._base import ProviderError, Usage


class Price(BaseModel):
    """US dollars per million tokens, each kind of token at its own rate.

    `cached_input` is a prompt-cache read (OpenAI's `cached_tokens`, Anthropic's
    `cache_read_input_tokens`), `cache_write_input` a prompt-cache write (Anthropic's
    `cache_creation_input_tokens`; OpenAI bills none); either defaults to `input`.
    `batch_discount` is the share a provider's batch API takes off every rate (0.5: half price).
    """

    model_config = ConfigDict(frozen=True)

    input: float
    output: float
    cached_input: float | None = None
    cache_write_input: float | None = None
    batch_discount: float = 0.0

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        """Dollars for `usage`; `batch`: sent through the provider's batch API."""
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        written = min(usage.cache_write_prompt_tokens, usage.prompt_tokens - cached)
        fresh = usage.prompt_tokens - cached - written
        total = (
            fresh * self.input
            + cached * _or(self.cached_input, self.input)
            + written * _or(self.cache_write_input, self.input)
            + usage.completion_tokens * self.output
        )
        return total * (1.0 - self.batch_discount if batch else 1.0) / 1_000_000


def _or(rate: float | None, default: float) -> float:
    return default if rate is None else rate


# List prices as published on the providers' pricing pages (openai.com/api/pricing,
# anthropic.com/pricing; read 2025-10-16): cache reads, Anthropic's 5-minute cache writes
# (1.25x input) and the batch APIs' 50 % discount. Override with your own contract's prices.
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075, batch_discount=0.5),
    "openai:gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25, batch_discount=0.5),
    "openai:gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10, batch_discount=0.5),
    "openai:gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50, batch_discount=0.5),
    "anthropic:claude-3-5-haiku": Price(
        input=0.80, output=4.00, cached_input=0.08, cache_write_input=1.00, batch_discount=0.5
    ),
    "anthropic:claude-haiku-4-5": Price(
        input=1.00, output=5.00, cached_input=0.10, cache_write_input=1.25, batch_discount=0.5
    ),
    "anthropic:claude-sonnet-4-5": Price(
        input=3.00, output=15.00, cached_input=0.30, cache_write_input=3.75, batch_discount=0.5
    ),
    "anthropic:claude-opus-4-1": Price(
        input=15.00, output=75.00, cached_input=1.50, cache_write_input=18.75, batch_discount=0.5
    ),
}


PriceSource = Callable[[str], Price | None]
"""`source(model) -> Price | None`: a provider's own price list, asked for the models VERA's
table does not price."""

_PRICE_SOURCES: dict[str, PriceSource] = {}


def register_price_source(provider: str, source: PriceSource) -> None:
    """Let `provider`'s models that VERA's table does not price be priced by `source`.

    A provider that routes to others (LiteLLM) names its models "ROUTE/MODEL"; VERA's own price
    for "ROUTE:MODEL" still comes first, so `litellm:openai/gpt-4o-mini` costs what
    `openai:gpt-4o-mini` does, overrides included.
    """
    _PRICE_SOURCES[provider] = source


class PriceTable:
    """Prices by "provider:model"; a dated model name matches its family's entry by prefix."""

    def __init__(self, overrides: dict[str, Price] | None = None) -> None:
        self.prices = {**DEFAULT_PRICES, **(overrides or {})}

    def lookup(self, provider: str, model: str) -> Price | None:
        own = self._own(f"{provider}:{model}")
        source = _PRICE_SOURCES.get(provider)
        if own is not None or source is None:
            return own
        route, _, routed = model.partition("/")
        return (self._own(f"{route}:{routed}") if routed else None) or source(model)

    def _own(self, name: str) -> Price | None:
        matches = [key for key in self.prices if name.startswith(key)]
        return self.prices[max(matches, key=len)] if matches else None


class BudgetExceededError(ProviderError, RunStopError):
    """`max_cost` is spent: no new provider call, and no new sample, is started."""

    planned = True


@dataclass
class _Totals:
    calls: int = 0
    cached_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0


@dataclass
class Meter:
    """Calls and dollars spent inside one `metered()` block, by any ledger."""

    calls: int = 0
    cached_calls: int = 0
    cost: float = 0.0


_METERS: ContextVar[tuple[Meter, ...]] = ContextVar("vera_cost_meters", default=())


@contextmanager
def metered() -> Iterator[Meter]:
    """Count the judge calls and cost made inside this block (and the tasks it starts).

    Concurrent samples each get their own meter, since context variables follow tasks; a
    pipeline step uses this to record exactly what it spent.
    """
    meter = Meter()
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)


class CostLedger:
    """What a run spent. `max_cost` stops new calls once reached; finished work is kept."""

    def __init__(
        self,
        prices: PriceTable | None = None,
        *,
        max_cost: float | None = None,
        batch: bool = False,
    ) -> None:
        self.prices = prices or PriceTable()
        self.max_cost = max_cost
        self.batch = batch  # every call goes through a batch API (`--batch`), at its discount
        self.total = _Totals()
        self.by_model: dict[str, _Totals] = defaultdict(_Totals)
        self.by_label: dict[str, _Totals] = defaultdict(_Totals)
        self.unpriced: set[str] = set()

    def check_budget(self) -> None:
        if self.max_cost is not None and self.total.cost >= self.max_cost:
            raise BudgetExceededError(
                f"the budget of ${self.max_cost:.4f} is spent (${self.total.cost:.4f}); "
                "no new judge calls are started"
            )

    def record(
        self,
        provider: str,
        model: str,
        usage: Usage,
        *,
        cached: bool,
        label: str = "",
        batch: bool = False,
    ) -> float:
        """Add one call; returns its cost (0 for a reply from VERA's own response cache).

        `batch`: the call went through the provider's batch API, at its discount."""
        price = self.prices.lookup(provider, model)
        name = f"{provider}:{model}"
        if price is None and not cached:
            self.unpriced.add(name)
        cost = 0.0 if cached or price is None else price.cost(usage, batch=batch or self.batch)
        for totals in (self.total, self.by_model[name], self.by_label[label or "unlabelled"]):
            totals.calls += 1
            if cached:
                totals.cached_calls += 1
            else:
                totals.usage = totals.usage + usage
                totals.cost += cost
        for meter in _METERS.get():
            meter.calls += 1
            meter.cached_calls += int(cached)
            meter.cost += cost
        return cost

    def summary(self) -> dict[str, object]:
        """Plain data for reports."""

        def dump(t: _Totals) -> dict[str, object]:
            return {
                "calls": t.calls,
                "cached_calls": t.cached_calls,
                "prompt_tokens": t.usage.prompt_tokens,
                "completion_tokens": t.usage.completion_tokens,
                "cost_usd": round(t.cost, 6),
                **prompt_cache_fields(
                    t.usage.prompt_tokens,
                    t.usage.cached_prompt_tokens,
                    t.usage.cache_write_prompt_tokens,
                ),
            }

        return {
            **dump(self.total),
            "by_model": {k: dump(v) for k, v in sorted(self.by_model.items())},
            "by_label": {k: dump(v) for k, v in sorted(self.by_label.items())},
            "unpriced_models": sorted(self.unpriced),
        }


def prompt_cache_fields(prompt: int, read: int, written: int) -> dict[str, object]:
    """The provider prompt cache's part of a usage summary: tokens read from it and written
    to it, and `cached_share`, the share of prompt tokens read from it (None with no prompt)."""
    return {
        "cached_prompt_tokens": read,
        "cache_write_prompt_tokens": written,
        "cached_share": round(read / prompt, 4) if prompt else None,
    }


_SUMMED = (
    "calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "cached_prompt_tokens",
    "cache_write_prompt_tokens",
)


def merge_summaries(summaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One `CostLedger.summary` for several ledgers' (the workers of a Ray run): every count
    and cost added up, overall, by model and by label; unpriced models together."""

    def add(into: dict[str, Any], totals: Mapping[str, Any]) -> None:
        for key in _SUMMED:
            into[key] = into.get(key, 0) + totals.get(key, 0)
        into.update(
            prompt_cache_fields(
                into["prompt_tokens"],
                into["cached_prompt_tokens"],
                into["cache_write_prompt_tokens"],
            )
        )

    merged: dict[str, Any] = {key: 0 for key in _SUMMED}
    merged.update(prompt_cache_fields(0, 0, 0))
    groups: dict[str, dict[str, dict[str, Any]]] = {"by_model": {}, "by_label": {}}
    unpriced: set[str] = set()
    for summary in summaries:
        add(merged, summary)
        for group, found in groups.items():
            for name, totals in summary.get(group, {}).items():
                add(found.setdefault(name, {}), totals)
        unpriced.update(summary.get("unpriced_models", ()))
    merged["cost_usd"] = round(merged["cost_usd"], 6)
    for found in groups.values():
        for totals in found.values():
            totals["cost_usd"] = round(totals["cost_usd"], 6)
    for group, found in groups.items():
        merged[group] = dict(sorted(found.items()))
    merged["unpriced_models"] = sorted(unpriced)
    return merged
