"""Claim extraction: a response's checkable sentences and clauses, with exact spans."""

from __future__ import annotations

from vera._sample_limits import check_deadline

# The abstention rule is shared with the answer metrics, so it lives in the text layer;
# re-exported here.
from vera._text._abstention import is_about_sources
from vera._text._segment import split_units
from vera._types import Claim
from vera.judges._offline._clauses import split_clauses
from vera.judges._offline._languages import current_lexicon
from vera.judges._offline._lexicon import CHATTER
from vera.judges._offline._tokens import analyse, stem

_CHATTER_STEMS = frozenset(stem(word) for word in CHATTER)


def extract_claims(response: str) -> list[Claim]:
    """Split `response` into claims "c1", "c2", ... in order.

    Each claim is a sentence, list item or independent clause; `claim.span` locates it exactly,
    so `response[start:end] == claim.text`. Headings, intros ending in ":", questions and
    filler with no content words ("Sure!", "I hope this helps.") are not claims, and neither
    are statements about the sources themselves (see `is_about_sources`).
    """
    claims: list[Claim] = []
    language = current_lexicon().code
    for unit in split_units(response):
        check_deadline()
        if not unit.claimable:
            continue
        for start, end in split_clauses(response, unit.start, unit.end):
            text = response[start:end]
            if has_content(text) and not is_about_sources(text, language):
                claims.append(Claim(f"c{len(claims) + 1}", text, (start, end)))
    return claims


def checkable_sentences(response: str) -> int:
    """How many of `response`'s sentences hold at least one claim `extract_claims` finds.

    An LLM judge's empty claim list is checked against this, so both judges agree on what a
    response with nothing to check is ("Hello!", "I don't know.").
    """
    starts = [claim.span[0] for claim in extract_claims(response) if claim.span is not None]
    return sum(
        1 for unit in split_units(response) if any(unit.start <= s < unit.end for s in starts)
    )


def has_content(text: str) -> bool:
    """Whether `text` states anything checkable: a number or a content word beyond filler."""
    facts = analyse(text)
    return bool(facts.numbers) or any(key not in _CHATTER_STEMS for key in facts.content)
