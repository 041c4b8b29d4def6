"""The context sentences a claim is checked against: the few that share most words with it.

The learned verifier reads a claim beside a short evidence text, because a small cross-encoder
sees at most a few hundred tokens while RAG contexts run to thousands. Training and inference
must build that text the same way, so both call `evidence_for`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vera.judges.offline.tokens import analyse
from vera.text.segment import split_units

__all__ = ["Passage", "evidence_for"]

# Separates non-adjacent sentences in the evidence text, so the model can tell a gap.
GAP = " … "


@dataclass(frozen=True, slots=True)
class Passage:
    """One context sentence: where it is and the content stems it holds."""

    context_index: int
    start: int
    end: int
    content: frozenset[str]


# A sentence longer than this is cut at commas: structured contexts (JSON records, tables) come
# as one long "sentence", and the evidence must be the few fields a claim is about.
LONG = 300
_COMMA = re.compile(r",\s+")


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    # Cached by text: samples share passages, and a context is split once per run, not per claim.
    spans: list[tuple[int, int]] = []
    for unit in split_units(text):
        if unit.end - unit.start <= LONG:
            spans.append((unit.start, unit.end))
            continue
        start = unit.start
        for comma in _COMMA.finditer(text, unit.start, unit.end):
            if comma.start() - start >= LONG // 2:
                spans.append((start, comma.start() + 1))
                start = comma.end()
        spans.append((start, unit.end))
    return tuple((start, end, analyse(text[start:end]).content) for start, end in spans)


def passages(contexts: Sequence[str]) -> list[Passage]:
    """Every sentence of every context, in order."""
    return [
        Passage(index, start, end, content)
        for index, text in enumerate(contexts)
        for start, end, content in _sentences(text)
    ]


def evidence_for(
    claim: str, contexts: Sequence[str], *, max_chars: int = 600, found: list[Passage] | None = None
) -> str:
    """The context sentences that share most content words with `claim`, in context order.

    Sentences are taken best first until `max_chars` is spent (the best one always, cut if it is
    longer), then put back in their original order, non-adjacent ones joined by " … ". Ties
    go to the earlier sentence. `found` reuses `passages(contexts)` across a sample's claims.
    """
    sentences = found if found is not None else passages(contexts)
    if not sentences:
        return ""
    content = analyse(claim).content
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(content & sentences[i].content), i),
    )
    chosen: list[int] = []
    spent = 0
    for i in ranked:
        p = sentences[i]
        size = p.end - p.start
        if chosen and (spent + size > max_chars or not content & p.content):
            break
        chosen.append(i)
        spent += size
        if spent >= max_chars:
            break
    chosen.sort()
    parts: list[str] = []
    previous: int | None = None
    for i in chosen:
        p = sentences[i]
        text = contexts[p.context_index][p.start : p.end]
        if previous is not None:
            q = sentences[previous]
            adjacent = q.context_index == p.context_index and i == previous + 1
            parts.append(" " if adjacent else GAP)
        parts.append(text)
        previous = i
    return "".join(parts)
