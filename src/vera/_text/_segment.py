"""Sentence segmentation with exact character spans, aware of Markdown structure.

The segmenter never rewrites text: every unit it returns is a `(start, end)` range of the input,
trimmed of surrounding whitespace, so `text[start:end]` is what a claim or evidence quotes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from vera._text._lexicon import ABBREVIATIONS, NEVER_FINAL_ABBREVIATIONS, STOPWORDS


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence (or heading, table row, list item) as a span of the text it came from.

    `claimable` is False for units that state nothing on their own: headings, table rows,
    intros ending in ":" and questions.
    """

    start: int
    end: int
    claimable: bool


# Sentence ends that close a sentence whatever follows, and the brackets and quotes that may
# close after them (「…。」).
_HARD_STOPS = "。！？｡।॥؟۔።။"
_CLOSING = "」』）】〕〉》”’\"'"
_QUESTION_MARKS = ("?", "？", "؟", "\u037e")
_COLONS = (":", "：")
# Thai and Lao write no full stop: a space between two of their letters ends a sentence.
_SPACED_SCRIPT = re.compile(r"[\u0e01-\u0eff]")
_SPACED_SCRIPTS = re.compile(r"(?<=[\u0e01-\u0eff])[ \t\u00a0]+(?=[\u0e01-\u0eff])")
_LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_BOLD_HEADING = re.compile(r"[ \t]*(?:\*\*|__)[^*_\n]+(?:\*\*|__)[ \t]*:?[ \t]*$")
_FENCE = re.compile(r"[ \t]*(?:```|~~~)")
_RULE = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE = re.compile(r"[ \t]*\|")
_BULLET = re.compile(r"[ \t]*(?:[-*+•‣◦▪>]|\d{1,3}[.)])[ \t]+")
# A full stop, ellipsis, "!" or "?" run, then any closing quotes, brackets or Markdown emphasis,
# then whitespace or the end: a candidate sentence end. Dots inside tokens (3.5, v2.1, a.b.com)
# are never followed by whitespace, so they are not candidates.
_TERMINATOR = re.compile(
    # The lookahead names every character a match can start with: the engine then skips to
    # the next of them instead of trying each alternative at every position (3x quicker).
    rf"(?=[.…!?{_HARD_STOPS}])"
    r"(?:(?:\.{2,}|…|[.!?]+)[\"'\u201d\u2019)\]*_]*(?=\s|$)"
    # Full stops that need no space after them: CJK (。！？ and their half/full-width forms),
    # Devanagari danda, Arabic and Urdu question mark and full stop, Ethiopic, Myanmar.
    rf"|[{_HARD_STOPS}]+[{_CLOSING}]*)"
)
_NEXT_WORD = re.compile(r"\s*[\"'\u201c\u2018(\[*_]*([^\W_]+|\S)?")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_CLOSERS = "\"'\u201d\u2019)]*_ \t" + _CLOSING


def split_units(text: str) -> list[Unit]:
    """Split `text` into sentence units, in order, with exact spans.

    Blank lines, headings, list items, table rows and lines ending in ":" bound a paragraph;
    inside a paragraph, line breaks are plain whitespace and sentences end at ".", "!", "?"
    or an ellipsis unless an abbreviation, initial or lowercase continuation says otherwise.
    Fenced code blocks and horizontal rules yield nothing.
    """
    units: list[Unit] = []
    para_start = -1
    para_end = -1
    in_code = False
    pos = 0
    for line in text.splitlines(keepends=True):
        line_start = pos
        pos += len(line)
        line_end = line_start + len(line.rstrip(_LINE_BREAKS))
        body = text[line_start:line_end]

        if in_code:
            in_code = _FENCE.match(body) is None
            continue
        if _FENCE.match(body) or not body.strip() or _RULE.match(body):
            if para_start >= 0:
                _split_paragraph(text, para_start, para_end, units)
            para_start = -1
            in_code = _FENCE.match(body) is not None
            continue
        heading = _HEADING.match(body)
        if heading or _BOLD_HEADING.match(body) or _TABLE.match(body):
            if para_start >= 0:
                _split_paragraph(text, para_start, para_end, units)
            para_start = -1
            begin = line_start + (heading.end() if heading else 0)
            _emit(text, begin, line_end, units, claimable=False)
            continue
        bullet = _BULLET.match(body)
        if bullet:
            if para_start >= 0:
                _split_paragraph(text, para_start, para_end, units)
            para_start = line_start + bullet.end()
        elif para_start < 0:
            para_start = line_start
        para_end = line_end
        # A line ending in ":" introduces what follows; it never runs on into it.
        if body.rstrip(_CLOSERS).endswith(_COLONS):
            _split_paragraph(text, para_start, para_end, units)
            para_start = -1
    if para_start >= 0:
        _split_paragraph(text, para_start, para_end, units)
    return units


def _split_paragraph(text: str, start: int, end: int, units: list[Unit]) -> None:
    # Only a paragraph with Thai or Lao in it pays for looking at its spaces.
    emit = _emit_spaced if _SPACED_SCRIPT.search(text, start, end) else _emit_sentence
    sentence_start = start
    for match in _TERMINATOR.finditer(text, start, end):
        if _is_sentence_end(text, match, end):
            emit(text, sentence_start, match.end(), units)
            sentence_start = match.end()
    emit(text, sentence_start, end, units)


def _emit_sentence(text: str, start: int, end: int, units: list[Unit]) -> None:
    _emit(text, start, end, units, claimable=True)


def _emit_spaced(text: str, start: int, end: int, units: list[Unit]) -> None:
    """Emit a sentence, split further where Thai or Lao mark sentence ends with a space."""
    for gap in _SPACED_SCRIPTS.finditer(text, start, end):
        _emit(text, start, gap.start(), units, claimable=True)
        start = gap.end()
    _emit(text, start, end, units, claimable=True)


def _is_sentence_end(text: str, match: re.Match[str], limit: int) -> bool:
    mark = match.group().rstrip(_CLOSERS)
    if mark[-1:] in _HARD_STOPS:
        # 「…。」と言った: a quoted sentence that the text runs on from is not an end.
        quoted = match.group() != mark and match.group()[-1] in _CLOSING
        return not (quoted and match.end() < limit and not text[match.end()].isspace())
    if "!" in mark or "?" in mark:
        return True
    following = _NEXT_WORD.match(text, match.end(), limit)
    nxt = following.group(1) if following else None
    if not nxt:
        return True
    if mark != ".":
        # An ellipsis trails off mid-sentence unless a capital starts a new one.
        return nxt[0].isupper()
    if nxt[0].islower():
        return False
    prev = _word_before(text, match.start()).lower()
    if nxt[0].isalpha() and not nxt[0].isupper():
        # A script without case (Arabic, Hebrew, Devanagari, Hangul...): no capital to wait
        # for, so only a title that always leads on keeps the sentence open.
        return prev not in NEVER_FINAL_ABBREVIATIONS
    if prev in NEVER_FINAL_ABBREVIATIONS:
        return False
    if prev in ABBREVIATIONS or len(prev) == 1 or _DOTTED.fullmatch(prev):
        # "U.S. It was" ends a sentence, "Dr. Smith", "J. K. Rowling" and "No. 5" do not:
        # after an abbreviation only a capitalised function word signals a new sentence.
        return nxt[0].isupper() and nxt.lower() in STOPWORDS
    return True


def _word_before(text: str, end: int) -> str:
    start = end
    while start > 0 and (
        text[start - 1].isalpha()
        or text[start - 1] == "."
        or unicodedata.combining(text[start - 1])
    ):
        start -= 1
    return text[start:end].lstrip(".")


def _emit(text: str, start: int, end: int, units: list[Unit], *, claimable: bool) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return
    if claimable:
        tail = text[start:end].rstrip(_CLOSERS)
        claimable = not tail.endswith((*_QUESTION_MARKS, *_COLONS))
    units.append(Unit(start, end, claimable))
