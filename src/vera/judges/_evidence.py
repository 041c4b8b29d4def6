"""Checking an LLM judge's evidence: does the quote it gives occur in the context it cites?

A judge that invents a quote is flagged on the verdict (`quote_found=False`), not trusted.

A verdict that takes a position on the claim (FULLY_SUPPORTED, PARTIALLY_SUPPORTED or
CONTRADICTED) must rest on a quote: one that is empty, or not in the context it cites, is
flagged the same way. A quote that is not found never supports: a supporting verdict (FULLY or
PARTIALLY_SUPPORTED) without evidence becomes NO_EVIDENCE, flagged, since a small model copies
the prompt's example citation or template quote onto any claim, and a citation that proves
nothing must not pass an invented fact. A CONTRADICTED verdict without evidence stays as given,
flagged: it fails the claim either way. The report counts the verdicts whose quote was not
found (`judge_details["quotes_not_found"]`), so a judge that answers without evidence shows up
in the run's summary. NO_EVIDENCE needs no quote: an empty one leaves `quote_found` None (not
checked).

A cited sentence must also share content with its claim (a content word, a number or a name,
`shares_a_word`): VERA quotes the sentence a judge cites by number itself, so that quote is
always found, and only this check ties the citation to the claim. A citation that shares
nothing is no evidence, unless no context shares anything with the claim: a claim in another
language than its contexts is left to the judge. Measured on RAGTruth dev: 97.7 % of the 2,324
sentences of 300 answers labelled faithful share a content word with some sentence of their
contexts, so the rule rarely costs a true citation.

The claims an LLM judge extracts are checked the other way: each must come from the response.
A claim found nowhere in it (no span) that shares no content word with it is untraceable:
flagged on the claim (`traceable=False`) and counted in the report, and a claim list made
mostly of such claims is an invalid reply (`untraceable_share`), re-asked once, then an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vera._text._lexicon import STOPWORDS
from vera._types import ClaimVerdict, Verdict

MOSTLY_UNTRACEABLE = 0.5
"""A claim list of which more than this share is untraceable to the response is invalid."""

_WORD = re.compile(r"\w+")
_STEM = 5  # "refunds" and "refunded" meet "refund": a claim may inflect the answer's words

_NEEDS_QUOTE = frozenset(
    {Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED, Verdict.CONTRADICTED}
)
_SUPPORTS = frozenset({Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED})


def checked_verdict(
    claim_id: str,
    verdict: Verdict,
    *,
    context: int | None,
    quote: str,
    reason: str,
    contexts: Sequence[str],
    claim: str | None = None,
) -> ClaimVerdict:
    """A verdict whose quote was looked up in the context it cites (1-based), and, given the
    `claim`'s text, checked to share content with it.

    An uncited quote is looked for in every context and cited where found; a quote missing from
    the cited context is flagged, even if another context has it, because the citation is wrong.
    A supported or contradicted verdict with no quote at all is flagged too, and a supporting
    one without evidence is NO_EVIDENCE (see the module docstring).
    """
    index = context - 1 if context is not None and 1 <= context <= len(contexts) else None
    quote = quote.strip().strip('"“”').strip()
    quote_found: bool | None = None
    flag = ""
    if quote:
        candidates = [index] if index is not None else range(len(contexts))
        hit = next((i for i in candidates if quote_occurs(quote, contexts[i])), None)
        quote_found = hit is not None
        index = hit if hit is not None else index
        flag = "" if quote_found else "[quote not found in the cited context]"
        if quote_found and claim is not None and _unrelated(claim, quote, contexts):
            quote_found, flag = False, "[the cited sentence shares nothing with the claim]"
    elif verdict in _NEEDS_QUOTE:
        quote_found = False
        flag = "[no quote given]"
    if quote_found is False and verdict in _SUPPORTS:
        flag = f"{flag} {verdict.value} without evidence is NO_EVIDENCE:"
        verdict = Verdict.NO_EVIDENCE
    reason = f"{flag} {reason.strip()}".strip()
    return ClaimVerdict(claim_id, verdict, quote, index, reason, quote_found=quote_found)


def _normalise(text: str) -> str:
    # Prompts render a tag inside the data as "&lt;/answer&gt;" (see vera.judges._prompts), so a
    # quote copied from there still matches the original text.
    text = text.replace("&lt;", "<").replace("&gt;", ">")
    return " ".join(text.replace("…", "...").split()).lower()


def quote_occurs(quote: str, context: str) -> bool:
    """Whether `quote` occurs in `context`, ignoring case and whitespace; "..." may elide.

    A quote with nothing but ellipses and spaces occurs nowhere: it quotes nothing.
    """
    haystack = _normalise(context)
    pieces = [p.strip() for p in _normalise(quote).split("...") if p.strip()]
    position = 0
    for piece in pieces:
        found = haystack.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return bool(pieces)


def content_words(text: str) -> set[str]:
    """The content words of `text`, cut to their stems: no stopword, no word of one or two
    letters unless a number."""
    return {
        word[:_STEM]
        for word in _WORD.findall(_normalise(text))
        if word not in STOPWORDS and (len(word) > 2 or word.isdigit())
    }


def _unrelated(claim: str, quote: str, contexts: Sequence[str]) -> bool:
    """Whether `quote` shares no content word with `claim` while some context does: a claim
    that shares none with any context is in another language than they are (claims and
    contexts may differ), where words cannot tell a citation's relevance."""
    if shares_a_word(claim, quote):
        return False
    return any(shares_a_word(claim, context) for context in contexts)


def shares_a_word(claim: str, response: str) -> bool:
    """Whether `claim` has a content word (a stopword is none) in common with `response`."""
    return bool(content_words(claim) & content_words(response))


def untraceable(claims: Sequence[str], response: str) -> list[int]:
    """The positions of the `claims` that cannot come from `response`: found nowhere in it
    (ignoring case and spacing) and sharing no content word with it."""
    words = content_words(response)
    text = _normalise(response)
    return [
        i
        for i, claim in enumerate(claims)
        if _normalise(claim) not in text and not (content_words(claim) & words)
    ]
