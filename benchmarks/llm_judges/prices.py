"""Dollars per 1,000 samples from the server's token counts, at list prices.

The prices are VERA's own table (`vera.providers._cost.DEFAULT_PRICES`, dated there), so the
benchmark and `vera eval` price a token alike: fresh input, cached input (a prompt-cache read),
cache writes (Anthropic only), output, and the batch APIs' discount.

Every framework is priced from the same server-side counts (tokens by one rule, cached tokens
by the simulated provider's caching rule), never from its own accounting:

- gpt-4o-mini: cached tokens are those the simulated OpenAI server served from its prefix cache
  (`prompt_tokens_details.cached_tokens`).
- claude-haiku-4-5: the same prompt and completion token counts (counted by the o200k rule, not
  Claude's own tokenizer: an approximation, the same for every framework). Anthropic caches
  only at explicit `cache_control` breakpoints, which no request over the chat-completions API
  carries: only a run over the simulated Messages API ("vera-claude") reads and writes its
  cache, at Claude's cache rates (and has nothing cached at gpt-4o-mini's).

"interactive" is the price of the calls as sent; "batch" is the same tokens at the provider's
batch discount (priced). A run whose calls went through the simulated batch APIs
("vera:batch") has only a "batch" figure: its own requests' tokens at batch rates (measured).
"""

from __future__ import annotations

from typing import Any

from vera.providers import Price, Usage
from vera.providers._cost import DEFAULT_PRICES

WHITEBOX = "the built-in price table"

# Benchmark name -> VERA's price-table key, and whether the run's cached tokens count at it.
MODELS: dict[str, tuple[str, bool]] = {
    "gpt-4o-mini": ("openai:gpt-4o-mini", True),
    "claude-haiku-4-5": ("anthropic:claude-haiku-4-5", False),
}


def price_of(model: str) -> Price:
    return DEFAULT_PRICES[MODELS[model][0]]


def usd_per_1k_samples(
    stats: dict[str, Any], samples: int, *, sent_in_batches: bool = False
) -> dict[str, dict[str, float]]:
    """For each priced model: {"interactive": $, "batch": $} per 1,000 samples; only "batch"
    where the calls were `sent_in_batches`."""
    out: dict[str, dict[str, float]] = {}
    for model, (key, reads_cache) in MODELS.items():
        price = DEFAULT_PRICES[key]
        # Each provider's cache counts at its own rates only: OpenAI's prefix-cache reads for
        # gpt-4o-mini, Anthropic's breakpoint reads and writes for Claude.
        read = stats.get("cached_tokens" if reads_cache else "anthropic_read_tokens", 0)
        written = 0 if reads_cache else stats.get("cache_write_tokens", 0)
        usage = Usage(
            prompt_tokens=int(stats["prompt_tokens"]),
            completion_tokens=int(stats["completion_tokens"]),
            cached_prompt_tokens=int(read),
            cache_write_prompt_tokens=int(written),
        )
        scale = 1000 / max(1, samples)
        out[model] = {"batch": round(price.cost(usage, batch=True) * scale, 6)}
        if not sent_in_batches:
            out[model]["interactive"] = round(price.cost(usage) * scale, 6)
    return out


def describe() -> str:
    """One line per priced model: its rates, as the report prints them."""
    lines = []
    for model, (key, _) in MODELS.items():
        p = DEFAULT_PRICES[key]
        parts = [f"input ${p.input:g}", f"cached input ${p.cached_input:g}"]
        if p.cache_write_input is not None:
            parts.append(f"cache write ${p.cache_write_input:g}")
        parts += [f"output ${p.output:g} per 1M tokens", f"batch -{p.batch_discount:.0%}"]
        lines.append(f"{model}: " + ", ".join(parts))
    return "; ".join(lines)
