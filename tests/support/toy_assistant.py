"""A toy assistant for `vera generate --conversations`: it answers each user turn with the
sentence of its two help pages that shares the most words with the question, citing that page
as the turn's context. A fake, explicit in what it does; `answer` is a plain function,
`answer_async` the same as a coroutine function.

The tests copy this file into the user's folder, as a user's own module would sit there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vera import Context, Turn

PAGES = {
    "refunds": "Annual plans can be refunded within 30 days of purchase. Monthly plans are "
    "not refunded. A refund is paid to the card that was charged.",
    "seats": "Seats are added from the Billing page. Each extra seat costs 15 USD a month. "
    "The Team plan includes 10 seats.",
}


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def answer(history: Sequence[Turn]) -> Turn:
    question = next(t.content for t in reversed(history) if t.role == "user")
    sentences = [
        (name, sentence)
        for name, text in PAGES.items()
        for sentence in re.split(r"(?<=\.)\s", text)
    ]
    name, best = max(sentences, key=lambda row: len(_words(row[1]) & _words(question)))
    return Turn(role="assistant", content=best, contexts=[Context(text=PAGES[name], id=name)])


async def answer_async(history: Sequence[Turn]) -> Turn:
    return answer(history)
