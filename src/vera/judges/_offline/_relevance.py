"""Lexical relevance: how much of the query's content a text mentions.

A text that contains at least half of the query's content words (stemmed, stopwords dropped,
numbers normalised) is RELEVANT, one that contains some is PARTIALLY_RELEVANT, one that
contains none is IRRELEVANT. Like the rest of the offline judge it reads words, not meaning.
"""

from __future__ import annotations

from collections.abc import Sequence

from vera._types import Relevance, RelevanceVerdict
from vera.judges._offline._lexicon import CHATTER
from vera.judges._offline._tokens import analyse, analyse_text, stem

RELEVANT_COVERAGE = 0.5
"""Share of the query's content words a text must contain to be RELEVANT."""
_CHATTER_STEMS = frozenset(stem(word) for word in CHATTER)


def rate_relevance(query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
    """One relevance verdict per text, by the share of the query's content words it contains."""
    facts = analyse(query)
    wanted = facts.content - _CHATTER_STEMS
    if not wanted:
        return [
            RelevanceVerdict(relevance=Relevance.RELEVANT, reason="the query has no content words")
            for _ in texts
        ]
    verdicts = []
    for text in texts:
        shared = wanted & analyse_text(text).content
        coverage = len(shared) / len(wanted)
        if coverage >= RELEVANT_COVERAGE:
            relevance = Relevance.RELEVANT
        elif shared:
            relevance = Relevance.PARTIALLY_RELEVANT
        else:
            relevance = Relevance.IRRELEVANT
        words = ", ".join(sorted(facts.surfaces.get(key, key).lower() for key in shared))
        reason = f"mentions {len(shared)} of {len(wanted)} query words"
        verdicts.append(
            RelevanceVerdict(relevance=relevance, reason=f"{reason} ({words})" if words else reason)
        )
    return verdicts
