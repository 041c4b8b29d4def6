"""Tolerant extraction of one JSON object from a model's reply.

Models asked for JSON still wrap it in Markdown fences or a sentence of prose, and local servers
often ignore `response_format` altogether, so the reply is searched rather than trusted.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MalformedJSONError", "parse_json_object", "try_parse_json_object"]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_EXCERPT = 200


class MalformedJSONError(ValueError):
    """A reply held no JSON object where one was required."""


def parse_json_object(text: str) -> dict[str, Any]:
    """Return the JSON object in `text`: the whole text, a fenced block, or the first
    balanced `{...}` that decodes, in that order.

    Raises `MalformedJSONError` when there is none, or when the whole reply is JSON but not an
    object (a list, say): picking one object out of a list would silently drop the rest.
    """
    try:
        whole = json.loads(text)
    except ValueError:
        pass
    else:
        if isinstance(whole, dict):
            return whole
        raise MalformedJSONError(
            f"expected a JSON object, got a JSON {type(whole).__name__}: {_excerpt(text)}"
        )
    for fenced in _FENCE.finditer(text):
        try:
            value = json.loads(fenced.group(1))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    for start in _object_starts(text):
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
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


def _excerpt(text: str) -> str:
    if not text.strip():
        return "(empty reply)"
    short = text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
    return repr(short)
