"""Which subject a context attaches each of its numbers to, when one sentence lists several.

"Free plan 60 requests per minute, Team plan 600 requests per minute, Business plan 3000
requests per minute" states 3000, but of the Business plan: a claim that the Team plan allows
3000 finds every one of its words in the sentence, and is still wrong. A list like this is
read item by item (the pieces between commas, semicolons, "and"): an item's label is the
names, years and dates no other item of the list has ("Team", "Business", "2019"), and a
number belongs to the item it sits in. A claim that names one item by its label and states a
number another item holds is contradicted by the number its item holds ("the Basic plan
allows 5 users, the Pro plan 20" against "the Pro plan allows 5 users"); where a labelled
item holds no comparable number ("Enterprise: unlimited") the claim's number has no evidence.

Only lists are read this way: a sentence with a single number keeps its meaning as a whole;
a claim that names no item, or several, an item without a label, and a list in prose whose
named item states no number ("the Pro plan 20 and the Enterprise plan unlimited") are left
to the other checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vera.judges._offline._tokens import Facts, Number, analyse, stem

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# "and" before a number joins a range or a pair ("between 30 and 40"), not two items.
_ITEM = re.compile(r"[,;]\s+|\s+(?:and|or|but|while|whereas)\s+(?!\d)")
_LABEL = re.compile(r"^([^:]{1,80}):\s+")
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class _Item:
    text: str
    facts: Facts
    labelled: bool
    """Whether the item opens with a label of its own ("Pro: 20 users")."""
    capitals: frozenset[str]
    """The stems of its capitalised words: names ("Team", "Pro") label an item best."""


def misattributed(claim: Facts, window_text: str) -> tuple[str, str | None] | None:
    """Why `claim` gives a number of `window_text` to the wrong item of a list: the claim's
    number and the number the context attaches to the claim's subject (None when that
    subject holds no comparable number), or None when no list item is misattributed."""
    for items in _lists(window_text):
        for number in claim.numbers:
            found = _clash(number, items, claim)
            if found is not None:
                return found
    return None


def _clash(number: Number, items: list[_Item], claim: Facts) -> tuple[str, str | None] | None:
    """The clash of the claim's `number` with the list, as `misattributed` returns it. A
    number the claim states too is no rival: "12 seats, and 9 seats in use" gives each
    item its own."""
    stated_keys = frozenset(n.key for n in claim.numbers)
    holders = [i for i, item in enumerate(items) if _held(number, item) is not None]
    if not holders:
        return None
    stated = _held(number, items[holders[0]])
    assert stated is not None
    own = _own_words(items, stated)
    named = {i for i, keys in enumerate(own) if keys & claim.content}
    # An item with no words of its own ("12 seats" in a record's list of fields) says what
    # the whole text is about, and a number in it belongs to no one item.
    if named & set(holders) or not any(own[i] for i in holders):
        return None
    rivals = [
        (i, r)
        for i in sorted(named)
        if (r := _comparable(stated, items[i])) is not None and r.key not in stated_keys
    ]
    if len(rivals) == 1:
        return number.surface, rivals[0][1].surface
    if rivals or len(named) != 1:
        return None
    [subject] = named
    # A named item with no number is a subject of the list only where the list labels each
    # item ("Basic: 5 users, …, Enterprise: unlimited"); in prose a clause without a number
    # is as often a qualifier every item shares ("…, per organisation").
    parallel = items[subject].labelled and items[holders[0]].labelled
    return (number.surface, None) if parallel else None


def _own_words(items: list[_Item], stated: Number) -> list[frozenset[str]]:
    """Each item's labels: its names and its years or dates ("Team", "in 2019") that no
    other item has. Only a label names an item: its other words are often the list's verb
    and unit, stated in the first item only ("the Basic plan allows 5 users, the Pro plan
    20"), or a comparison's ("$3.50, up 40.6% from last year's $2.40"), where the second
    number is no other subject's."""
    compared = frozenset(
        n.key for item in items for n in item.facts.numbers if _same_kind(n, stated, item)
    )
    own = []
    for index, item in enumerate(items):
        others = frozenset().union(*(it.facts.content for i, it in enumerate(items) if i != index))
        dated = {n.key for n in item.facts.numbers if (n.unit or "").startswith("@")}
        own.append((item.facts.content - others - compared) & (item.capitals | dated))
    return own


def _held(number: Number, item: _Item) -> Number | None:
    return next((n for n in item.facts.numbers if n.key == number.key), None)


def _comparable(stated: Number, item: _Item) -> Number | None:
    """The item's number of the same kind as `stated`, where the item lacks `stated` itself:
    the same unit, or none where the list leaves it out ("the Pro plan 20")."""
    if _held(stated, item) is not None:
        return None
    return next((n for n in item.facts.numbers if _same_kind(n, stated, item)), None)


def _same_kind(number: Number, stated: Number, item: _Item) -> bool:
    """Whether `number` of `item` measures what `stated` does: the same unit, or none where
    the list leaves it out, the number ending its item ("the Pro plan 20 and ..."); a year
    or a date is never a count."""
    if number.unit == stated.unit:
        return True
    elided = number.unit is None and item.text.rstrip(" .;:").endswith(number.surface)
    return elided and not (stated.unit or "").startswith("@")


def _lists(text: str) -> list[list[_Item]]:
    """The lists of `text`: each sentence's items, where two items or more hold a number,
    the sentence's heading left out ("API rate limits: Free plan 60 …" is headed by its
    first words). Items of two sentences are never one list."""
    lists = []
    for sentence in _SENTENCE.split(text):
        pieces = [p for p in _ITEM.split(sentence) if p.strip()]
        if len(pieces) < 2:
            continue
        labels = [_LABEL.match(p) for p in pieces]
        if labels[0] is not None and not any(labels[1:]):
            pieces[0] = pieces[0][labels[0].end() :]
            labels[0] = None
        read = [
            _Item(p, analyse(p), m is not None, _capitals(p))
            for p, m in zip(pieces, labels, strict=True)
        ]
        if sum(1 for item in read if item.facts.numbers) >= 2:
            lists.append(read)
    return lists


def _capitals(text: str) -> frozenset[str]:
    return frozenset(stem(w.lower()) for w in _WORD.findall(text) if w[0].isupper())
