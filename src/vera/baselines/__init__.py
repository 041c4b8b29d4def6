"""VERA's own RAG pipelines (naive-rag, simple-verification, vera) and their steps."""

from vera.baselines._baselines import BASELINES, ExtractiveGenerate, build_baseline
from vera.baselines._chunking import Chunk, chunk_corpus, chunk_document, sentence_spans
from vera.baselines._dense import DenseRetriever
from vera.baselines._documents import load_documents
from vera.baselines._extractive import ABSTENTION, ExtractiveAnswer, extractive_answer
from vera.baselines._retrieval import BM25Retriever, ScoredChunk, terms
from vera.baselines._verification import VERIFY_ABSTENTION, Verify

__all__ = [
    "ABSTENTION",
    "BASELINES",
    "VERIFY_ABSTENTION",
    "BM25Retriever",
    "Chunk",
    "DenseRetriever",
    "ExtractiveAnswer",
    "ExtractiveGenerate",
    "ScoredChunk",
    "Verify",
    "build_baseline",
    "chunk_corpus",
    "chunk_document",
    "extractive_answer",
    "load_documents",
    "sentence_spans",
    "terms",
]
