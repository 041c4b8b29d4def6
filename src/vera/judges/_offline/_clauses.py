"""Conservative clause splitting: one sentence into independent clauses, with exact spans.

Only ";" and ", but" / ", while" / ", whereas" / ", and" split, and a conjunction only when both
sides are at least four words and the right side opens like a clause of its own (a subject,
then a verb-like word). Anything less certain stays one claim: a wrongly split claim loses its
subject and cannot be verified, while an unsplit one only loses granularity.
"""

from __future__ import annotations

import re

from vera.judges._offline._lexicon import SUBJECT_STARTERS, VERB_HINTS

_SEMICOLON = re.compile(r";\s+")
_CONJUNCTION = re.compile(r",\s+(?:but|while|whereas|and)\s+")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_MIN_WORDS = 4
_MIN_WORDS_SEMICOLON = 3


def split_clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split the sentence `text[start:end]` into clause spans, trimmed of whitespace."""
    if ";" not in text[start:end] and "," not in text[start:end]:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    piece_start = start
    for match in _SEMICOLON.finditer(text, start, end):
        if (
            _count_words(text, piece_start, match.start()) >= _MIN_WORDS_SEMICOLON
            and _count_words(text, match.end(), end) >= _MIN_WORDS_SEMICOLON
        ):
            pieces.append((piece_start, match.start()))
            piece_start = match.end()
    pieces.append((piece_start, end))

    clauses: list[tuple[int, int]] = []
    for piece_start, piece_end in pieces:
        clause_start = piece_start
        for match in _CONJUNCTION.finditer(text, piece_start, piece_end):
            if _count_words(text, clause_start, match.start()) >= _MIN_WORDS and _independent(
                text[match.end() : piece_end]
            ):
                clauses.append((clause_start, match.start()))
                clause_start = match.end()
        clauses.append((clause_start, piece_end))
    return [span for span in (_trim(text, s, e) for s, e in clauses) if span[0] < span[1]]


def _independent(right: str) -> bool:
    words = _WORD.findall(right)
    if len(words) < _MIN_WORDS:
        return False
    first = words[0]
    if first.lower() not in SUBJECT_STARTERS and not first[0].isupper():
        return False
    return any(_verb_like(word) for word in words[1:6])


def _verb_like(word: str) -> bool:
    low = word.lower()
    if low in VERB_HINTS:
        return True
    return len(low) > 3 and low.endswith(("s", "ed")) and not low.endswith(("ss", "us", "is"))


def _count_words(text: str, start: int, end: int) -> int:
    return sum(1 for _ in _WORD.finditer(text, start, end))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
