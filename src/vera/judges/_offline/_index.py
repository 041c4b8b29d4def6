"""A context analysed once, and the search for a claim's best window in it.

A claim's best window is the run of adjacent sentences sharing most of its content words. A
short text is scanned window by window, as it always was. Scanning a long one costs claims x
sentences in Python: over three minutes for a 200 KB answer against a 10 MB context. So a text
of more than `_SCAN_SENTENCES` sentences keeps, for each content word, the sorted array of the
sentences that hold it, and counts every window's words at once with numpy: the same answer,
ties included, for a cost in C that grows with how often the claim's words occur.

Every sentence is read lightly to be indexed (its content words, numbers and words); the few
sentences a claim is matched with are read whole when first used, and kept. A text longer than
`LONG_TEXT` re-reads them each time, and few such texts stay cached: a sentence's full `Facts`
takes about 3.6 KB, 340 MB for 10 MB of text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from vera._sample_limits import check_deadline
from vera._text._segment import split_units
from vera.judges._offline._languages import current_lexicon
from vera.judges._offline._structured import structured_facts
from vera.judges._offline._tokens import Facts, Number, read_facts, read_light, stem

LONG_TEXT = 50_000
"""Characters from which a text is long: lean in memory, cached apart and built one at a time,
and a sample holding one is judged off the event loop."""
_SCAN_SENTENCES = 100
"""Up to this many sentences a scan is about as quick as counting: 26 against 31 us a claim at
50 sentences, 79 against 41 at 200."""

_T = TypeVar("_T")
_LONG_BUILD = threading.RLock()
Window = tuple[int, int, int]
"""(hits, -sentences, -start): the larger, the better the window."""


def by_length(build: Callable[[str], _T]) -> Callable[[str], _T]:
    """`build`, cached by text: many short texts (datasets share passages across samples),
    and a few long ones, each built once even when concurrent samples share it."""

    def in_language(text: str, code: str) -> _T:
        # The language is part of the key: the same text reads differently in another one.
        return build(text)

    short = lru_cache(maxsize=2048)(in_language)
    long = lru_cache(maxsize=2)(in_language)

    def cached(text: str) -> _T:
        code = current_lexicon().code
        if len(text) <= LONG_TEXT:
            return short(text, code)
        # One lock for every long build: a second sample waits for the first's index instead
        # of building its own copy, and the GIL would interleave two builds anyway.
        with _LONG_BUILD:
            return long(text, code)

    return cached


class Postings:
    """A text's sentences by the content keys they hold, to find a claim's best window."""

    __slots__ = ("arrays", "contents")

    def __init__(self, contents: Sequence[frozenset[str]]) -> None:
        self.contents = tuple(contents)
        self.arrays: dict[str, npt.NDArray[np.int64]] | None = None
        if len(self.contents) > _SCAN_SENTENCES:
            lists: dict[str, list[int]] = {}
            for i, content in enumerate(self.contents):
                for key in content:
                    lists.setdefault(key, []).append(i)
            self.arrays = {key: np.array(ids, dtype=np.int64) for key, ids in lists.items()}

    def best(self, content: frozenset[str], width: int = 1) -> Window:
        """The best window of 1 to `width` adjacent sentences: the most keys of `content`,
        then the fewest sentences, then the first; hits is 0 when no sentence shares a key."""
        sizes = range(1, min(width, len(self.contents)) + 1)
        if self.arrays is None:
            # Each sentence's share of the claim, and a window's the union of its sentences':
            # no window's words are kept, which a cached index would carry (and the garbage
            # collector visit) for every text it holds.
            shared = [content & words for words in self.contents]
            return max((_scan(shared, size) for size in sizes), default=(0, 0, 0))
        arrays = [self.arrays[key] for key in content if key in self.arrays]
        if not arrays:
            return (0, 0, 0)
        return max(self._count(arrays, size) for size in sizes)

    def _count(self, arrays: list[npt.NDArray[np.int64]], size: int) -> Window:
        # A key counts once in each window of `size` sentences holding it. Its sentence s is
        # in the windows starting at s - size + 1 .. s; sentences at most `size` apart merge
        # into one interval of starts, so a key's intervals never overlap, and summing every
        # interval as a +1 and a -1 step gives every window's hits at once.
        starts = len(self.contents) - size + 1
        ids = np.concatenate(arrays)
        first = np.zeros(len(ids), dtype=bool)
        first[np.cumsum([0, *(len(a) for a in arrays[:-1])])] = True
        first[1:] |= np.diff(ids) > size
        opens = np.flatnonzero(first)
        lows = np.maximum(ids[opens] - size + 1, 0)
        highs = np.minimum(ids[np.append(opens[1:], len(ids)) - 1], starts - 1)
        steps = np.bincount(lows, minlength=starts + 1) - np.bincount(
            highs + 1, minlength=starts + 1
        )
        hits = np.cumsum(steps[:starts])
        start = int(np.argmax(hits))
        return (int(hits[start]), -size, -start)


def _scan(shared: list[frozenset[str]], size: int) -> Window:
    best = (0, 0, 0)
    for start in range(len(shared) - size + 1):
        first = shared[start]
        hits = len(first.union(*shared[start + 1 : start + size]) if size > 1 else first)
        if hits > best[0]:
            best = (hits, -size, -start)
    return best


@dataclass(frozen=True, slots=True)
class ContextIndex:
    """One context's sentences (`split_units`), analysed once."""

    text: str
    spans: tuple[tuple[int, int], ...]
    postings: Postings
    words: frozenset[str]
    """Every word of every sentence, and its stem, to look names up."""
    number_keys: frozenset[str]
    numbers: tuple[Number, ...]
    """Every quantity of every sentence, to accept a rounding or another unit of one."""
    content: frozenset[str]
    """Every content key of every sentence."""
    structured: bool
    """Whether the text is a record, a key-value list or a table (`structured.py`), read
    field by field instead of sentence by sentence."""
    readings: tuple[str, ...] | None
    """Each field's reading of a record (its text as the judge reads it); None for prose,
    whose sentences read as written."""
    lean: bool
    """Whether the text is long (`LONG_TEXT`): its windows are re-read, never kept, so its
    index stays lean in memory."""
    full: dict[int, Facts] = field(default_factory=dict, compare=False)
    """The full facts of the sentences claims were matched with, read on first use: every
    sentence is read lightly (content, numbers, words) to index it, and only the few a
    claim's window takes are read whole (names, negations), a third of the cost."""

    def facts(self, i: int) -> Facts:
        """The facts of sentence `i`."""
        found = self.full.get(i)
        if found is None:
            if self.readings is not None:
                found = read_facts(self.readings[i])
            else:
                start, end = self.spans[i]
                found = read_facts(self.text[start:end])
            if not self.lean:
                self.full[i] = found
        return found


def _build(text: str) -> ContextIndex:
    # A long text is read as prose: a record's fields are all kept, which a 10 MB one would
    # make hundreds of MB.
    fields = structured_facts(text) if len(text) <= LONG_TEXT else None
    if fields is None:
        units = [(u.start, u.end, text[u.start : u.end]) for u in split_units(text)]
    else:
        units = [(f.start, f.end, f.reading) for f in fields]
    spans: list[tuple[int, int]] = []
    contents: list[frozenset[str]] = []
    words: set[str] = set()
    numbers: dict[tuple[str, str | None], Number] = {}
    for start, end, reading in units:
        check_deadline()
        facts = read_light(reading)
        spans.append((start, end))
        contents.append(facts.content)
        words.update(facts.words)
        numbers.update(((n.key, n.unit), n) for n in facts.numbers)
    return ContextIndex(
        text=text,
        spans=tuple(spans),
        postings=Postings(contents),
        # Stemmed once per distinct word of the text, not once per sentence it is in.
        words=frozenset(words).union(map(stem, words)),
        number_keys=frozenset(key for key, _ in numbers),
        numbers=tuple(numbers.values()),
        content=frozenset().union(*contents),
        structured=fields is not None,
        readings=tuple(reading for _, _, reading in units) if fields is not None else None,
        lean=len(text) > LONG_TEXT,
    )


context_index = by_length(_build)
"""The index of one context, built once per text."""
