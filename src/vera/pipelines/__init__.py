"""End-to-end RAG pipelines: steps composed with `then`, run per query, timed per step."""
