"""Which items to ask for: the category mix, and the chunks each item is written from.

Everything here is a pure function of the corpus, the mix and the seed, so a re-run asks the
generator the same prompts in the same order and the response cache answers all of them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vera._baselines._chunking import Chunk
from vera._types._errors import ConfigError

CATEGORIES = (
    "fact_single",
    "fact_multiple",
    "reasoning",
    "summary",
    "unanswerable",
    "contradiction",
)

DEFAULT_MIX: Mapping[str, float] = {
    "fact_single": 0.3,
    "fact_multiple": 0.2,
    "reasoning": 0.2,
    "summary": 0.1,
    "unanswerable": 0.1,
    "contradiction": 0.1,
}

PAIRED = frozenset({"fact_multiple", "contradiction"})
"""Categories written from two chunks (of two documents where the corpus has them)."""


@dataclass(frozen=True, slots=True)
class Task:
    """One item to ask for: its category and the chunks it is written from."""

    category: str
    chunks: tuple[Chunk, ...]


def parse_mix(text: str | None) -> dict[str, float]:
    """`"fact_single=0.3,unanswerable=0.1"` as weights; None or blank gives `DEFAULT_MIX`.

    Weights need not sum to 1 (they are shares of the whole); a category left out gets none.
    """
    if text is None or not text.strip():
        return dict(DEFAULT_MIX)
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name = name.strip()
        if name not in CATEGORIES:
            raise ConfigError(f"--mix: unknown category {name!r}; use {', '.join(CATEGORIES)}")
        try:
            weight = float(value) if sep else math.nan
        except ValueError:
            weight = math.nan
        if not math.isfinite(weight) or weight < 0:
            raise ConfigError(f"--mix: {part.strip()!r} needs a weight of 0 or more (name=0.3)")
        mix[name] = weight
    if sum(mix.values()) <= 0:
        raise ConfigError("--mix: at least one category needs a weight above 0")
    return mix


def allocate(n: int, mix: Mapping[str, float]) -> dict[str, int]:
    """`n` items shared out by weight, largest remainder first (ties in category order), so
    the counts always sum to `n`."""
    total = sum(mix.values())
    exact = {c: n * mix.get(c, 0.0) / total for c in CATEGORIES}
    counts = {c: math.floor(v) for c, v in exact.items()}
    left = n - sum(counts.values())
    by_remainder = sorted(CATEGORIES, key=lambda c: (-(exact[c] - counts[c]), CATEGORIES.index(c)))
    for category in by_remainder[:left]:
        counts[category] += 1
    return {c: k for c, k in counts.items() if k}


def plan_tasks(
    chunks: Sequence[Chunk], counts: Mapping[str, int], rng: random.Random
) -> list[Task]:
    """One task per item wanted, in category order; chunks drawn by `rng` (never a chunk
    twice for one category until all have been used, so items spread over the corpus)."""
    if not chunks:
        return []
    tasks: list[Task] = []
    for category in CATEGORIES:
        pool: list[Chunk] = []
        for _ in range(counts.get(category, 0)):
            if not pool:
                pool = list(chunks)
                rng.shuffle(pool)
            first = pool.pop()
            picked = (first, _partner(chunks, first, rng)) if category in PAIRED else (first,)
            tasks.append(Task(category, picked))
    return tasks


def _partner(chunks: Sequence[Chunk], first: Chunk, rng: random.Random) -> Chunk:
    """A second chunk for a paired item: from another document where there is one."""
    others = [c for c in chunks if c.document_id != first.document_id]
    if not others:
        others = [c for c in chunks if c.id != first.id] or [first]
    return others[rng.randrange(len(others))]
