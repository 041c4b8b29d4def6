"""Tolerant extraction of one JSON object from a model's reply.

Models asked for JSON still wrap it in Markdown fences or a sentence of prose, and local servers
often ignore `response_format` altogether, so the reply is searched rather than trusted.

A reply that opens an object and ends before closing it was cut off, whatever finish reason the
server gave; it raises `IncompleteJSONError` rather than yielding an inner object that happens
to be complete (which would then fail validation as "claims: Field required").
"""

from __future__ import annotations

import re
from typing import Any

from vera._json import JsonRefused, decode_at, loads_bounded

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_EXCERPT = 200


class MalformedJSONError(ValueError):
    """A reply held no JSON object where one was required."""


class IncompleteJSONError(MalformedJSONError):
    """A reply opened a JSON object and ended inside it: it was cut off."""


def parse_json_object(text: str) -> dict[str, Any]:
    """Return the JSON object in `text`: the whole text, a fenced block, or the first
    balanced `{...}` that decodes, in that order.

    Raises `MalformedJSONError` when there is none, or when the whole reply is JSON but not an
    object (a list, say): picking one object out of a list would silently drop the rest; and
    `IncompleteJSONError` when the reply ends inside the object it opens.
    """
    try:
        whole = loads_bounded(text)
    except ValueError:  # not JSON alone, or JSON the guarded reader refuses: searched below
        pass
    else:
        if isinstance(whole, dict):
            return whole
        raise MalformedJSONError(
            f"expected a JSON object, got a JSON {type(whole).__name__}: {_excerpt(text)}"
        )
    for fenced in _FENCE.finditer(text):
        try:
            value = loads_bounded(fenced.group(1))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return _first_object(text)


def _first_object(text: str) -> dict[str, Any]:
    """The first balanced `{...}` of `text` that decodes. One the guarded reader refuses (a
    NaN in it, a key twice, nesting without end) is the reply's object, refused: neither an
    object inside it nor one after it is taken for the reply instead."""
    for start in _object_starts(text):
        try:
            value, _ = decode_at(text, start)
        except JsonRefused as exc:
            raise MalformedJSONError(f"the reply's JSON is not readable: {exc}") from None
        except ValueError:
            if _ends_inside(text, start):
                raise IncompleteJSONError(
                    "the reply is not complete JSON: it ends inside an unclosed object "
                    f"(cut off?): {_excerpt(text, tail=True)}"
                ) from None
            continue
        if isinstance(value, dict):
            return value
    raise MalformedJSONError(f"no JSON object found in the reply: {_excerpt(text)}")


def try_parse_json_object(text: str) -> dict[str, Any] | None:
    """`parse_json_object(text)`, or None when the reply holds no JSON object.

    Adapters use this: a bad reply is still a paid reply, and the caller (a judge) decides
    whether to ask again, so they return it rather than raise.
    """
    try:
        return parse_json_object(text)
    except MalformedJSONError:
        return None


def _object_starts(text: str) -> list[int]:
    return [i for i, ch in enumerate(text) if ch == "{"]


def _ends_inside(text: str, start: int) -> bool:
    """Whether the object that opens at `start` is still open where `text` ends.

    Only a brace followed by a key counts as an object's start, so a stray "{" in prose is
    not taken for a cut-off reply.
    """
    if not text[start + 1 :].lstrip().startswith('"'):
        return False
    depth = 0
    in_string = escaped = False
    for char in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return False
    return True


def _excerpt(text: str, *, tail: bool = False) -> str:
    if not text.strip():
        return "(empty reply)"
    if len(text) <= _EXCERPT:
        return repr(text)
    # The end of a cut-off reply shows where it stopped; the start of any other shows what it is.
    return repr("…" + text[-_EXCERPT:]) if tail else repr(text[:_EXCERPT] + "…")
