"""Seed 001's three baselines, built from the same retrieval and generation parts.

- `naive-rag`: retrieve, then generate. No check of any kind.
- `simple-verification`: naive RAG, then a post-hoc check that removes the sentences the
  context does not support at all (NO_EVIDENCE or CONTRADICTED; partial support stays).
- `vera`: retrieve, generate with citations, verify each claim at a threshold (0.80 by
  default); an LLM generator is asked once to fix or leave out what fell short; then what
  still falls short is dropped, and the step abstains when nothing is grounded.

The generator is VERA's offline extractive one unless a chat model is given; the retriever is
BM25 over the dataset's documents, chunked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from vera._baselines._chunking import Chunk
from vera._baselines._extractive import extractive_answer
from vera._baselines._generation import LLMGenerate, LLMRevise
from vera._baselines._retrieval import BM25Retriever, ScoredChunk
from vera._baselines._verification import DEFAULT_THRESHOLD, Verify
from vera._types import Context
from vera._types._errors import ConfigError
from vera.judges._base import Judge
from vera.pipelines._core import DryStep, Pipeline, RagState, Step
from vera.providers._base import ChatModel

BASELINES = ("naive-rag", "simple-verification", "vera")
SIMPLE_VERIFICATION_THRESHOLD = 0.5
"""Partial support passes the simple check; only claims with no support are removed."""


class Retriever(Protocol):
    """Anything that ranks chunks for a query: `BM25Retriever`, `DenseRetriever`, yours."""

    def search(self, query: str, top_k: int = 3) -> list[ScoredChunk]: ...


class Retrieve:
    """A step that fills the state's contexts with the top-k chunks for the query."""

    def __init__(self, retriever: Retriever, *, top_k: int = 3) -> None:
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        self.retriever = retriever
        self.top_k = top_k
        kind = "bm25" if isinstance(retriever, BM25Retriever) else type(retriever).__name__
        self.name = f"retrieve:{kind}@{top_k}"

    async def __call__(self, state: RagState) -> RagState:
        return self._retrieve(state)

    def dry_run(self, state: RagState) -> DryStep:
        """Retrieval is local and free: done for real."""
        return DryStep(self._retrieve(state))

    def _retrieve(self, state: RagState) -> RagState:
        found = self.retriever.search(state.query, self.top_k)
        chunks = tuple(hit.chunk for hit in found)
        # The chunks ride along in `data` so the extractive generator can see their titles.
        return state.evolve(
            contexts=tuple(chunk.to_context() for chunk in chunks),
            data={**state.data, "chunks": chunks},
        )


class ExtractiveGenerate:
    """VERA's offline generator: it copies the context sentences that best match the query
    (with `[n]` citations when `cite`), and abstains when none does. It writes nothing new."""

    def __init__(self, *, cite: bool = True, max_sentences: int = 3) -> None:
        self.cite = cite
        self.max_sentences = max_sentences
        self.name = "generate:extractive"

    async def __call__(self, state: RagState) -> RagState:
        return self._generate(state)

    def dry_run(self, state: RagState) -> DryStep:
        """Extraction is local and free: done for real."""
        return DryStep(self._generate(state))

    def _generate(self, state: RagState) -> RagState:
        chunks = state.data.get("chunks")
        sources: Sequence[Chunk | Context] = (
            chunks
            if isinstance(chunks, tuple) and len(chunks) == len(state.contexts)
            else state.contexts
        )
        answer = extractive_answer(
            state.query, sources, max_sentences=self.max_sentences, cite=self.cite
        )
        return state.evolve(response=answer.text, abstained=answer.abstained)


def build_baseline(
    name: str,
    documents: Iterable[Context],
    judge: Judge,
    *,
    generator: ChatModel | Step | None = None,
    top_k: int = 3,
    threshold: float = DEFAULT_THRESHOLD,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    retriever: Retriever | None = None,
) -> Pipeline:
    """The baseline `name` over `documents`; `judge` verifies where the baseline verifies.

    `generator` is a chat model (answers with citations), any step, or None for the offline
    extractive generator; `retriever` replaces BM25 over `documents` (a `DenseRetriever`…).
    """
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    corpus = list(documents)
    if not corpus:
        raise ConfigError(f"baseline {name!r} needs documents to retrieve from")
    if retriever is None:
        retriever = BM25Retriever.from_documents(corpus, size=chunk_size, overlap=chunk_overlap)
    generate: Step
    if generator is None:
        generate = ExtractiveGenerate(cite=name == "vera")
    elif isinstance(generator, ChatModel):
        generate = LLMGenerate(generator)
    else:
        generate = generator
    pipeline = Pipeline.of(Retrieve(retriever, top_k=top_k)).then(generate)
    if name == "simple-verification":
        pipeline = pipeline.then(
            Verify(judge, threshold=SIMPLE_VERIFICATION_THRESHOLD, abstain_when_empty=False)
        )
    elif name == "vera":
        if isinstance(generator, ChatModel):
            # An LLM gets one chance to fix what the judge could not ground before the drop.
            pipeline = pipeline.then(Verify(judge, threshold=threshold, action="flag")).then(
                LLMRevise(generator)
            )
        pipeline = pipeline.then(Verify(judge, threshold=threshold))
    return pipeline.renamed(name)


def corpus_of(documents: Iterable[Context], samples_contexts: Iterable[Context]) -> list[Context]:
    """The documents to retrieve from: the dataset's corpus, else every distinct context its
    samples carry."""
    corpus = list(documents)
    if corpus:
        return corpus
    seen: dict[str, Context] = {}
    for context in samples_contexts:
        seen.setdefault(context.text, context)
    return list(seen.values())
