"""A scripted test-set generator for the loopback server, in the dialect of `generate_testset`.

It reads the prompt as a model would (the category, the numbered passages and their document
ids) and writes an item whose kind is chosen by `behaviour(category, prompt)`:

- "good": the question names a long sentence of each passage, the answer is those
  sentences, quoted verbatim (an unanswerable one asks about a detail no document has);
- "invented_quote": as good, but the quote is altered, so it is found in no document;
- "unsupported": as good, plus an invented sentence in the answer;
- "answerable": an "unanswerable" question whose decoy answer is a sentence of the corpus;
- "junk": text that is not JSON; "wrong_shape": JSON without the expected keys.

`by_hash` picks a behaviour from the prompt's hash: a fixed mix, the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from tests.support.loopback import Recorded, Reply, ok_openai
from vera._generate import CATEGORIES

WHITEBOX = "the generator's own parts"

__all__ = ["TestsetScript", "by_hash", "passages"]

Behaviour = Callable[[str, str], str]
_NEGATION = re.compile(r"\b(?:not|no|never|without|nor)\b", re.I)
_PASSAGE = re.compile(
    r"^\[(\d+)\] \(document: (.*?)\)\n(.*?)(?=\n\n\[\d+\] \(document: |\Z)", re.M | re.S
)


def passages(prompt: str) -> list[tuple[str, str]]:
    """(document id, passage text) for each numbered passage of the prompt."""
    body = prompt.rsplit("<passages>\n", 1)[1].split("\n</passages>", 1)[0]
    return [(m.group(2), m.group(3)) for m in _PASSAGE.finditer(body)]


def _sentence(text: str, category: str) -> str:
    """A long sentence (the longest for fact_single), preferring one without a negation:
    the offline judge reads "not" in a context against a claim it splits off before the
    negation, so a verbatim quote of such a sentence can fail verification, and "good"
    items should pass."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    plain = [s for s in sentences if not _NEGATION.search(s)] or sentences
    # Each category writes from a different sentence, as a model asked different things
    # would, so one chunk drawn for two categories gives two questions, not a duplicate.
    ranked = sorted(plain, key=len, reverse=True)
    return ranked[CATEGORIES.index(category) % len(ranked)] if category in CATEGORIES else ranked[0]


def by_hash(category: str, prompt: str) -> str:
    """About 70 % good items; the rest junk, invented quotes, unsupported answers, and
    unanswerable questions the corpus answers."""
    roll = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 10
    if category == "unanswerable":
        return "answerable" if roll < 3 else "good"
    return {0: "junk", 1: "invented_quote", 2: "unsupported"}.get(roll, "good")


class TestsetScript:
    """Answers `generate_testset` prompts; `behaviour` is one name, a name per category
    (default "good"), or a function of (category, prompt)."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, behaviour: str | dict[str, str] | Behaviour = "good") -> None:
        self.behaviour = behaviour
        self.calls = 0

    def _pick(self, category: str, prompt: str) -> str:
        if isinstance(self.behaviour, str):
            return self.behaviour
        if isinstance(self.behaviour, dict):
            return self.behaviour.get(category, "good")
        return self.behaviour(category, prompt)

    def __call__(self, request: Recorded) -> Reply:
        self.calls += 1
        prompt = request.json["messages"][-1]["content"]
        category = re.search(r'of category "(\w+)"', prompt)
        name = category.group(1) if category else "fact_single"
        kind = self._pick(name, prompt)
        if kind == "junk":
            return ok_openai("I am sorry, I cannot help with that.")
        if kind == "wrong_shape":
            return ok_openai(json.dumps({"question": "What?", "reply": 3}))
        return ok_openai(json.dumps(_item(name, kind, passages(prompt))))


def _item(category: str, kind: str, found: list[tuple[str, str]]) -> dict[str, Any]:
    sentences = [(doc, _sentence(text, category)) for doc, text in found]
    topic = " ".join(re.findall(r"\w+", sentences[0][1])[:10])
    if category == "unanswerable":
        decoy = sentences[0][1] if kind == "answerable" else "It is called Bubbles."
        query = f"What is the name of the office goldfish mentioned near '{topic}'?"
        if kind == "answerable":
            query = f"What does the agreement say about {topic}?"
        return {"query": query, "answer": None, "citations": [], "decoy_answer": decoy}
    citations = [{"document_id": doc, "quote": sentence} for doc, sentence in sentences]
    answer = " ".join(sentence for _, sentence in sentences)
    if kind == "invented_quote":
        citations[0]["quote"] = "The parties agree to pay a fee of 9,999,999 zorkmids."
    if kind == "unsupported":
        answer += " Payment is refunded in full to any party on request."
    query = f"({category}) What do the documents state about {topic}?"
    return {"query": query, "answer": answer, "citations": citations, "decoy_answer": None}
