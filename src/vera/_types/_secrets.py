"""Secrets out of text: the one function every stored, reported or printed message goes through.

A base URL may carry a key as its userinfo (`http://user:KEY@host/v1`) or as a query parameter
(`?api_key=KEY`), and a provider's error message may echo either, or the key itself. `redact`
rewrites all three, so the run store, the reports and the terminal never show one:

    >>> redact("could not reach http://me:sk-123@host/v1?api-key=abc&x=1")
    'could not reach http://***@host/v1?api-key=***&x=1'
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

REDACTED = "***"
MIN_SECRET_LENGTH = 8
"""A known key shorter than this is never masked by value: a placeholder such as `x` or `test`
is no secret, and masking it would garble every word it occurs in."""

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")
_KEY_PARAMETER = re.compile(
    r"(?i)^(api[-_]?key|key|token|access[-_]?token|auth|authorization|secret|client[-_]?secret"
    r"|password|passwd|pwd|sig|signature|x-api-key|code|credential|credentials)$"
)
# The shapes of provider keys: OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), and bearer tokens.
_BARE_KEY = re.compile(r"\b(sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{16,})")


def redact(text: str) -> str:
    """`text` with every URL's userinfo, key-looking query values and bare keys replaced."""
    if not text:
        return text
    text = _URL.sub(lambda match: _redact_url(match.group(0)), text)
    return _BARE_KEY.sub(_hide_key, text)


def mask_secret(text: str, secret: str | None) -> str:
    """`text` with each whole occurrence of the key `secret` replaced (some servers echo the
    key they rejected). Only where it stands alone: the key `abc12345` leaves `xabc12345y` as it
    is, so a short or common key never cuts a word ("OpenAIException") in half."""
    if not secret or len(secret) < MIN_SECRET_LENGTH or secret not in text:
        return text
    alone = re.compile(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])")
    return alone.sub(REDACTED, text)


def is_redacted(text: str | None) -> bool:
    """Whether `text` had something taken out by `redact` (so it cannot be used as it is)."""
    return text is not None and REDACTED in text


def _hide_key(match: re.Match[str]) -> str:
    found = match.group(0)
    return f"Bearer {REDACTED}" if found.startswith("Bearer") else REDACTED


def _redact_url(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(_redact_parameter(p) for p in parts.query.split("&")) if parts.query else ""
    if netloc == parts.netloc and query == parts.query:
        return url
    return SplitResult(parts.scheme, netloc, parts.path, query, parts.fragment).geturl()


def _redact_parameter(parameter: str) -> str:
    name, sep, value = parameter.partition("=")
    if sep and value and _KEY_PARAMETER.match(name):
        return f"{name}={REDACTED}"
    return parameter
