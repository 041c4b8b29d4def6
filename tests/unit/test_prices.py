"""The price model: each kind of prompt token at its own rate, and the batch discount."""

from __future__ import annotations

import pytest

from vera.providers import Price, Usage
from vera.providers._cost import DEFAULT_PRICES, CostLedger, merge_summaries

WHITEBOX = "the providers' own clients, retries, cache and batches"


def test_batch_discount_applies_to_every_rate() -> None:
    price = DEFAULT_PRICES["anthropic:claude-haiku-4-5"]
    usage = Usage(
        prompt_tokens=1000, completion_tokens=100, cached_prompt_tokens=400,
        cache_write_prompt_tokens=100,
    )  # fmt: skip
    assert price.cost(usage, batch=True) == pytest.approx(price.cost(usage) / 2)
    ledger = CostLedger()
    ledger.record("anthropic", "claude-haiku-4-5", usage, cached=False, batch=True)
    assert ledger.summary()["cost_usd"] == pytest.approx(price.cost(usage) / 2, abs=1e-6)


def test_unset_cache_rates_fall_back_to_the_input_rate() -> None:
    usage = Usage(prompt_tokens=10, cached_prompt_tokens=4, cache_write_prompt_tokens=3)
    assert Price(input=1.0, output=0.0).cost(usage) == pytest.approx(10 / 1e6)


def test_merged_summaries_recompute_the_cached_share() -> None:
    one, two = CostLedger(), CostLedger()
    one.record("openai", "gpt-4o-mini", Usage(prompt_tokens=100, cached_prompt_tokens=100),
               cached=False)  # fmt: skip
    two.record("openai", "gpt-4o-mini", Usage(prompt_tokens=300), cached=False)
    merged = merge_summaries([one.summary(), two.summary()])
    assert merged["cached_prompt_tokens"] == 100
    assert merged["cached_share"] == pytest.approx(0.25)
    assert merged["by_model"]["openai:gpt-4o-mini"]["cached_share"] == pytest.approx(0.25)
