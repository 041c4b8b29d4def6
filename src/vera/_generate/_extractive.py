"""`vera generate --generator extractive`: items taken from the documents, offline.

No model writes them: each item is a sentence (or two or three) of the task's passages, quoted
as the answer, and a question naming the document and what the sentence is about. They are
checked like a model's items (the quote is in the document, the judge finds the answer
supported, no near duplicate), so the whole command can be tried without a key. Only the
categories a sentence can answer on its own are written: `fact_single`, `fact_multiple` and
`summary`; reasoning, contradictions and unanswerable questions need a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vera._baselines._chunking import Chunk
from vera._generate._selection import Task
from vera._text import split_units
from vera._types._errors import ConfigError

EXTRACTIVE = "extractive"
"""The generator name that writes items from the documents' own sentences."""

EXTRACTIVE_MIX: Mapping[str, float] = {"fact_single": 0.6, "fact_multiple": 0.2, "summary": 0.2}
"""The extractive generator's default mix: the categories it can write."""

_MIN_WORDS, _MAX_WORDS = 5, 60
"""A sentence worth asking about: a statement, not a heading or a paragraph-long list."""

_VERBS = re.compile(
    r"\b(is|are|was|were|has|have|had|must|may|can|cannot|will|shall|should|does|do|takes|"
    r"take|requires|require|includes|include|means|applies|apply|answers|keeps|prints|sends|"
    r"reads|writes|gives|uses|costs|runs|shows|needs|makes|returns|compares|stops|starts)\b",
    re.IGNORECASE,
)
_TRAILING = {"a", "an", "the", "at", "of", "to", "in", "on", "for", "and", "or", "only", "not"}


def check_extractive_mix(mix: Mapping[str, float]) -> None:
    """Refuse (`ConfigError`) a mix that asks the extractive generator for a category it
    cannot write, naming the ones it can."""
    other = sorted(c for c, weight in mix.items() if weight > 0 and c not in EXTRACTIVE_MIX)
    if other:
        raise ConfigError(
            f"--mix: the extractive generator writes {', '.join(EXTRACTIVE_MIX)} items only, "
            f"not {', '.join(other)} (those need a model: --generator PROVIDER:MODEL)"
        )


_PRONOUNS = {"it", "this", "that", "these", "those", "they", "he", "she", "its", "their"}
"""A sentence opening with one leans on the one before: no question names what it is about."""


def _sentences(chunk: Chunk) -> list[str]:
    found = [chunk.text[u.start : u.end].strip() for u in split_units(chunk.text)]
    return [
        s
        for s in found
        if _MIN_WORDS <= len(s.split()) <= _MAX_WORDS
        and s[-1] in ".!"
        and s.split()[0].lower() not in _PRONOUNS
    ]


def _pick(sentences: Sequence[str], key: str, count: int = 1) -> list[str]:
    """`count` consecutive sentences, chosen by a hash of `key` (the same task and draw ask
    the same, as a model's cached reply would answer)."""
    if len(sentences) < count:
        return []
    start = int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % (len(sentences) - count + 1)
    return list(sentences[start : start + count])


def _topic(sentence: str) -> str:
    """What a sentence is about: the words before its first verb ("Refunds are ..." ->
    "refunds"), else its first four words; a leading capital lowered unless the word is an
    acronym or code."""
    head = _VERBS.split(sentence, maxsplit=1)[0].strip(" ,;:")
    words = (head if 0 < len(head.split()) <= 8 else " ".join(sentence.split()[:4])).split()
    while len(words) > 1 and words[-1].lower().strip(",.;:") in _TRAILING:
        words.pop()
    first = words[0]
    if first[:1].isupper() and not first.isupper() and first[1:2].islower():
        words[0] = first[0].lower() + first[1:]
    return " ".join(words).rstrip(".,;:")


def _name(chunk: Chunk) -> str:
    return chunk.title or chunk.document_id


def extractive_item(task: Task, draw: int) -> dict[str, Any] | None:
    """The item for `task` in the generator's reply schema, or None when its passages hold no
    sentence to ask about (counted as a malformed reply, like a model's empty one)."""
    key = f"{task.category}|{draw}|" + "|".join(f"{c.document_id}:{c.start}" for c in task.chunks)
    first = task.chunks[0]
    if task.category == "fact_multiple" and len(task.chunks) > 1:
        second = task.chunks[1]
        picked = _pick(_sentences(first), key) + _pick(_sentences(second), key + "|2")
        if len(picked) < 2:
            return None
        query = (
            f"What do {_name(first)} and {_name(second)} say about {_topic(picked[0])} "
            f"and about {_topic(picked[1])}?"
        )
        cited = [(first, picked[0]), (second, picked[1])]
    else:
        count = 2 if task.category == "summary" else 1
        picked = _pick(_sentences(first), key, count)
        if not picked:
            return None
        verb = "Summarise what" if task.category == "summary" else "What does"
        query = f"{verb} {_name(first)} {'says' if count > 1 else 'say'} about {_topic(picked[0])}"
        query += "." if count > 1 else "?"
        cited = [(first, sentence) for sentence in picked]
    return {
        "query": query,
        "answer": " ".join(sentence for _, sentence in cited),
        "citations": [{"document_id": c.document_id, "quote": s} for c, s in cited],
    }
