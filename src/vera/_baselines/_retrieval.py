"""BM25 retrieval over chunks, with VERA's own tokeniser.

Scoring is `bm25s` (Lucene's BM25 variant, scores precomputed into a sparse index, so a search
is a few array sums). Terms come from `vera.judges._offline.analyse`, the tokeniser the
offline judge verifies with: retrieval and verification agree on what a word is ("terminated"
finds "termination", "thirty (30) days" finds "30 days"), and stopwords never match.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s  # type: ignore[import-untyped]
import numpy as np

from vera._baselines._chunking import (
    DEFAULT_OVERLAP,
    DEFAULT_SIZE,
    Chunk,
    chunk_corpus,
    sentence_spans,
)
from vera._types import Context
from vera.judges._offline._tokens import analyse


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """A retrieved chunk and its BM25 score (higher is more relevant; always > 0)."""

    chunk: Chunk
    score: float


def terms(text: str) -> list[str]:
    """The BM25 terms of `text`: each sentence's content stems and numbers, from `analyse`.

    `analyse` gives a set per text, so a term counts once per sentence that holds it: term
    frequency is the number of sentences that mention it, which is what BM25's saturating tf
    mostly sees anyway. Terms are sorted within a sentence so the list is deterministic.
    """
    found: list[str] = []
    for start, end in sentence_spans(text):
        found.extend(sorted(analyse(text[start:end]).content))
    return found


class BM25Retriever:
    """Ranks chunks against a query with BM25 (`k1` term-frequency saturation, `b` length
    normalisation; the defaults are the usual ones).

    Building tokenises every chunk once; `search` is read-only, so one retriever can serve
    concurrent queries (from threads too). Results are deterministic: by score, then by the
    chunks' order.
    """

    def __init__(self, chunks: Sequence[Chunk], *, k1: float = 1.5, b: float = 0.75) -> None:
        if k1 < 0:
            raise ValueError(f"k1 must be at least 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be between 0 and 1, got {b}")
        self._chunks = tuple(chunks)
        self.k1 = k1
        self.b = b
        self._index: Any = None  # bm25s.BM25; bm25s ships no type information
        if self._chunks:
            # Lucene's idf is never negative, unlike classic Okapi's, whose idf goes below
            # zero for terms in over half the chunks and so ranks matches under non-matches
            # in small corpora.
            index = bm25s.BM25(k1=k1, b=b, method="lucene", dtype="float64")
            index.index([terms(c.text) for c in self._chunks], show_progress=False)
            self._index = index

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Context],
        *,
        size: int = DEFAULT_SIZE,
        overlap: int = DEFAULT_OVERLAP,
        k1: float = 1.5,
        b: float = 0.75,
    ) -> BM25Retriever:
        """A retriever over `documents` cut by `chunk_corpus(size=, overlap=)`."""
        return cls(chunk_corpus(documents, size=size, overlap=overlap), k1=k1, b=b)

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The indexed chunks, in index order (the order ties are broken by)."""
        return self._chunks

    def __len__(self) -> int:
        return len(self._chunks)

    def search(self, query: str, top_k: int = 3) -> list[ScoredChunk]:
        """The `top_k` chunks that best match `query`, best first.

        Only chunks sharing at least one term with the query are returned, so there may be
        fewer than `top_k`, and a query with no content words (only stopwords, or empty) or
        none the corpus holds gets []: a generator given nothing abstains instead of answering
        from arbitrary text.
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
        if self._index is None:
            return []
        ids: list[int] = self._index.get_tokens_ids(sorted(analyse(query).content))
        if not ids:
            return []
        scores = np.asarray(self._index.get_scores_from_ids(ids), dtype=np.float64)
        matched = np.flatnonzero(scores > 0)
        order = matched[np.lexsort((matched, -scores[matched]))][:top_k]
        return [ScoredChunk(self._chunks[i], float(scores[i])) for i in order.tolist()]
