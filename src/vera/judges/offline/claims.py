"""Claim extraction: a response's checkable sentences and clauses, with exact spans."""

from __future__ import annotations

from vera.judges.offline.clauses import split_clauses
from vera.judges.offline.lexicon import CHATTER
from vera.judges.offline.segment import split_units
from vera.judges.offline.tokens import analyse, stem
from vera.types import Claim

__all__ = ["extract_claims", "has_content"]

_CHATTER_STEMS = frozenset(stem(word) for word in CHATTER)


def extract_claims(response: str) -> list[Claim]:
    """Split `response` into claims "c1", "c2", ... in order.

    Each claim is a sentence, list item or independent clause; `claim.span` locates it exactly,
    so `response[start:end] == claim.text`. Headings, intros ending in ":", questions and
    filler with no content words ("Sure!", "I hope this helps.") are not claims.
    """
    claims: list[Claim] = []
    for unit in split_units(response):
        if not unit.claimable:
            continue
        for start, end in split_clauses(response, unit.start, unit.end):
            text = response[start:end]
            if has_content(text):
                claims.append(Claim(f"c{len(claims) + 1}", text, (start, end)))
    return claims


def has_content(text: str) -> bool:
    """Whether `text` states anything checkable: a number or a content word beyond filler."""
    facts = analyse(text)
    return bool(facts.numbers) or any(key not in _CHATTER_STEMS for key in facts.content)
