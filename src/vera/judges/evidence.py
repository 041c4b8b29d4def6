"""Checking an LLM judge's evidence: does the quote it gives occur in the context it cites?

A judge that invents a quote is flagged on the verdict (`quote_found=False`), not trusted.

A verdict that takes a position on the claim (FULLY_SUPPORTED, PARTIALLY_SUPPORTED or
CONTRADICTED) must rest on a quote: one that is empty, or not in the context it cites, is
flagged the same way. The verdict still counts as given: it is the judge's classification, and
a paraphrased quote may sit on a correct one, so discarding it would trade one error for
another. The flag is kept on the claim, and the report counts the supported verdicts whose
quote was not found (`judge_details["quotes_not_found"]`), so a judge that answers without
evidence shows up in the run's summary. NO_EVIDENCE needs no quote: an empty one leaves
`quote_found` None (not checked).
"""

from __future__ import annotations

from collections.abc import Sequence

from vera.types import ClaimVerdict, Verdict

__all__ = ["checked_verdict", "quote_occurs"]

_NEEDS_QUOTE = frozenset(
    {Verdict.FULLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED, Verdict.CONTRADICTED}
)


def checked_verdict(
    claim_id: str,
    verdict: Verdict,
    *,
    context: int | None,
    quote: str,
    reason: str,
    contexts: Sequence[str],
) -> ClaimVerdict:
    """A verdict whose quote was looked up in the context it cites (1-based).

    An uncited quote is looked for in every context and cited where found; a quote missing from
    the cited context is flagged, even if another context has it, because the citation is wrong.
    A supported or contradicted verdict with no quote at all is flagged too.
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
    elif verdict in _NEEDS_QUOTE:
        quote_found = False
        flag = "[no quote given]"
    reason = f"{flag} {reason.strip()}".strip()
    return ClaimVerdict(claim_id, verdict, quote, index, reason, quote_found=quote_found)


def _normalise(text: str) -> str:
    # Prompts render a tag inside the data as "&lt;/answer&gt;" (see vera.judges.prompts), so a
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
