"""A bound on how deep a dataset's JSON may nest, checked before it is parsed.

Python's JSON parser, and everything that walks its result, recurses once per level: a row
whose `metadata` is 200,000 nested arrays ends in a RecursionError, not in a message. Every
reader parses JSON through `loads_bounded` (or checks a value's extent with `scan_value`
first), so a value nested deeper than `MAX_NESTING` is refused by an iterative scan of its
text, with the top-level field it is under, before any recursion starts.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_NESTING", "TooDeepError", "loads_bounded", "opens", "scan_value", "skip_value"]

MAX_NESTING = 256
"""The most arrays and objects a row may nest, one inside another (a row's own object counts
as one). Real rows nest a handful of levels; OTLP requests about a dozen."""

# A string (its escapes skipped in one go) or one structural character.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]', re.DOTALL)


class TooDeepError(ValueError):
    """A JSON value nests deeper than `MAX_NESTING`; `field` is the top-level key it is under
    (None when the value is not an object), `offset` where the limit was passed."""

    def __init__(self, field: str | None, offset: int) -> None:
        self.field = field
        self.offset = offset
        self.problem = (
            f"arrays or objects nested more than {MAX_NESTING} levels deep (the most VERA "
            "reads); flatten it, or store it as a string"
        )
        where = f"field '{field}': " if field is not None else ""
        super().__init__(where + self.problem)


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
                too_deep = TooDeepError(field, match.start())
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end(), too_deep
        elif token == ":":
            field = key if depth == 1 else field
        elif depth == 1:
            key = json.loads(token)
    raise json.JSONDecodeError("an array or object that never closes", text, start)


def loads_bounded(text: str) -> Any:
    """`json.loads(text)`, refusing (`TooDeepError`) a value nested deeper than `MAX_NESTING`.

    Only a text with more than `MAX_NESTING` brackets can be that deep, so the scan costs
    nothing for ordinary rows.
    """
    if opens(text) > MAX_NESTING:
        start = len(text) - len(text.lstrip())
        if text.startswith(("[", "{"), start):
            scan_value(text, start)
    return json.loads(text)
