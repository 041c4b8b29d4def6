"""Abstention: whether a response, or one of its sentences, declines to answer from the sources.

Both sides need this rule and must agree on it: the offline judge drops such sentences from the
claims it checks, and the answer metrics score an abstention against an unanswerable question.

- `is_about_sources` tells whether a text speaks about the retrieved material, not the world.
- `abstains` tells whether any sentence of a response is such a text.
"""

from __future__ import annotations

import re

from vera.text._segment import split_units

__all__ = ["abstains", "is_about_sources"]

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
