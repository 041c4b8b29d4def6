"""A claim quoted inside a sentence a person reads (a metric's or a verdict's reason)."""

from __future__ import annotations

_QUOTE_LIMIT = 60


def quote_claim(text: str) -> str:
    """A claim's text on one line, cut to a length a reason can hold, in quotes."""
    text = " ".join(text.split())
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 1].rstrip() + "…"
    return f"'{text}'"
