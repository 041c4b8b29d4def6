"""The context sentences a claim is checked against: the few that share most words with it.

The learned verifier reads a claim beside a short evidence text, because a small cross-encoder
sees at most a few hundred tokens while RAG contexts run to thousands. Training and inference
must build that text the same way, so both call `evidence_for`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vera._sample_limits import check_deadline
from vera.judges._offline._index import ContextIndex, Postings, by_length, context_index
from vera.judges._offline._tokens import analyse, read_light

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


@dataclass(frozen=True, slots=True)
class _TextPassages:
    spans: tuple[tuple[int, int], ...]
    """Where each passage is; its content keys are `postings.contents`, in the same order."""
    postings: Postings


def _split(text: str) -> _TextPassages:
    # A sentence no longer than LONG is a passage as it is: its words are the index's.
    index = context_index(text)
    if index.structured:
        return _fields(index)
    if all(end - start <= LONG for start, end in index.spans):
        # The index's own spans and postings: a cached text holds nothing twice.
        return _TextPassages(index.spans, index.postings)
    spans: list[tuple[int, int]] = []
    contents: list[frozenset[str]] = []
    for i, (start, end) in enumerate(index.spans):
        check_deadline()
        if end - start <= LONG:
            spans.append((start, end))
            contents.append(index.postings.contents[i])
            continue
        for piece_start, piece_end in _cut_at_commas(text, start, end):
            spans.append((piece_start, piece_end))
            contents.append(read_light(text[piece_start:piece_end]).content)
    return _TextPassages(tuple(spans), Postings(contents))


def _fields(index: ContextIndex) -> _TextPassages:
    """A record's fields in runs of about `LONG` characters: a passage the size of a prose
    sentence or two, not a single field."""
    spans: list[tuple[int, int]] = []
    contents: list[frozenset[str]] = []
    start, content = -1, frozenset[str]()
    for (field_start, field_end), words in zip(index.spans, index.postings.contents, strict=True):
        if start < 0:
            start = field_start
        content |= words
        if field_end - start >= LONG // 2:
            spans.append((start, field_end))
            contents.append(content)
            start, content = -1, frozenset()
    if start >= 0:
        spans.append((start, index.spans[-1][1]))
        contents.append(content)
    return _TextPassages(tuple(spans), Postings(contents))


def _cut_at_commas(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for comma in _COMMA.finditer(text, start, end):
        if comma.start() - start >= LONG // 2:
            spans.append((start, comma.start() + 1))
            start = comma.end()
    spans.append((start, end))
    return spans


_passages_of = by_length(_split)


def passage_postings(text: str) -> Postings:
    """The index of `text`'s passages (see `passages`), built once per text."""
    return _passages_of(text).postings


def passages(contexts: Sequence[str]) -> list[Passage]:
    """Every sentence of every context, in order."""
    found = []
    for index, text in enumerate(contexts):
        split = _passages_of(text)
        found += [
            Passage(index, start, end, content)
            for (start, end), content in zip(split.spans, split.postings.contents, strict=True)
        ]
    return found


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
