"""Lexical facts about a piece of text: content stems, numbers, names and negations.

`analyse` is the one tokeniser the offline judge uses for claims and context sentences alike,
so both sides are normalised the same way.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

from vera._sample_limits import check_deadline
from vera._text._numbers import canonical_numbers
from vera.judges._offline._cjk import cjk_tokens
from vera.judges._offline._languages import ENGLISH, Lexicon, current_lexicon
from vera.judges._offline._lexicon import (
    CURRENCY_WORDS,
    MONTHS,
    NUMBER_WORDS_NEEDING_UNIT,
    PERCENT_WORDS,
    SCALE_WORDS,
    UNIT_WORDS,
)


@dataclass(frozen=True, slots=True)
class Number:
    """A quantity stated in text: canonical value, unit (or kind) and the words that said it.

    `unit` is a currency symbol, "%", a stemmed unit noun ("day"), "@year" for a bare
    calendar year, "@date" for a day after a month name, or None when nothing qualifies it.
    """

    key: str
    unit: str | None
    surface: str


@dataclass(frozen=True, slots=True)
class Name:
    """A run of capitalised words that is not just a sentence's first word."""

    surface: str
    words: frozenset[str]


@dataclass(frozen=True, slots=True)
class Negation:
    """A negating word and the content key it negates: the first one after it ("" if none).

    Scoping a negation to its word keeps "for any reason or no reason" from negating a whole
    sentence about termination notice.
    """

    cue: str
    scope: str


@dataclass(frozen=True, slots=True)
class Facts:
    """What the offline judge compares: see `analyse`."""

    content: frozenset[str]
    numbers: tuple[Number, ...] = ()
    words: frozenset[str] = frozenset()
    names: tuple[Name, ...] = ()
    negations: tuple[Negation, ...] = ()
    surfaces: dict[str, str] = field(default_factory=dict, compare=False)
    affirmed: frozenset[str] = frozenset()
    """Content keys stated at least once outside a negation's scope: a text that says both
    "accept or reject each order" and "an order not rejected" does affirm rejecting."""
    exclusive: frozenset[str] = frozenset()
    """Content keys an "only" (or "solely", "exclusively") restricts: the two before it and
    the one after, "email" and "support" in "includes email support only"."""
    order: tuple[str, ...] = field(default=(), compare=False)
    """Content keys in text order (numbers aside): which word stands beside which."""


# Words first: they are most tokens, and no text both alternatives could start.
_TOKEN = re.compile(
    r"(?P<word>[^\W\d_]+(?:['\u2019][^\W\d_]+)*)"
    r"|(?P<num>\d+(?:[.,]\d+)*)(?:st|nd|rd|th)?(?![^\W\d_])"
    r"|(?P<sym>[$€£%])"
)
# Citation markers ([1], [2, 3], [doc-3], [^2], [S1]) are references, not numbers to check.
_CITATION = re.compile(r"\[\^?(?:\d+(?:\s*[,\u2013-]\s*\d+)*|[A-Za-z]+[-_:]?\d+)\]")
_SOURCE_HINT = re.compile(r"(?i)passage|document|source")
_SOURCE_REFERENCE = re.compile(
    r"\b(?:[Pp]assages?|[Dd]ocuments?|[Ss]ources?)\s+(?:\d+|[A-Z])\b(?:\s*(?:,|and|&)\s*\d+\b)*"
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NAME_GAP = re.compile(r"\.?[ \t]?|-")
_CONTRACTIONS = ("'s", "'re", "'ll", "'ve", "'d", "'m")
_ATTACHED_SCALES = frozenset({"k", "bn"})
_TENS = frozenset({"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"})
_VOWELS = frozenset("aeiouy")
_STEM_CACHE: dict[str, str] = {}
_STEM_CACHE_LIMIT = 200_000

_Token = tuple[str, str, int, int]

# Bigrams a CJK negation passes over while they are affirmed elsewhere, and bigrams after a
# CJK "only" (仅包含电子邮件支持: it restricts the object after the verb) that it restricts.
_CJK_SCOPE = 3
_CJK_ONLY_AFTER = 5


def stem(word: str) -> str:
    """Light suffix stripping so inflections meet: "contracts"/"contract", "terminated"/"terminate".

    Far cruder than Porter on purpose: it only has to map a word and its inflections to the
    same key, and it is cached because the same words recur across claims and contexts.
    """
    cached = _STEM_CACHE.get(word)
    if cached is None:
        cached = _stem(word)
        if len(_STEM_CACHE) < _STEM_CACHE_LIMIT:
            _STEM_CACHE[word] = cached
    return cached


def _stem(w: str) -> str:
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ations") and len(w) >= 9:
        w = w[:-6] + "ate"
    elif w.endswith("ation") and len(w) >= 8:
        w = w[:-5] + "ate"
    elif w.endswith("ings") and _has_vowel(w[:-4]) and len(w) >= 7:
        w = _undouble(w[:-4])
    elif w.endswith("ing") and _has_vowel(w[:-3]) and len(w) >= 6:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and _has_vowel(w[:-2]) and len(w) >= 5:
        w = _undouble(w[:-2])
    elif w.endswith("ed") and len(w) == 4:
        w = w[:-1]
    elif w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith("ly") and len(w) >= 6:
        w = w[:-2]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) >= 7 and w.endswith("abl"):
        # "refundable" meets "refund", "refunded": what can be done is about the doing.
        w = w[:-3]
    return w


def _has_vowel(w: str) -> bool:
    return any(c in _VOWELS for c in w)


def _undouble(w: str) -> str:
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        return w[:-1]
    return w


_FACTS_CACHE: dict[tuple[str, str], Facts] = {}
_FACTS_CACHE_LIMIT = 4096
_CACHED_TEXT = 2000
"""Longest text whose facts are kept: a claim is read by extraction, the features and the
verdict, three times a claim; a context sentence is kept by its context's index instead."""


def analyse(text: str) -> Facts:
    """`read_facts`, kept for short texts: the same claim is read several times a sample."""
    if len(text) > _CACHED_TEXT:
        return read_facts(text)
    key = (current_lexicon().code, text)
    found = _FACTS_CACHE.get(key)
    if found is None:
        found = read_facts(text)
        if len(_FACTS_CACHE) >= _FACTS_CACHE_LIMIT:
            _FACTS_CACHE.clear()
        _FACTS_CACHE[key] = found
    return found


class Light(NamedTuple):
    """A light reading (`read_light`): the first three fields of `Facts`."""

    content: frozenset[str]
    numbers: tuple[Number, ...]
    words: frozenset[str]


def read_light(text: str) -> Light:
    """`read_facts`'s `content`, `numbers` and `words` alone, the same as a full reading gives
    them, read without the rest (the names, negations and word order): what a context's index
    needs of every sentence (`_index.py`)."""
    lex = current_lexicon()
    text, tokens = _read_tokens(text, lex)
    return _read_light(text, tokens, lex)


def read_facts(text: str) -> Facts:
    """Tokenise `text` into the facts the judge compares, with the lexicon being read.

    - `content`: stems of words that are neither stopwords nor light words, plus each number's
      canonical value ("1,000" and "one thousand" both give "1000").
    - `numbers`: every quantity, with its unit.
    - `words`: every word, lowercased and unstemmed, to look names up.
    - `names`: runs of capitalised words other than the opening word.
    - `negations`: negating words with the content key each one negates, in order.

    `read_light` reads only the first three, for less.
    """
    lex = current_lexicon()
    text, tokens = _read_tokens(text, lex)
    if lex.cjk:
        return _read_full(text, tokens, lex)
    reading = _Reading()
    plain = _PLAIN_WORDS.setdefault(lex.code, {})
    resume = 0
    for i, (kind, raw, _, _) in enumerate(tokens):
        if i < resume or kind == "sym":
            continue
        found = plain.get(raw)
        if found is not None:
            # A plain word (`_remember`): what `_Reading.word` does with it, without asking
            # whether it is a number, a negation or an "only".
            base, key, reading.previous = found
            reading.words.add(base)
            if key is not None:
                reading.content.add(key)
                reading.order.append(key)
                reading.surfaces.setdefault(key, raw)
                _settle(reading.pending, key, reading.negations, reading.affirmed)
            continue
        resume = _read_token(reading, text, tokens, i, lex)
        if kind == "word":
            _remember(plain, raw, lex)
    return reading.facts(text, tokens, lex)


def _read_full(text: str, tokens: list[_Token], lex: Lexicon) -> Facts:
    """`read_facts` token by token, for CJK text (whose negations look past affirmed words)."""
    reading = _Reading()
    i = 0
    while i < len(tokens):
        if tokens[i][0] == "sym":
            i += 1
            continue
        i = _read_token(reading, text, tokens, i, lex)
    return reading.facts(text, tokens, lex)


def _read_token(reading: _Reading, text: str, tokens: list[_Token], i: int, lex: Lexicon) -> int:
    """Read the number or word at token `i` into `reading`; the index of the next token."""
    kind, raw, _, _ = tokens[i]
    low = raw.lower().replace("\u2019", "'") if kind == "word" else raw
    if kind == "num" or (low in lex.number_words and _counts_as_number(low, tokens, i)):
        number, i = _read_number(text, tokens, i, lex)
        reading.number(number)
        return i
    i += 1
    if (
        (low in lex.negations or low.endswith("n't"))
        and not _answer_particle(text, tokens, i)
        and not _limits_only(tokens, i)
    ):
        reading.pending.append(low)
    reading.word(raw, low, lex)
    return i


_PLAIN_WORDS: dict[str, dict[str, tuple[str, str | None, str]]] = {}
"""Per language, plain words by their spelling: `_word_key`'s base and key, and the word
lowercased. Most tokens are plain words read before; one look-up by the spelling replaces
lowercasing the word and asking four tables about it."""


def _remember(plain: dict[str, tuple[str, str | None, str]], raw: str, lex: Lexicon) -> None:
    """Keep `raw` in `plain` if it is a plain word: no number word, negation or "only" cue,
    so that `_Reading.word` only adds its base and key (never so in CJK text, whose bigrams
    a negation treats by what came before)."""
    low = raw.lower().replace("\u2019", "'")
    if (
        lex.cjk
        or low in lex.number_words
        or low in lex.negations
        or low.endswith("n't")
        or low in lex.exclusive
        or len(plain) >= _WORD_KEYS_LIMIT
    ):
        return
    plain[raw] = (*_word_key(low, lex), low)


def _read_light(text: str, tokens: list[_Token], lex: Lexicon) -> Light:
    """`read_facts`'s loop for `content`, `numbers` and `words` alone: a context's every
    sentence is read this way, most of the judge's time, so it keeps to what they need
    (`_Reading.word` without the negations, the names and the word order)."""
    if lex.cjk:
        return _read_light_cjk(text, tokens, lex)
    content: set[str] = set()
    words: set[str] = set()
    numbers: list[Number] = []
    plain = _PLAIN_WORDS.setdefault(lex.code, {})
    resume = 0
    for i, (kind, raw, _, _) in enumerate(tokens):
        if i < resume or kind == "sym":
            continue
        found = plain.get(raw)
        if found is None:
            low = raw.lower().replace("\u2019", "'") if kind == "word" else raw
            if kind == "num" or (low in lex.number_words and _counts_as_number(low, tokens, i)):
                number, resume = _read_number(text, tokens, i, lex)
                numbers.append(number)
                content.add(number.key)
                continue
            _remember(plain, raw, lex)
            base, key = _word_key(low, lex)
        else:
            base, key, _ = found
        words.add(base)
        if key is not None:
            content.add(key)
    return Light(frozenset(content), tuple(numbers), frozenset(words))


def _read_light_cjk(text: str, tokens: list[_Token], lex: Lexicon) -> Light:
    """`_read_light` for CJK text, where a cue cut out of its run ("只") is no content."""
    content: set[str] = set()
    words: set[str] = set()
    numbers: list[Number] = []
    keys = _WORD_KEYS.setdefault(lex.code, {})
    previous = ""
    i, count = 0, len(tokens)
    while i < count:
        kind, raw, _, _ = tokens[i]
        if kind == "sym":
            i += 1
            continue
        low = raw.lower().replace("\u2019", "'") if kind == "word" else raw
        if kind == "num" or (low in lex.number_words and _counts_as_number(low, tokens, i)):
            number, i = _read_number(text, tokens, i, lex)
            numbers.append(number)
            content.add(number.key)
            continue
        i += 1
        before, previous = previous, low
        if low in lex.exclusive and before not in _NOT_ONLY:
            continue  # a cue the tokeniser cut out of its run is no content of its own
        base, key = keys.get(low) or _word_key(low, lex)
        words.add(base)
        if key is not None:
            content.add(key)
    return Light(frozenset(content), tuple(numbers), frozenset(words))


@dataclass
class _Reading:
    """What `analyse` gathers as it reads a text's tokens in order."""

    content: set[str] = field(default_factory=set)
    numbers: list[Number] = field(default_factory=list)
    words: set[str] = field(default_factory=set)
    negations: list[Negation] = field(default_factory=list)
    affirmed: set[str] = field(default_factory=set)
    pending: list[str] = field(default_factory=list)
    """Negation cues still looking for the word they negate."""
    surfaces: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Content keys in text order, to find what an "only" restricts."""
    cues: list[int] = field(default_factory=list)
    """Where in `order` each "only" stood."""
    waited: int = 0
    """Affirmed CJK bigrams passed over by a negation looking for its word."""
    previous: str = ""
    """The word read last, lowercased."""

    def number(self, number: Number) -> None:
        self.numbers.append(number)
        self.content.add(number.key)
        _settle(self.pending, number.key, self.negations, self.affirmed)

    def word(self, raw: str, low: str, lex: Lexicon) -> None:
        previous, self.previous = self.previous, low
        # "not only X but also Y" adds to X; it restricts nothing.
        if low in lex.exclusive and previous not in _NOT_ONLY:
            self.cues.append(len(self.order))
            if lex.cjk:
                # A cue the tokeniser cut out of its run (只, のみ) is no content of its own.
                return
        base, key = _word_key(low, lex)
        self.words.add(base)
        if key is None:
            return
        self.content.add(key)
        self.order.append(key)
        self.surfaces.setdefault(key, raw)
        if self.pending and lex.cjk and key in self.affirmed and self.waited < _CJK_SCOPE:
            # A CJK negation's first bigram is often a verb the text also affirms ("仅包含…
            # 不包含电话支持"); what it denies is the first bigram not already affirmed.
            self.waited += 1
            return
        self.waited = 0
        _settle(self.pending, key, self.negations, self.affirmed)

    def facts(self, text: str, tokens: list[_Token], lex: Lexicon) -> Facts:
        _close_negations(self.pending, self.order, self.negations, self.affirmed, lex)
        after = _CJK_ONLY_AFTER if lex.cjk else 1
        order = self.order
        return Facts(
            content=frozenset(self.content),
            numbers=tuple(self.numbers),
            words=frozenset(self.words),
            names=_names(text, tokens, lex.stopwords)
            if lex.names
            else _foreign_names(text, tokens, lex),
            negations=tuple(self.negations),
            surfaces=self.surfaces,
            affirmed=frozenset(self.affirmed),
            exclusive=frozenset(
                key for cue in self.cues for key in order[max(0, cue - 2) : cue + after]
            ),
            order=tuple(order),
        )


_WORD_KEYS: dict[str, dict[str, tuple[str, str | None]]] = {}
_WORD_KEYS_LIMIT = 100_000


def _word_key(low: str, lex: Lexicon) -> tuple[str, str | None]:
    """A lowercased word's base form, and its content key (None for a stopword, a light word
    or a word too short), kept per language: the same words recur in every text."""
    table = _WORD_KEYS.setdefault(lex.code, {})
    found = table.get(low)
    if found is None:
        base = _elided(low) if lex.elisions else _base(low)
        skip = (
            len(base) < lex.shortest
            or base in lex.stopwords
            or base in lex.light_words
            or low in lex.stopwords
        )
        found = (base, None if skip else stem(base))
        if len(table) < _WORD_KEYS_LIMIT:
            table[low] = found
    return found


_NOT_ONLY = frozenset({"not", "non", "nicht", "no", "não", "nao"})
"""Words that make a following "only" (nur, solo, seulement) part of "not only"."""


_RECENT_TOKENS: OrderedDict[tuple[str, str], tuple[str, list[_Token]]] = OrderedDict()
_RECENT_LIMIT = 64
"""The last texts tokenised, up to `_CACHED_TEXT` characters each: a context sentence is read
lightly when its context is indexed and whole moments later when a claim's window takes it,
and keeping every sentence's tokens instead multiplied the garbage collector's work."""


def _read_tokens(text: str, lex: Lexicon) -> tuple[str, list[_Token]]:
    """`_tokenised`, kept for the last `_RECENT_LIMIT` short texts (never to be changed)."""
    if len(text) > _CACHED_TEXT:
        return _tokenised(text, lex)
    key = (lex.code, text)
    found = _RECENT_TOKENS.get(key)
    if found is None:
        found = _tokenised(text, lex)
        if len(_RECENT_TOKENS) >= _RECENT_LIMIT:
            _RECENT_TOKENS.popitem(last=False)  # in C: another thread's judge may be here too
        _RECENT_TOKENS[key] = found
    return found


def _tokenised(text: str, lex: Lexicon) -> tuple[str, list[_Token]]:
    """`text` as the tokeniser reads it (citations masked; outside English, numbers in one
    form), and its tokens: CJK as character bigrams (cjk.py)."""
    text = mask_citations(text)
    if lex is ENGLISH:
        return text, _tokens(text)
    text = canonical_numbers(text, lex.code)
    return text, cjk_tokens(text, lex) if lex.cjk else _tokens(text)


_LIMITED = frozenset({"just", "only", "merely", "simply", "all", "always", "every", "necessarily"})
"""Words after which a "not" limits rather than denies: "not just tuition, but also books",
"not all sauces are gravy"."""


def _limits_only(tokens: list[_Token], after: int) -> bool:
    """Whether the negation just read (`tokens[after - 1]`) is followed by a word it limits."""
    return after < len(tokens) and tokens[after][1].lower() in _LIMITED


def _answer_particle(text: str, tokens: list[_Token], after: int) -> bool:
    """Whether the word just read (`tokens[after - 1]`) opens the text and a comma follows
    it: "No, downgrades are not prorated" answers a question; the "not" negates, the "No"
    does not."""
    if after != 1:
        return False
    end = tokens[0][3]
    return text[end : end + 1] in (",", "\uff0c", "!")


def _close_negations(
    pending: list[str],
    order: list[str],
    negations: list[Negation],
    affirmed: set[str],
    lex: Lexicon,
) -> None:
    """Scope the negation cues no word followed: none in English; elsewhere the word before
    ("Wir erstatten die Kosten nicht", "返品できません": the negation ends its sentence)."""
    if pending and order and lex is not ENGLISH:
        affirmed.discard(order[-1])
        negations.extend(Negation(cue, order[-1]) for cue in pending)
    else:
        negations.extend(Negation(cue, "") for cue in pending)


_KINDS = ("", "word", "num", "sym")
"""`_TOKEN`'s groups by number: a match's last group is the one that matched, its kind."""


def _tokens(text: str) -> list[_Token]:
    # An ordinal keeps its digits only ("16th" is 16); its span still covers the suffix.
    return [
        (_KINDS[m.lastindex or 0], m[m.lastindex or 0], m.start(), m.end())
        for m in _TOKEN.finditer(text)
    ]


_PIECE = 1_000_000
"""Most characters `analyse_text` tokenises at once: the token list costs about 30 bytes a
character until the text's facts are read off, 300 MB for a 10 MB context read whole."""


def analyse_text(text: str) -> Facts:
    """`analyse` for a text of any length, in pieces of at most `_PIECE` characters cut at
    line breaks, merged. Only what straddles a cut reads differently (a "5" ending one piece
    and a "million" opening the next, a negation and the word it negates); a text up to
    `_PIECE` characters is one piece, read exactly as by `analyse`.
    """
    if len(text) <= _PIECE:
        return analyse(text)
    pieces: list[Facts] = []
    start = 0
    while start < len(text):
        check_deadline()
        end = _cut(text, start)
        pieces.append(analyse(text[start:end]))
        start = end
    return merge(tuple(pieces))


def _cut(text: str, start: int) -> int:
    """Where the piece from `start` ends: at a blank line, else a line break, else a space."""
    limit = start + _PIECE
    if limit >= len(text):
        return len(text)
    for separator in ("\n\n", "\n", " "):
        cut = text.rfind(separator, start + _PIECE // 2, limit)
        if cut > start:
            return cut + len(separator)
    return limit


def _settle(pending: list[str], key: str, negations: list[Negation], affirmed: set[str]) -> None:
    """`key` is the word the waiting negation cues negate; with none waiting, it is affirmed."""
    if pending:
        negations.extend(Negation(cue, key) for cue in pending)
        pending.clear()
    else:
        affirmed.add(key)


def mask_citations(text: str) -> str:
    """`text` with citation markers blanked out, keeping every other offset in place: "[2]",
    and a reference to a numbered source ("Passage 2", "document 3"), which names where a
    claim comes from, not a name or a number a context must state."""
    if "[" in text:
        text = _CITATION.sub(lambda m: " " * len(m.group()), text)
    if ("assage" in text or "ocument" in text or "ource" in text) and _SOURCE_HINT.search(text):
        text = _SOURCE_REFERENCE.sub(lambda m: " " * len(m.group()), text)
    return text


def merge(parts: tuple[Facts, ...]) -> Facts:
    """The facts of adjacent sentences read as one window."""
    if len(parts) == 1:
        return parts[0]
    surfaces: dict[str, str] = {}
    for part in reversed(parts):
        surfaces.update(part.surfaces)
    return Facts(
        content=frozenset().union(*(p.content for p in parts)),
        numbers=tuple(n for p in parts for n in p.numbers),
        words=frozenset().union(*(p.words for p in parts)),
        names=tuple(n for p in parts for n in p.names),
        negations=tuple(n for p in parts for n in p.negations),
        surfaces=surfaces,
        affirmed=frozenset().union(*(p.affirmed for p in parts)),
        exclusive=frozenset().union(*(p.exclusive for p in parts)),
        order=tuple(key for p in parts for key in p.order),
    )


def _base(low: str) -> str:
    if "'" not in low:
        return low
    if low.endswith("n't"):
        head = low[:-3]
        return {"ca": "can", "wo": "will", "sha": "shall"}.get(head, head)
    for suffix in _CONTRACTIONS:
        if low.endswith(suffix):
            return low[: -len(suffix)]
    return low.replace("'", "")


def _elided(low: str) -> str:
    """A French or Italian word without its elided article: "l'article" reads "article"."""
    cut = low.find("'")
    return low[cut + 1 :] if 0 < cut <= 4 else _base(low)


def _word_at(tokens: list[_Token], i: int) -> str:
    if i < len(tokens) and tokens[i][0] == "word":
        return tokens[i][1].lower()
    return ""


def _counts_as_number(low: str, tokens: list[_Token], i: int) -> bool:
    if low not in NUMBER_WORDS_NEEDING_UNIT:
        return True
    return _word_at(tokens, i + 1) in UNIT_WORDS


def _read_number(text: str, tokens: list[_Token], i: int, lex: Lexicon) -> tuple[Number, int]:
    """Read the quantity starting at token `i`; return it and the index after what it used."""
    kind, raw, start, end = tokens[i]
    first = i
    literal: str | None = None
    if kind == "word":
        value, end, i = _number_word(tokens, i, lex.number_words)
    elif "," in raw and _THOUSANDS.fullmatch(raw):
        value = float(raw.replace(",", ""))
    elif "," in raw or raw.count(".") > 1:
        # Versions (2.1.0) and other dotted codes compare as written.
        value, literal = 0.0, raw
    else:
        value = float(raw)
    is_bare_integer = kind == "num" and literal is None and raw.isdigit()
    i += 1

    unit: str | None = None
    sym = tokens[first - 1] if first > 0 else None
    if sym is not None and sym[0] == "sym" and sym[1] != "%" and start - sym[3] <= 1:
        unit, start = sym[1], sym[2]

    while i < len(tokens) and tokens[i][0] == "word":
        scale_word = tokens[i][1].lower()
        if scale_word not in SCALE_WORDS:
            break
        if scale_word in _ATTACHED_SCALES and tokens[i][2] != end:
            break
        value *= SCALE_WORDS[scale_word]
        end = tokens[i][3]
        i += 1
        is_bare_integer = False

    unit_end = end
    nxt = tokens[i][1].lower() if i < len(tokens) else ""
    if nxt == "%" or nxt in PERCENT_WORDS:
        unit, end, unit_end = "%", tokens[i][3], tokens[i][3]
        i += 1
    elif nxt == "per" and _word_at(tokens, i + 1) == "cent":
        unit, end, unit_end = "%", tokens[i + 1][3], tokens[i + 1][3]
        i += 2
    elif nxt in CURRENCY_WORDS and unit is None:
        unit, unit_end = CURRENCY_WORDS[nxt], tokens[i][3]
    elif unit is None:
        # A bare 1000-2100 is a calendar year unless a unit noun follows ("2000 employees").
        is_year = is_bare_integer and len(raw) == 4 and 1000 <= value <= 2100
        unit, unit_end = _unit_after(tokens, i, end, lex, any_word=not is_year)
        if unit is None:
            if first > 0 and _word_at(tokens, first - 1) in MONTHS:
                unit = "@date"
            elif is_year:
                unit = "@year"

    key = literal if literal is not None else _canonical(value)
    return Number(key, unit, text[start:unit_end]), i


def _number_word(tokens: list[_Token], i: int, words: dict[str, int]) -> tuple[float, int, int]:
    """The value of the number word at `i` ("twenty five" is 25), where it ends, and the index
    of its last token."""
    raw, end = tokens[i][1].lower(), tokens[i][3]
    value = float(words[raw])
    follower = _word_at(tokens, i + 1)
    if raw in _TENS and follower in words and words[follower] < 10:
        return value + words[follower], tokens[i + 1][3], i + 1
    return value, end, i


def _unit_after(
    tokens: list[_Token], i: int, end: int, lex: Lexicon, *, any_word: bool
) -> tuple[str | None, int]:
    for j in (i, i + 1):
        word = _word_at(tokens, j)
        if word in UNIT_WORDS:
            return stem(word), tokens[j][3]
    word = _word_at(tokens, i)
    if any_word and word and word not in lex.stopwords and word not in lex.number_words:
        return stem(_base(word)), tokens[i][3]
    return None, end


def _canonical(value: float) -> str:
    if value.is_integer():
        return str(int(value))
    return repr(round(value, 9))


def _names(
    text: str, tokens: list[_Token], stopwords: frozenset[str], *, first_is_grammar: bool = True
) -> tuple[Name, ...]:
    first_word = -1
    if first_is_grammar:
        for i, token in enumerate(tokens):
            if token[0] == "word":
                first_word = i
                break
    names: list[Name] = []
    run: list[int] = []
    # A name is a run of capitalised words next to each other: only those are looked at.
    capitals = [
        i
        for i, (kind, raw, _, _) in enumerate(tokens)
        if kind == "word" and raw[0].isupper() and raw != "I"
    ]
    for i in capitals:
        if run and run[-1] == i - 1 and _joins(text, tokens[i - 1], tokens[i]):
            run.append(i)
            continue
        if run:
            _close_run(text, tokens, run, first_word, names, stopwords)
        run = [i]
    _close_run(text, tokens, run, first_word, names, stopwords)
    return tuple(names)


def _joins(text: str, previous: _Token, token: _Token) -> bool:
    """Whether `token` goes on the name `previous` ends: across a space or hyphen, and across
    a full stop only after an initial or a title ("J. Smith", "St. Louis"), never into the
    next sentence ("… Santa Barbara, CA. With a 4.5-star rating")."""
    gap = _NAME_GAP.fullmatch(text, previous[3], token[2])
    if gap is None:
        return False
    if "." not in gap.group():
        return True
    word = previous[1].lower()
    return len(word) == 1 or word in _NAME_TITLES


_NAME_TITLES = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "mt",
        "ft",
        "jr",
        "sr",
        "prof",
        "gen",
        "gov",
        "sen",
        "rep",
        "lt",
        "col",
        "capt",
        "sgt",
        "rev",
        "hon",
        "pres",
        "no",
        "vol",
    }
)


_SENTENCE_OPENING = re.compile(r"(?:[.!?:]\s+|\n\s*)$")


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence or follows a label ("Diet: While …")."""
    return _SENTENCE_OPENING.search(text, max(0, start - 4), start) is not None


def _foreign_names(text: str, tokens: list[_Token], lex: Lexicon) -> tuple[Name, ...]:
    """Names where a capital does not make one: runs of at least `lex.name_words` capitalised
    words ("Ashgrove Energy Partners" in German), or in CJK text any capitalised Latin word,
    the text's first included (no capital opens a CJK sentence)."""
    if not lex.name_words:
        return ()
    found = _names(text, tokens, lex.stopwords, first_is_grammar=not lex.cjk)
    return tuple(n for n in found if len(n.words - lex.stopwords) >= lex.name_words)


def _close_run(
    text: str,
    tokens: list[_Token],
    run: list[int],
    first_word: int,
    names: list[Name],
    stopwords: frozenset[str],
) -> None:
    if run and (run[0] == first_word or _opens_sentence(text, tokens[run[0]][2])):
        # A capital on the opening word is grammar, not a name; "New York is" keeps "York".
        run = run[1:]
        while run and tokens[run[0]][1].lower() in stopwords:
            run = run[1:]
    if not run or (len(run) == 1 and len(tokens[run[0]][1]) == 1):
        # A lone capital letter is a unit, a grade or a variable ("69°F", "plan B"), no name.
        return
    lows = [_base(tokens[i][1].lower().replace("\u2019", "'")) for i in run]
    if all(w in stopwords for w in lows):
        return
    surface = text[tokens[run[0]][2] : tokens[run[-1]][3]]
    names.append(Name(surface=surface, words=frozenset(lows)))
