"""Claim extraction: a response's checkable sentences and clauses, with exact spans."""

from __future__ import annotations

import re

from vera.judges.offline.clauses import split_clauses
from vera.judges.offline.lexicon import CHATTER
from vera.judges.offline.segment import split_units
from vera.judges.offline.tokens import analyse, stem
from vera.types import Claim

__all__ = ["abstains", "extract_claims", "has_content", "is_about_sources"]

_CHATTER_STEMS = frozenset(stem(word) for word in CHATTER)

_SOURCES = (
    r"(?:documents?|sources?|context|contexts|passages?|clauses?|abstracts?|texts?|excerpts?"
    r"|materials?|information|papers?|studies|reports?|records?|docs|documentation)"
)
# Abstentions ("the documents do not specify X") and remarks that the sources disagree speak
# about the retrieved material, not about the world: an abstention is the right answer to an
# unanswerable question, so it must not count as an unsupported claim.
_ABOUT_SOURCES = re.compile(
    rf"\b{_SOURCES}\b[^.]*?\b(?:do(?:es)?\s+not|don't|doesn't|never|neither|nor)\s+"
    r"(?:\w+\s+){0,2}?(?:specify|specifies|mention|mentions|state|states|say|says|include"
    r"|includes|contain|contains|provide|provides|address|addresses|cover|covers|discuss"
    r"|discusses|report|reports|give|gives|describe|describes|indicate|indicates)\b"
    rf"|\b{_SOURCES}\b[^.]*?\b(?:says?|states?|mentions?|reports?)\s+nothing\b"
    r"|\b(?:no|not\s+enough)\s+information\b"
    r"|\bnot\s+(?:specified|mentioned|stated|provided|addressed|covered|reported|given)\s+in\b"
    r"|^\s*i\s+(?:do\s+not|don't|cannot|can't)\s+(?:know|find|determine|answer)\b"
    r"|\b(?:i\s+am|i'm|we\s+are|we're)\s+(?:unable|not\s+able)\s+to\s+"
    r"(?:answer|find|determine|say)\b"
    r"|\b(?:cannot|can't)\s+be\s+(?:determined|answered)\s+from\b"
    rf"|\b{_SOURCES}\s+(?:disagree|conflict|differ|contradict\s+each\s+other)\b"
    rf"|\b{_SOURCES}\s+(?:reach|draw|report)\s+(?:opposite|conflicting|different)\b",
    re.IGNORECASE,
)


def extract_claims(response: str) -> list[Claim]:
    """Split `response` into claims "c1", "c2", ... in order.

    Each claim is a sentence, list item or independent clause; `claim.span` locates it exactly,
    so `response[start:end] == claim.text`. Headings, intros ending in ":", questions and
    filler with no content words ("Sure!", "I hope this helps.") are not claims, and neither
    are statements about the sources themselves (see `is_about_sources`).
    """
    claims: list[Claim] = []
    for unit in split_units(response):
        if not unit.claimable:
            continue
        for start, end in split_clauses(response, unit.start, unit.end):
            text = response[start:end]
            if has_content(text) and not is_about_sources(text):
                claims.append(Claim(f"c{len(claims) + 1}", text, (start, end)))
    return claims


def has_content(text: str) -> bool:
    """Whether `text` states anything checkable: a number or a content word beyond filler."""
    facts = analyse(text)
    return bool(facts.numbers) or any(key not in _CHATTER_STEMS for key in facts.content)


def abstains(response: str) -> bool:
    """Whether `response` declines to answer from the sources ("The documents do not say…").

    True when any sentence is an abstention, even if others add facts: those facts are still
    judged as claims, so an abstention cannot hide a hallucination.
    """
    return any(is_about_sources(response[u.start : u.end]) for u in split_units(response))


def is_about_sources(text: str) -> bool:
    """Whether `text` speaks about the retrieved material rather than the world.

    True for abstentions ("The provided documents do not specify a renewal fee.", "There is
    no information about X.") and for remarks that the sources disagree. A sentence that
    reports what the sources say ("The documents say the fee is $50.") stays a claim.
    """
    return _ABOUT_SOURCES.search(text) is not None
