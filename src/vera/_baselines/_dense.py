"""Dense retrieval: chunks ranked by cosine similarity of embeddings.

Any embedding function works (`embed(texts) -> vectors`); `from_sentence_transformers` uses a
local sentence-transformers model, an optional extra (`pip install 'vera-eval[dense]'`) that
downloads its model on first use. BM25 stays the default: it needs no model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from vera._baselines._chunking import Chunk, chunk_corpus
from vera._baselines._retrieval import ScoredChunk
from vera._types import Context
from vera._types._extras import install_hint
from vera.providers._base import MissingExtraError

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""Texts in, one vector per text out."""


class DenseRetriever:
    """Ranks chunks by the cosine similarity of their embeddings to the query's.

    Chunk vectors are computed once, at construction; `search` embeds only the query.
    """

    def __init__(self, chunks: Sequence[Chunk], embed: Embed) -> None:
        self._chunks = tuple(chunks)
        self._embed = embed
        vectors = np.asarray(embed([c.text for c in self._chunks]), dtype=np.float64)
        if self._chunks and vectors.shape[0] != len(self._chunks):
            raise ValueError("embed must return one vector per text")
        self._matrix = _normalised(vectors) if self._chunks else np.zeros((0, 0))

    @classmethod
    def from_documents(
        cls, documents: Sequence[Context], embed: Embed, *, size: int = 800, overlap: int = 100
    ) -> DenseRetriever:
        return cls(chunk_corpus(documents, size=size, overlap=overlap), embed)

    @classmethod
    def from_sentence_transformers(
        cls, documents: Sequence[Context], model: str = "all-MiniLM-L6-v2", **chunking: int
    ) -> DenseRetriever:
        """A retriever over `documents` embedded by a sentence-transformers `model`."""
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise MissingExtraError(
                f"dense retrieval needs sentence-transformers: {install_hint('dense')}"
            ) from exc
        encoder = SentenceTransformer(model)

        def embed(texts: Sequence[str]) -> Sequence[Sequence[float]]:
            return encoder.encode(list(texts)).tolist()  # type: ignore[no-any-return]

        return cls.from_documents(documents, embed, **chunking)

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        return self._chunks

    def search(self, query: str, top_k: int = 3) -> list[ScoredChunk]:
        """The `top_k` chunks most similar to `query`, best first; ties keep chunk order."""
        if isinstance(top_k, bool) or top_k < 1:
            raise ValueError("top_k must be a positive integer")
        if not self._chunks or not query.strip():
            return []
        vector = _normalised(np.asarray(self._embed([query]), dtype=np.float64))[0]
        scores = self._matrix @ vector
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:top_k]
        return [ScoredChunk(self._chunks[i], float(scores[i])) for i in order]


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
