"""What `vera generate` prints and writes: plain lines and the dataset file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vera._generate._checks import REASONS
from vera._generate._core import GenerationResult
from vera._generate._estimate import GenerationEstimate
from vera._generate._selection import CATEGORIES
from vera.render._outputs import atomic_text


def summary_lines(result: GenerationResult) -> list[str]:
    """Kept and rejected items by category, the rejections by reason, and the spend."""
    lines = [f"Kept {result.kept_total} of {result.requested} items requested:"]
    for category in CATEGORIES:
        if category in result.attempted:
            kept, asked = result.kept.get(category, 0), result.attempted[category]
            lines.append(f"  {category}: {kept} kept of {asked} generated")
    if result.rejected:
        lines.append("Rejected, by reason:")
        for reason, by in result.rejected.items():
            where = ", ".join(f"{c} {k}" for c, k in sorted(by.items()))
            lines.append(f"  {reason}: {sum(by.values())} ({where}): {REASONS[reason]}")
    lines.append(usage_line(result.usage))
    if result.stopped:
        lines.append(f"Stopped early: {result.stopped}")
    if result.kept_total < result.requested:
        lines.append(
            f"Only {result.kept_total} of the {result.requested} items asked for passed the "
            "checks; ask for more with a larger --n or another --seed."
        )
    return lines


def usage_line(usage: Mapping[str, Any]) -> str:
    """What a generation spent: calls (from the cache), tokens and dollars."""
    return (
        f"{usage.get('calls', 0)} calls ({usage.get('cached_calls', 0)} from the cache) · "
        f"{usage.get('prompt_tokens', 0)} prompt and {usage.get('completion_tokens', 0)} "
        f"completion tokens · ${usage.get('cost_usd', 0.0):.4f}"
    )


def _usd(value: float | None) -> str:
    return "an unknown cost (no price for this model)" if value is None else f"about ${value:.4f}"


def estimate_line(estimate: GenerationEstimate) -> str:
    return (
        f"Dry run · {estimate.items} items · {estimate.generator_calls} generator and "
        f"{estimate.judge_calls} judge calls · about {estimate.prompt_tokens} prompt and "
        f"{estimate.completion_tokens} completion tokens · {_usd(estimate.cost_usd)} "
        f"if every item passes the checks first time; at most {estimate.at_most_calls} calls "
        f"and {_usd(estimate.at_most_cost_usd)} over all {estimate.rounds} rounds, since "
        "rejected items are asked for again (cached replies cost nothing). No call was made."
    )


def write_dataset(result: GenerationResult, path: Path) -> None:
    """The kept items as a seed-layout JSON file (`vera eval --dataset PATH` reads it)."""
    text = json.dumps(result.dataset, indent=2, ensure_ascii=False)
    with atomic_text(path, what="the generated dataset") as out:  # whole, or the old one kept
        out.write(text + "\n")
