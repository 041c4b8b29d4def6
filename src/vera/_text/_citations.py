"""Citations in a RAG answer: find the markers, resolve them to contexts, tie them to claims.

A citation metric has to know which passage the writer says backs which claim. This module
answers that without any model, so every later score rests on a rule that can be read here:

- `parse_citations` finds the markers: `[1]`, `[2][3]`, `[1, 2]`, `[1-3]`, `[doc-3]`,
  `[Source 2]`, `[^2]`, `(Source: handbook.pdf)`, `(Sources: a; b)`.
- `resolve_citation` turns a label into the index of the context it names.
- `attach_citations` gives each claim the markers written for it.
- `strip_citations` removes the markers, so claim texts can be matched against the response.

Markers inside code (fenced blocks and inline spans) are never citations: `arr[1]` is code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from vera._text._segment import split_units
from vera._types import Claim, Context


@dataclass(frozen=True, slots=True)
class CitationMark:
    """One cited label and where its marker sits in the response.

    `start`/`end` span the whole marker, so "[1, 2]" gives two marks with the same span and
    removing every span removes every marker. `label` is what was cited: numbers are
    canonical ("01" gives "1", "[1-3]" gives "1", "2", "3"), footnotes lose their "^", other
    labels keep their spelling (resolution ignores case). `style` is "numeric", "id",
    "footnote" or "source".
    """

    label: str
    start: int
    end: int
    style: str


_SOURCE_WORD = r"\s*(?:sources?|references?|refs?)\s*:"
_MARKER = re.compile(
    rf"\((?P<paren>{_SOURCE_WORD}[^()\n]*)\)|\[(?P<bracket>[^\[\]\n]*)\]", re.IGNORECASE
)
_LINK_TARGET = re.compile(rf"\((?!{_SOURCE_WORD})", re.IGNORECASE)
_SOURCE_PREFIX = re.compile(rf"{_SOURCE_WORD}(.*)", re.IGNORECASE | re.DOTALL)
_NUMBER_ITEM = r"\d+(?:\s*[-\u2013]\s*\d+)?"
_NUMERIC = re.compile(rf"\s*{_NUMBER_ITEM}(?:\s*[,;]\s*{_NUMBER_ITEM})*\s*")
_RANGE = re.compile(r"(\d+)(?:\s*[-\u2013]\s*(\d+))?")
_ID = re.compile(r"[^\W_][\w.\-]*")
_NAMED_NUMBER = re.compile(
    r"(?:source|src|doc|document|passage|context|ctx|chunk|ref|reference)\s+#?\d+",
    re.IGNORECASE,
)
_FOOTNOTE = re.compile(r"\^([\w.\-]+)")
_TRAILING_NUMBER = re.compile(r"[^\W\d_]+[\s_\-]*#?(\d+)")
_CODE = re.compile(
    r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]*`", re.MULTILINE | re.DOTALL
)
_NAME_TRIM = " \t\"'`*[]"
_MAX_RANGE = 100
_SPACE_RUN = re.compile(r"(?<=\S)[ \t]+")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+(?=[.,;:!?)]|$)", re.MULTILINE)
_WORD = re.compile(r"\w+")
_FAR = 1 << 62


def parse_citations(response: str) -> list[CitationMark]:
    """Every citation marker in `response`, sorted by position.

    What is not a citation, and why: Markdown links and images (`[text](url)`; but
    "[1](Source: a)" is two citations) and footnote or link definitions (`[^2]: ...`
    opening a line) are structure; `[x]` and `[ ]` are checkboxes; "(2019)" is an ordinary
    parenthesis, which counts only with a "Source:" prefix; "[3-1]" and ranges of 100 or
    more are not passage lists. A bracketed token that is not a number is an id only if it
    holds a letter and a digit, "-", "_" or "." (doc-3, kb_12, handbook.pdf) and does not
    end in "."; so editorial words like [sic], [citation needed] or [Ed.] are not citations,
    even where a context happens to carry that id, because the parser never sees the
    contexts. "[Source 2]"-style names (source, doc, passage, context, chunk, ref + number)
    are ids too.
    """
    code = [m.span() for m in _CODE.finditer(response)]
    marks: list[CitationMark] = []
    for match in _MARKER.finditer(response):
        start, end = match.span()
        if any(lo <= start < hi for lo, hi in code):
            continue
        paren = match.group("paren")
        if paren is not None:
            labels = [(label, "source") for label in _source_labels(paren)]
        elif _LINK_TARGET.match(response, end) or _is_definition(response, start, end):
            continue
        else:
            labels = list(_bracket_labels(match.group("bracket")))
        marks.extend(CitationMark(label, start, end, style) for label, style in labels)
    return marks


def _is_definition(response: str, start: int, end: int) -> bool:
    line_start = response.rfind("\n", 0, start) + 1
    return not response[line_start:start].strip() and response.startswith(":", end)


def _bracket_labels(body: str) -> Iterator[tuple[str, str]]:
    text = body.strip()
    if footnote := _FOOTNOTE.fullmatch(text):
        yield _canonical(footnote.group(1)), "footnote"
    elif _SOURCE_PREFIX.fullmatch(body):
        yield from ((label, "source") for label in _source_labels(body))
    elif _NUMERIC.fullmatch(body):
        numbers = [_expand(item) for item in _RANGE.finditer(body)]
        if all(numbers):
            yield from ((str(n), "numeric") for group in numbers for n in group)
    elif _NAMED_NUMBER.fullmatch(text) or (
        _ID.fullmatch(text)
        and not text.endswith(".")
        and any(c.isalpha() for c in text)
        and any(c.isdigit() or c in "-_." for c in text)
    ):
        yield text, "id"


def _expand(item: re.Match[str]) -> list[int]:
    low = int(item.group(1))
    high = int(item.group(2)) if item.group(2) is not None else low
    # "[3-1]" or "[1900-2000]" is not a list of passages; the whole bracket is dropped.
    return list(range(low, high + 1)) if 0 <= high - low < _MAX_RANGE else []


def _source_labels(body: str) -> list[str]:
    match = _SOURCE_PREFIX.fullmatch(body)
    names = match.group(1) if match else body
    # "Sources: Smith, 2019; Jones, 2020" names two sources: ";" wins over "," when present.
    parts = names.split(";") if ";" in names else names.split(",")
    return [_canonical(p.strip(_NAME_TRIM)) for p in parts if p.strip(_NAME_TRIM)]


def _canonical(label: str) -> str:
    return str(int(label)) if label.isascii() and label.isdigit() else label


def resolve_citation(label: str, contexts: Sequence[Context]) -> int | None:
    """The 0-based index of the context `label` names, or None when it names none.

    In order: a number n (or footnote "^n") is passage n, 1-based as RAG prompts number
    them; otherwise the context whose id equals the label, ignoring case; then the one whose
    source, file name or file stem does; then the one id equal once "-", "_" and spaces are
    ignored ("doc3" names "doc-3"), if exactly one is. Last, a word with a trailing number
    ("doc-3", "passage 3") names passage 3, but only when no context has an id: with ids, a
    label that matches none is a wrong citation, not a position.
    """
    text = label.strip().removeprefix("^").strip()
    if text.isascii() and text.isdigit():
        number = int(text)
        return number - 1 if 1 <= number <= len(contexts) else None
    key = text.casefold()
    for index, context in enumerate(contexts):
        if context.id is not None and context.id.strip().casefold() == key:
            return index
    for index, context in enumerate(contexts):
        if context.source is not None and key in _source_keys(context.source):
            return index
    loose = _loose(key)
    matches = [i for i, c in enumerate(contexts) if c.id is not None and _loose(c.id) == loose]
    if len(matches) == 1:
        return matches[0]
    trailing = _TRAILING_NUMBER.fullmatch(key)
    if trailing and all(c.id is None for c in contexts):
        number = int(trailing.group(1))
        return number - 1 if 1 <= number <= len(contexts) else None
    return None


def _source_keys(source: str) -> set[str]:
    full = source.strip().casefold()
    name = re.split(r"[/\\]", full.rstrip("/\\"))[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return {full, name, stem}


def _loose(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.casefold())


def strip_citations(text: str) -> str:
    """`text` without its citation markers, spaces tidied, for matching claims to sentences.

    Runs of spaces collapse to one (indentation is kept), spaces before punctuation and at
    line ends go, and the ends are trimmed. Removal repeats until no marker is left, so
    "[[1]2]" cannot leave "[2]" behind.
    """
    for _ in range(len(text)):
        marks = parse_citations(text)
        if not marks:
            break
        text = "".join(_without(text, marks, keep=""))
    text = _SPACE_RUN.sub(" ", text)
    return _SPACE_BEFORE_PUNCT.sub("", text).strip()


def _without(text: str, marks: Sequence[CitationMark], keep: str) -> Iterator[str]:
    """The pieces of `text` outside the marks; with keep=" " the marks become blanks of the
    same length (newlines kept), so offsets stay valid."""
    position = 0
    for mark in sorted(marks, key=lambda m: m.start):
        if mark.start >= position:
            yield text[position : mark.start]
            position = mark.start
        if mark.end > position:
            yield re.sub(r"[^\n]", keep, text[position : mark.end]) if keep else ""
            position = mark.end
    yield text[position:]


def attach_citations(
    response: str, claims: Sequence[Claim], marks: Sequence[CitationMark]
) -> dict[str, tuple[CitationMark, ...]]:
    """Each claim's id mapped to the marks written for it; every id is present.

    Sentences come from `split_units` over the response with the markers blanked out, so
    "days.[1] Refunds" splits like "days. Refunds". A mark belongs to the sentence it lies
    in; one between sentences (after a full stop, "...30 days. [1] Refunds...") belongs to
    the sentence before it, as writers put the marker after the period.

    A claim belongs to the sentence its span overlaps most. A claim without a span is found
    in the response (case and spacing ignored) and then treated as if it had that span; if
    it is not there verbatim, it goes to the sentence whose text, markers stripped, contains
    it, else to the one sharing most words with it, else nowhere (an empty tuple).

    Within a sentence, a claim with a span gets the marks from its start up to the next
    claim's start (the first claim's range opens at the sentence start, the last one's runs
    past the sentence end); so "A is 3 [1], and B is 4 [2]." gives A [1] and B [2]. A claim
    whose range holds no mark, or that has no position, gets all the sentence's marks: a
    marker closing a sentence cites the whole sentence.
    """
    ordered = sorted(marks, key=lambda m: m.start)
    units = split_units("".join(_without(response, ordered, keep=" ")))
    sentences = [(u.start, u.end) for u in units]
    by_sentence: dict[int, list[CitationMark]] = {}
    for mark in ordered:
        owner = _owner(sentences, mark.start)
        if owner is not None:
            by_sentence.setdefault(owner, []).append(mark)

    texts = [_normal(response[start:end]) for start, end in sentences]
    placed: list[tuple[Claim, int | None, int | None]] = []
    for claim in claims:
        span = claim.span or _find(response, claim.text)
        sentence = _best_overlap(sentences, span) if span else None
        if sentence is None:
            sentence = _by_text(texts, claim.text)
            span = None
        placed.append((claim, sentence, span[0] if span else None))

    result: dict[str, tuple[CitationMark, ...]] = {}
    for claim, sentence, start in placed:
        own = by_sentence.get(sentence, []) if sentence is not None else []
        if start is not None and own:
            starts = {s for _, n, s in placed if n == sentence and s is not None}
            low = start if start > min(starts) else -_FAR
            high = min((s for s in starts if s > start), default=_FAR)
            window = [m for m in own if low <= m.start < high]
            own = window or own
        result[claim.id] = tuple(own)
    return result


def _owner(sentences: list[tuple[int, int]], position: int) -> int | None:
    before = None
    for index, (start, end) in enumerate(sentences):
        if start <= position < end:
            return index
        if end <= position:
            before = index
    return before if before is not None else (0 if sentences else None)


def _find(response: str, text: str) -> tuple[int, int] | None:
    words = text.strip().rstrip(".!?;").split()
    if not words:
        return None
    match = re.search(r"\s+".join(map(re.escape, words)), response, re.IGNORECASE)
    return match.span() if match else None


def _best_overlap(sentences: list[tuple[int, int]], span: tuple[int, int]) -> int | None:
    overlaps = [min(span[1], end) - max(span[0], start) for start, end in sentences]
    best = max(overlaps, default=0)
    return overlaps.index(best) if best > 0 else None


def _by_text(texts: list[str], text: str) -> int | None:
    needle = _normal(text)
    for index, sentence in enumerate(texts):
        if needle and needle in sentence:
            return index
    words = set(_WORD.findall(needle))
    overlaps = [len(words & set(_WORD.findall(sentence))) for sentence in texts]
    best = max(overlaps, default=0)
    return overlaps.index(best) if best > 0 else None


def _normal(text: str) -> str:
    return " ".join(strip_citations(text).casefold().split()).rstrip(".!?;")
