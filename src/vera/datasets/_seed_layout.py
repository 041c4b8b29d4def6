"""Seed 001's dataset layout: a corpus of documents plus queries with grounded answers.

    {"name": "legal-contracts", "documents": [{"id", "title", "text"}],
     "queries": [{"id", "query", "grounded_answer", "citations", "expected_score", "category"}]}

Queries usually carry no response: a pipeline produces it later, and until then such samples
are reported as needing a pipeline. A query that does carry a response and no contexts of its
own is judged against the whole corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vera._types import Context
from vera._types._errors import DatasetError
from vera.datasets._readers import RawRow

_TEXT_KEYS = ("text", "content", "body")


def is_seed_layout(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("queries"), list)
        and isinstance(document.get("documents"), list)
    )


def seed_documents(path: Path, document: dict[str, Any]) -> tuple[Context, ...]:
    """The corpus, as contexts that keep their document ids and titles."""
    return tuple(_document(path, i, d) for i, d in enumerate(document["documents"], 1))


def seed_query_rows(document: dict[str, Any], documents: tuple[Context, ...]) -> Iterator[RawRow]:
    """The queries as raw rows; a stored response without contexts gets the whole corpus."""
    corpus = [d.model_dump(exclude_none=True) for d in documents]
    for index, query in enumerate(document["queries"]):
        if isinstance(query, dict) and query.get("response") is not None:
            has_contexts = any(
                k in query for k in ("contexts", "retrieved_contexts", "retrieval_context")
            )
            if not has_contexts:
                query = {**query, "contexts": corpus}
        yield RawRow(f"queries[{index}]", query)


def _document(path: Path, index: int, raw: Any) -> Context:
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: documents[{index - 1}]: expected an object with id and text")
    text = next((raw[k] for k in _TEXT_KEYS if isinstance(raw.get(k), str)), None)
    if text is None:
        raise DatasetError(f"{path}: documents[{index - 1}]: missing the document's 'text'")
    doc_id = raw.get("id")
    return Context(
        text=text,
        id=str(doc_id) if doc_id is not None else f"doc-{index}",
        source=raw.get("title") or raw.get("source"),
    )
