"""VERA's own RAG pipelines (naive-rag, simple-verification, vera) and their steps."""

from vera._baselines._baselines import BASELINES, ExtractiveGenerate, build_baseline
from vera._baselines._chunking import Chunk, chunk_corpus, chunk_document, sentence_spans
from vera._baselines._dense import DenseRetriever
from vera._baselines._documents import load_documents
from vera._baselines._extractive import ABSTENTION, ExtractiveAnswer, extractive_answer
from vera._baselines._retrieval import BM25Retriever, ScoredChunk, terms
from vera._baselines._verification import VERIFY_ABSTENTION, Verify

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
