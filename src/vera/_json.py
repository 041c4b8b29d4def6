"""The one guarded JSON reader: everything VERA parses from users and the network goes here.

Python's `json` accepts what JSON does not (NaN, Infinity), recurses once per level (a row
nested 200,000 deep is a RecursionError, not a message), lets a later duplicate key silently
replace an earlier one, and turns a number too large for a float into `inf`. Each of those
reached the engine as a traceback. `loads_bounded` (and `decode_at`, for a value inside a
larger text) refuses them with a `JsonRefused` that names the top-level field and the path to
the offending value, so a reader can make it one invalid row or one rejected request:

- nesting deeper than `MAX_NESTING`, found by an iterative scan before the parser recurses;
- `NaN`, `Infinity`, `-Infinity`, and numbers beyond a float's range (`1e999`);
- an object that names a key twice (which value was meant is unknowable);
- a text longer than the reader's size bound (`bounded_lines` keeps a line's bytes bounded
  while it is read).

This module sits in the bottom layers, so datasets, providers, the monitor and the store all
read through it.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

MAX_NESTING = 256
"""The most arrays and objects a value may nest, one inside another (a row's own object counts
as one). Real rows nest a handful of levels; OTLP requests about a dozen."""

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest JSONL line (one row, one OTLP request) VERA reads; a row with a hundred long
contexts is a few MB."""

_MAX_DIGITS = 308
"""An integer with more digits is beyond a float's range (and Python refuses 4,300)."""

# A string (its escapes skipped in one go), one structural character, or a bare literal.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]', re.DOTALL)
_FULL_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|-?Infinity|NaN|-?[0-9][0-9.eE+-]*', re.DOTALL
)


class JsonRefused(ValueError):
    """JSON that VERA refuses to read. `field` is the top-level key the value is under (None
    when the text is not an object, or the problem is the whole text), `path` the way to the
    value ("metadata.scores[2]"), `offset` where in the text it was found, and `problem` says
    what is wrong and what to do."""

    def __init__(
        self, problem: str, field: str | None = None, offset: int = 0, path: str | None = None
    ) -> None:
        self.field = field
        self.offset = offset
        self.path = path
        self.problem = problem if path in (None, field) else f"at {path}: {problem}"
        where = f"field '{field}': " if field is not None else ""
        super().__init__(where + self.problem)


class TooDeepError(JsonRefused):
    """A JSON value nests deeper than `MAX_NESTING`."""

    def __init__(self, field: str | None, offset: int, path: str | None = None) -> None:
        super().__init__(
            f"arrays or objects nested more than {MAX_NESTING} levels deep (the most VERA "
            "reads); flatten it, or store it as a string",
            field,
            offset,
            path,
        )


class _Refusal(Exception):
    """Raised inside the parser's hooks, which know the value but not where it is."""

    def __init__(self, kind: str) -> None:
        self.kind = kind


def _constant(name: str) -> Any:
    raise _Refusal("number")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refusal("number")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise _Refusal("number")
    return int(text)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _Refusal("duplicate")
    return value


_DECODER = json.JSONDecoder(
    parse_constant=_constant, parse_float=_float, parse_int=_int, object_pairs_hook=_object
)


def loads_bounded(text: str, *, max_chars: int | None = None) -> Any:
    """`json.loads(text)` with the guards above: `JsonRefused` (a `ValueError`) for what VERA
    does not read, `json.JSONDecodeError` for what is not JSON.

    Only a text with more than `MAX_NESTING` brackets can be too deep, so the depth check
    costs nothing for ordinary rows.
    """
    if max_chars is not None and len(text) > max_chars:
        raise JsonRefused(f"{len(text):,} characters, over the {max_chars:,} VERA reads at once")
    start = len(text) - len(text.lstrip())
    value, end = decode_at(text, start)
    rest = len(text) - len(text[end:].lstrip())
    if rest != len(text):
        raise json.JSONDecodeError("Extra data", text, rest)
    return value


def decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that starts at `text[start]` and where it ends (`raw_decode`, guarded
    like `loads_bounded`; the depth is checked on the value alone, so a long array of rows
    is not counted again for each of them)."""
    try:
        value, end = _decode(text, start)
    except RecursionError:
        # Deeper than the parser goes: the scan says where (one that never closes is too
        # deep all the same).
        with contextlib.suppress(json.JSONDecodeError):
            scan_value(text, start)
        raise TooDeepError(None, start) from None
    if _deeper_than_allowed(text, start, end):
        scan_value(text, start)  # names the field
    return value, end


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_OTHER_BYTES = bytes(b for b in range(256) if b not in b'[]{}"')
_SQUARE = bytes.maketrans(b"{}", b"[]")


def _deeper_than_allowed(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]`, parsed already, nests deeper than `MAX_NESTING`, found by
    byte operations that run in C (the token scan of `skip_value` runs in Python, slower than
    the parse): escapes, then all but quotes and brackets, then strings cut out; then each
    round removes the innermost pairs, so brackets left after `MAX_NESTING` rounds nest
    deeper."""
    if opens(text, start, end) <= MAX_NESTING:
        return False
    raw = text[start:end].encode("utf-8", "surrogatepass")
    if b"\\" in raw:
        raw = _ESCAPE.sub(b"", raw)
    # Strings alternate with what lies between them: the even pieces are outside.
    raw = b"".join(raw.translate(None, _OTHER_BYTES).split(b'"')[::2]).translate(_SQUARE)
    for _ in range(MAX_NESTING):
        shorter = raw.replace(b"[]", b"")
        if shorter == raw:
            return bool(raw)  # empty: shallow enough; unbalanced: the scan decides
        raw = shorter
    return bool(raw)


def _decode(text: str, start: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except _Refusal as refusal:
        raise _located(refusal.kind, text, start) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's own limit on an integer's digits
        raise _located("number", text, start) from None


@dataclass
class _Frame:
    kind: str
    key: str | None = None
    index: int = 0
    keys: set[str] = field(default_factory=set)


_PATH_LEVELS = 12
"""The levels of a path a message names; a deeper one ends in "…"."""


def _path(stack: list[_Frame]) -> str:
    parts: list[str] = []
    for frame in stack[:_PATH_LEVELS]:
        if frame.kind == "{":
            parts.append(f".{frame.key}" if parts else str(frame.key))
        else:
            parts.append(f"[{frame.index}]")
    return "".join(parts) + ("…" if len(stack) > _PATH_LEVELS else "")


def _path_at(text: str, start: int, offset: int) -> str | None:
    """The path to the array or object that opens at `offset` (where nesting passed the
    limit), the last level left out: it names the field that holds the deep value."""
    stack: list[_Frame] = []
    pending: str | None = None
    for match in _FULL_TOKEN.finditer(text, start, offset):
        token = match.group()
        if token in ("[", "{"):
            stack.append(_Frame(token))
        elif token in ("]", "}"):
            stack.pop()
        elif token == "," and stack[-1].kind == "[":
            stack[-1].index += 1
        elif token == ":" and pending is not None:
            stack[-1].key = pending
        elif token.startswith('"'):
            pending = json.loads(token)
    while stack and stack[-1].kind == "[" and stack[-1].index == 0:
        stack.pop()  # the arrays that only open the deep value
    return _path(stack) or None


def _located(kind: str, text: str, start: int) -> JsonRefused:
    """The refusal the hooks raised, with where it is: a scan of the text, token by token
    (only ever on the way to an error)."""
    stack: list[_Frame] = []
    pending: str | None = None
    for match in _FULL_TOKEN.finditer(text, start):
        token = match.group()
        if token in ("[", "{"):
            stack.append(_Frame(token))
        elif token in ("]", "}"):
            if len(stack) <= 1:
                break
            stack.pop()
        elif token == ",":
            if stack and stack[-1].kind == "[":
                stack[-1].index += 1
        elif token == ":":
            if stack and pending is not None:
                if kind == "duplicate" and pending in stack[-1].keys:
                    stack[-1].key = pending
                    return _refusal(kind, stack, match.start(), repr(pending))
                stack[-1].keys.add(pending)
                stack[-1].key = pending
        elif token.startswith('"'):
            pending = json.loads(token)
        elif kind == "number" and _bad_number(token):
            return _refusal(kind, stack, match.start(), token)
    return _refusal(kind, [], start, "")


def _bad_number(token: str) -> bool:
    if token.lstrip("-") in ("Infinity", "NaN"):
        return True
    if any(c in token for c in ".eE"):
        try:
            return math.isinf(float(token))
        except ValueError:
            return False
    return len(token.lstrip("-")) > _MAX_DIGITS


def _refusal(kind: str, stack: list[_Frame], offset: int, what: str) -> JsonRefused:
    top = stack[0].key if stack and stack[0].kind == "{" else None
    path = _path(stack) or None
    if kind == "duplicate":
        problem = f"the key {what} is given twice in one object; keep one"
    else:
        shown = what if len(what) <= 20 else f"{what[:8]}…({len(what)} characters)"
        problem = (
            f"{shown or 'a number'} is out of range: VERA reads finite numbers a float can "
            "hold (no NaN, Infinity or 1e999); write one, or null"
        )
    return JsonRefused(problem, top, offset, path)


def opens(text: str, start: int = 0, end: int | None = None) -> int:
    """How many arrays and objects open in `text[start:end]` (strings not told apart): a
    text with no more than `MAX_NESTING` cannot nest deeper."""
    return text.count("[", start, end) + text.count("{", start, end)


def scan_value(text: str, start: int) -> int:
    """The end of the array or object that opens at `text[start]`, found without recursion.

    Raises `TooDeepError` when it nests deeper than `MAX_NESTING`, and `json.JSONDecodeError`
    when it never closes (its syntax is otherwise left to the parser).
    """
    end, too_deep = skip_value(text, start)
    if too_deep is not None:
        raise too_deep
    return end


def skip_value(text: str, start: int) -> tuple[int, TooDeepError | None]:
    """The end of the array or object that opens at `text[start]`, and the `TooDeepError` it
    would raise in `scan_value` (the scan goes on to its end, so a reader can skip it)."""
    depth = 0
    key: str | None = None
    field: str | None = None
    too_deep: TooDeepError | None = None
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING and too_deep is None:
                too_deep = TooDeepError(field, match.start(), _path_at(text, start, match.start()))
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end(), too_deep
        elif token == ":":
            field = key if depth == 1 else field
        elif depth == 1:
            key = json.loads(token)
    raise json.JSONDecodeError("an array or object that never closes", text, start)


def first_line(fh: IO[bytes], limit: int = MAX_LINE_BYTES) -> bytes | None:
    """The first line of a binary file that is not blank (b"" when there is none), or None
    when it is longer than `limit` bytes: what a reader sniffs a file's kind by."""
    for _, raw in bounded_lines(fh, limit):
        if raw is None or raw.strip():
            return raw
    return b""


def bounded_lines(fh: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """The lines of a binary file with their numbers from 1; a line longer than `limit` bytes
    is None, read past in chunks so its bytes are never held at once."""
    number = 0
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= limit or (raw.endswith(b"\n") and len(raw) == limit + 1):
            yield number, raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = fh.readline(1 << 20)
        yield number, None
