"""Contexts shown with numbered sentences, so a judge cites "2.3" instead of copying a quote.

A verdict's evidence used to be a sentence the judge copied out of a context: the reply's
longest part, and a copy the model could get wrong. Shown numbered, each context's sentences
can be cited by id ("2.3": context 2, sentence 3), and VERA quotes the cited sentence itself,
from the context's own text, so every quote is found and the reply is a few tokens long.

The sentences cover their context without a gap (text between two of `split_units`'s
sentences, a code block say, goes with the one before), so the judge sees every character of
every context, and the text of a sentence is exactly a slice of its context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from vera._text._segment import split_units
from vera.judges._evidence import content_words

_ID = re.compile(r"^\s*\[?(\d+)\.(\d+)\]?\s*$")
_FLAT_ID = re.compile(r"^\s*\[?(\d+)\]?\s*$")
# A cited sentence's text as a small model writes it: maybe after its shown id ("7 The fee
# is $5."), maybe quoted; compared without case, spacing or the quotes.
_SHOWN_ID = re.compile(r"^\s*\[?\d+(?:\.\d+)?\]?[.:)]?\s+(?=\D)")
_MIN_CITED_CHARS = 12
"""A cited text shorter than this is too little to name one sentence by."""
_CLOSE_COPY = 2 / 3
"""A cited text that is no sentence's exact copy names the one sentence that has at least this
share of its content words (and more than any other sentence has): a 1.5B model asked to copy
the deciding sentence rewrote it in the claim's words ("the agreement" for "this Agreement"),
or copied the claim itself (issue 45). A text with fewer in common names none."""
_CLOSE_COPY_WORDS = 3
"""A close copy has at least this many content words: fewer ("the Survival") name a topic,
not a sentence."""


_QUOTES = "\"'\u201c\u201d\u2018\u2019"  # straight and curly quotes


def _plain(text: str) -> str:
    return " ".join(text.strip().strip(_QUOTES).split()).lower()


def _sentences(context: str) -> tuple[str, ...]:
    starts = [unit.start for unit in split_units(context)]
    if not starts:
        return (context.strip(),) if context.strip() else ()
    starts[0] = 0
    ends = [*starts[1:], len(context)]
    found = (context[start:end].strip() for start, end in zip(starts, ends, strict=True))
    return tuple(text for text in found if text)


def _closest(text: str, shown: list[tuple[int, str]]) -> tuple[int, str] | None:
    """The one sentence of `shown` that `text` is a close copy of (`_CLOSE_COPY`); None when
    none is, or two are equally close."""
    words = content_words(text)
    if len(words) < _CLOSE_COPY_WORDS:
        return None
    shared = [len(words & content_words(sentence)) for _, sentence in shown]
    best = max(shared, default=0)
    if best < _CLOSE_COPY * len(words) or shared.count(best) > 1:
        return None
    return shown[shared.index(best)]


_QUOTED_SHARE = 2 / 3
"""A reason quotes a sentence when it holds an unbroken run of at least this share of the
sentence's words, in order: a small model asked for a reason first quoted the deciding
sentence there and left the citation out (issue 45), sometimes cut short at a quotation mark
inside the sentence."""
_NAMED_ID = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.]*\d)")
"""A dotted sentence id named inside a reason ("paragraph 1.2 of the context"); not part of a
longer number ("1.25", "v2.1.3")."""
_QUOTED_WORDS = 4
"""A quoted run is at least this many words: fewer name a phrase, not a sentence."""
_QUOTED_CLAUSE = 8
"""A run this long quotes its sentence whatever its share: the same model quoted the clause of
a long sentence that decides the claim, in its own order ("SPRD improves recall@20 by 7.4
points over BM25 on the ... benchmark" from "On the ... benchmark, SPRD improves ...")."""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _quoted_run(reason: list[str], sentence: str) -> int:
    """The words of the longest run of `sentence` that `reason` holds, where that run is a
    quote of it (`_QUOTED_SHARE`, `_QUOTED_WORDS`); 0 where none is."""
    words = _words(sentence)
    if not words:
        return 0
    matcher = SequenceMatcher(None, reason, words, autojunk=False)
    run = matcher.find_longest_match(0, len(reason), 0, len(words)).size
    if run < min(_QUOTED_WORDS, len(words)):
        return 0
    return run if run >= _QUOTED_CLAUSE or run >= _QUOTED_SHARE * len(words) else 0


@dataclass(frozen=True)
class SentenceIds:
    """The sentences of each context, numbered from 1 within the context."""

    sentences: tuple[tuple[str, ...], ...]
    flat: bool = False
    """Numbered 1, 2, 3 ... across all contexts ("7" instead of "2.3"): two tokens a sentence
    fewer, in the prompt and in each citation (the compact prompts); "k.n" ids resolve too."""

    @classmethod
    def of(cls, contexts: Sequence[str], *, flat: bool = False) -> SentenceIds:
        return cls(tuple(_sentences(context) for context in contexts), flat)

    def render(self) -> str:
        """Each context as "[k]" then one "k.n sentence" line per sentence; blocks apart.
        Flat: one "g sentence" line per sentence, g counted across contexts; blocks apart."""
        if self.flat:
            return self._render_flat()
        blocks = []
        for k, sentences in enumerate(self.sentences, start=1):
            lines = [f"[{k}]"] + [f"{k}.{n} {text}" for n, text in enumerate(sentences, start=1)]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def _render_flat(self) -> str:
        blocks, number = [], 0
        for sentences in self.sentences:
            lines = []
            for text in sentences:
                number += 1
                lines.append(f"{number} {text}")
            blocks.append("\n".join(lines))
        return "\n\n".join(block for block in blocks if block)

    def _flat(self, number: int) -> tuple[int, str] | None:
        for k, sentences in enumerate(self.sentences, start=1):
            if 1 <= number <= len(sentences):
                return k, sentences[number - 1]
            number -= len(sentences)
        return None

    def resolve(self, sentence_id: str) -> tuple[int, str] | None:
        """The 1-based context number and the exact text of `sentence_id`, None if no such.
        A plain number ("7") is a flat id, valid only where the ids were shown flat. A text is
        the sentence it copies (small models write the sentence where its number is asked):
        the one sentence that equals it or, for a text of at least `_MIN_CITED_CHARS`
        characters, the first that contains it or that it contains, else the one it is a close
        copy of (`_CLOSE_COPY`)."""
        flat = _FLAT_ID.match(sentence_id)
        if flat is not None:
            return self._flat(int(flat.group(1))) if self.flat else None
        match = _ID.match(sentence_id)
        if match is None:
            return self._by_text(sentence_id)
        k, n = int(match.group(1)), int(match.group(2))
        if not (1 <= k <= len(self.sentences) and 1 <= n <= len(self.sentences[k - 1])):
            return None
        return k, self.sentences[k - 1][n - 1]

    def _by_text(self, cited: str) -> tuple[int, str] | None:
        text = _plain(_SHOWN_ID.sub("", cited, count=1))
        if not text:
            return None
        shown = [(k, s, _plain(s)) for k, ss in enumerate(self.sentences, 1) for s in ss]
        exact = next(((k, s) for k, s, plain in shown if plain == text), None)
        if exact is not None or len(text) < _MIN_CITED_CHARS:
            return exact
        within = next(((k, s) for k, s, plain in shown if text in plain or plain in text), None)
        return within or _closest(text, [(k, s) for k, s, _ in shown])

    def quoted_in(self, reason: str) -> tuple[int, str] | None:
        """The 1-based context number and text of the sentence `reason` quotes (`_quoted_run`):
        the one with the longest quoted run; else of the first sentence id it names ("as
        sentence 1.2 says"); None where it quotes none, or two alike, and names no id."""
        quoted = self._quoted(_words(reason))
        if quoted is not None or self.flat:
            return quoted
        for named in _NAMED_ID.finditer(reason):
            cited = self.resolve(named.group(0))
            if cited is not None:
                return cited
        return None

    def holding(self, claim: str) -> tuple[int, str] | None:
        """The 1-based context number and text of the one sentence that holds two thirds of
        `claim`'s content words (`_closest`); None where none does, or two alike."""
        return _closest(claim, [(k, s) for k, ss in enumerate(self.sentences, 1) for s in ss])

    def _quoted(self, words: list[str]) -> tuple[int, str] | None:
        runs = [
            (_quoted_run(words, text), k, text)
            for k, sentences in enumerate(self.sentences, start=1)
            for text in sentences
        ]
        best = max((run for run, _, _ in runs), default=0)
        found = [(k, text) for run, k, text in runs if run == best]
        return found[0] if best and len(found) == 1 else None

    def cost_more_than_quotes(self, claims: int) -> bool:
        """Whether numbering costs more than `claims` quotes would: about 3 prompt tokens a
        sentence, against a quote as long as the mean sentence in completion tokens, which
        cost about 4 times as much (gpt-4o-mini, Claude). Long contexts with few claims."""
        count = sum(len(sentences) for sentences in self.sentences)
        chars = sum(len(text) for sentences in self.sentences for text in sentences)
        # 3 * count > 4 * claims * (chars / count / 4), with 4 characters a token.
        return 3 * count * count > claims * chars

    def describe_ids(self) -> str:
        """The ids that exist, for a re-ask: "1.1 to 1.5, 2.1 to 2.4"."""
        if self.flat:
            total = sum(len(s) for s in self.sentences)
            return f"1 to {total}" if total else "none"
        ranges = [f"{k}.1 to {k}.{len(s)}" for k, s in enumerate(self.sentences, 1) if s]
        return ", ".join(ranges) or "none"


_NUMBERED_LINE = re.compile(r"^\s*(\d+)[.:)]?\s+(.+)$", re.S)
"""A line as the numbered answer shows it: its sentence's number, then the sentence."""


@dataclass(frozen=True)
class AnswerSentences:
    """An answer shown with numbered sentences, so a claim that is a whole sentence as it
    stands comes back as its number (a claim by reference) instead of a copy of it: the
    restated answer was most of an extraction reply. VERA expands a reference to the
    sentence's own text, a slice of the answer, so the claim is located exactly."""

    sentences: tuple[str, ...]

    @classmethod
    def of(cls, response: str) -> AnswerSentences:
        return cls(_sentences(response))

    def render(self) -> str:
        """One "n sentence" line per sentence (as the compact prompts number contexts)."""
        return "\n".join(f"{n} {text}" for n, text in enumerate(self.sentences, start=1))

    def unnumbered(self, text: str) -> str:
        """`text`, or the sentence it copies with its line number ("2 The refund is paid."
        for sentence 2, as a model may copy the numbered line it was shown)."""
        found = _NUMBERED_LINE.match(text)
        if found is not None:
            number, rest = int(found.group(1)), found.group(2).strip()
            if 1 <= number <= len(self.sentences) and rest == self.sentences[number - 1].strip():
                return self.sentences[number - 1]
        return text

    def expand(self, reference: int) -> str:
        """The text of sentence `reference`; a ValueError naming the range when there is none."""
        if not 1 <= reference <= len(self.sentences):
            raise ValueError(
                f"claim {reference} refers to sentence {reference}, but the answer has "
                f"sentences 1 to {len(self.sentences)}; cite one of them or write the claim out"
            )
        return self.sentences[reference - 1]
