"""The checks every generated item passes before it is kept, and the reasons it may fail.

A reply is read into a `Draft` (or rejected as malformed), its quotes are looked up in the
cited documents, its answer is verified by the judge against those quotes, an unanswerable
question is tried against the whole corpus, and near-duplicate questions are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vera._baselines._retrieval import BM25Retriever
from vera._types import Verdict
from vera.judges._base import Judge

DEFAULT_MAX_ANSWER_CHARS = 2_000
"""The longest answer kept: the longest category (a summary) asks for three sentences."""
DEFAULT_MAX_QUOTE_CHARS = 1_000
"""The longest quote kept: each quote is a sentence of a passage."""

REASONS = {
    "malformed_reply": "the reply was not JSON of the expected shape",
    "no_sentence": "the extractive generator found no sentence to ask about in the passages",
    "too_long": "the answer (or decoy answer) is over max_answer_chars, or a quote over "
    "max_quote_chars",
    "generator_error": "the generator's call failed after its retries",
    "unknown_document": "a citation names a document not in the corpus",
    "quote_not_found": "a quote does not occur in the cited document",
    "unsupported_answer": "the judge did not find every claim of the answer fully supported",
    "answerable": "the 'unanswerable' question is answered by the corpus",
    "judge_error": "the judge failed on the item",
    "duplicate": "a near-duplicate of a question already kept",
}
"""Every reason an item is rejected for, and what it means."""

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Draft:
    """A generated item, well formed but not yet checked."""

    category: str
    query: str
    answer: str | None
    citations: tuple[tuple[str, str], ...]
    """(document_id, quote) pairs."""
    decoy: str | None = None


def read_draft(category: str, data: Any) -> Draft | None:
    """The reply's JSON as a `Draft`, or None when its shape is wrong for the category."""
    if not isinstance(data, dict):
        return None
    query, answer, decoy = data.get("query"), data.get("answer"), data.get("decoy_answer")
    raw = data.get("citations") or []
    if not isinstance(query, str) or not query.strip() or not isinstance(raw, list):
        return None
    citations = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        document, quote = item.get("document_id"), item.get("quote")
        if not isinstance(document, str) or not isinstance(quote, str) or not quote.strip():
            return None
        citations.append((document.strip(), quote))
    if category == "unanswerable":
        if not isinstance(decoy, str) or not decoy.strip():
            return None
        return Draft(category, query.strip(), None, (), decoy.strip())
    if not isinstance(answer, str) or not answer.strip() or not citations:
        return None
    return Draft(category, query.strip(), answer.strip(), tuple(citations))


def too_long(draft: Draft, *, max_answer_chars: int, max_quote_chars: int) -> bool:
    """Whether the answer, the decoy answer or a quote is over its bound: a generator that
    repeats itself (a 2 MB answer of one sentence over and over) is turned away before the
    judge reads it, and before it can reach the dataset."""
    answers = (draft.answer or "", draft.decoy or "")
    return any(len(a) > max_answer_chars for a in answers) or any(
        len(quote) > max_quote_chars for _, quote in draft.citations
    )


def normalise(text: str) -> str:
    """Case folded, every run of whitespace one space: what a quote is compared by."""
    return " ".join(text.split()).casefold()


def missing_quote(draft: Draft, documents: Mapping[str, str]) -> str | None:
    """The rejection reason of the first citation that cannot be found verbatim, else None.

    `documents` maps each document id to its normalised text."""
    for document_id, quote in draft.citations:
        text = documents.get(document_id)
        if text is None:
            return "unknown_document"
        if normalise(quote) not in text:
            return "quote_not_found"
    return None


async def answer_supported(judge: Judge, draft: Draft) -> bool:
    """Whether the judge finds every claim of the answer fully supported by its quotes."""
    quotes = [quote for _, quote in draft.citations]
    claims, verdicts = await judge.analyse(draft.answer or "", quotes, query=draft.query)
    return bool(claims) and all(v.verdict is Verdict.FULLY_SUPPORTED for v in verdicts)


async def find_answer(
    judge: Judge, retriever: BM25Retriever, draft: Draft, *, top_k: int = 3
) -> bool:
    """Whether the corpus answers an 'unanswerable' question: the passages BM25 retrieves
    for it fully support some claim of the answer the question tempts (its decoy)."""
    found = retriever.search(draft.query, top_k=top_k)
    if not found:
        return False
    contexts = [scored.chunk.text for scored in found]
    _, verdicts = await judge.analyse(draft.decoy or "", contexts, query=draft.query)
    return any(v.verdict is Verdict.FULLY_SUPPORTED for v in verdicts)


def words(text: str) -> frozenset[str]:
    """The case-folded words of `text`, for near-duplicate detection."""
    return frozenset(_WORD.findall(text.casefold()))


def is_near_duplicate(
    query: str, kept: Sequence[frozenset[str]], *, threshold: float = 0.8
) -> bool:
    """Whether `query`'s words overlap some kept query's by Jaccard >= `threshold`."""
    mine = words(query)
    for other in kept:
        union = len(mine | other)
        if union and len(mine & other) / union >= threshold:
            return True
    return False
