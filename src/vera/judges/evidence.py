"""Checking an LLM judge's evidence: does the quote it gives occur in the context it cites?

A judge that invents a quote is flagged on the verdict (`quote_found=False`), not trusted.
"""

from __future__ import annotations

from collections.abc import Sequence

from vera.types import ClaimVerdict, Verdict

__all__ = ["checked_verdict", "quote_occurs"]


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
    """
    index = context - 1 if context is not None and 1 <= context <= len(contexts) else None
    quote = quote.strip().strip('"“”').strip()
    quote_found: bool | None = None
    if quote:
        candidates = [index] if index is not None else range(len(contexts))
        hit = next((i for i in candidates if quote_occurs(quote, contexts[i])), None)
        quote_found = hit is not None
        index = hit if hit is not None else index
    reason = reason.strip()
    if quote_found is False:
        reason = f"[quote not found in the cited context] {reason}".strip()
    return ClaimVerdict(claim_id, verdict, quote, index, reason, quote_found=quote_found)


def _normalise(text: str) -> str:
    return " ".join(text.replace("…", "...").split()).lower()


def quote_occurs(quote: str, context: str) -> bool:
    """Whether `quote` occurs in `context`, ignoring case and whitespace; "..." may elide."""
    haystack = _normalise(context)
    position = 0
    for piece in (p.strip() for p in _normalise(quote).split("...")):
        if not piece:
            continue
        found = haystack.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True
