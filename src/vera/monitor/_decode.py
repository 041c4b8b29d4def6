"""An OTLP/HTTP request body as the OTLP/JSON object the trace reader reads.

Protobuf (`application/x-protobuf`) is parsed by `opentelemetry-proto` and turned into
protobuf's JSON mapping (ids in base64, which the reader accepts); JSON is read as it is.
Either may be gzip-compressed (`Content-Encoding: gzip`); what it inflates to is bounded, so a
small compressed body cannot fill the memory.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from vera.datasets.nesting import TooDeepError, loads_bounded
from vera.errors import ConfigError
from vera.types.extras import install_hint

__all__ = [
    "MAX_BODY_BYTES",
    "BadRequest",
    "as_otlp_json",
    "decode_body",
    "inflate",
    "protobuf_available",
    "require_protobuf",
    "span_count",
    "trace_ids",
]

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request, once inflated, the receiver reads."""

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class BadRequest(ValueError):
    """A body the receiver cannot read: answered 400 with this message."""


def protobuf_available() -> bool:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2  # noqa: F401
    except ImportError:
        return False
    return True


def require_protobuf() -> None:
    """`ConfigError` naming the pip commands when the `monitor` extra is missing."""
    if not protobuf_available():
        raise ConfigError(
            "vera monitor reads OTLP protobuf with opentelemetry-proto, which is not "
            f"installed: {install_hint('monitor')}"
        )


def _inflate(body: bytes) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, MAX_BODY_BYTES + 1)
    except zlib.error as exc:
        raise BadRequest(f"Content-Encoding is gzip but the body is not gzip ({exc})") from None
    if len(data) > MAX_BODY_BYTES or inflater.unconsumed_tail:
        raise BadRequest(f"the body inflates to more than {MAX_BODY_BYTES} bytes")
    return data


def inflate(body: bytes, encoding: str = "") -> bytes:
    """The body as sent before its `Content-Encoding` (gzip or none)."""
    if len(body) > MAX_BODY_BYTES:
        raise BadRequest(f"the body is over {MAX_BODY_BYTES} bytes")
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return _inflate(body)
    if encoding not in ("", "identity"):
        raise BadRequest(f"Content-Encoding {encoding!r} is not read; send gzip or none")
    return body


def decode_body(body: bytes, content_type: str) -> Any:
    """An inflated body as a protobuf request or an OTLP/JSON object, or `BadRequest`."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == PROTOBUF:
        return _protobuf(body)
    if kind == JSON:
        try:
            return loads_bounded(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, TooDeepError) as exc:
            raise BadRequest(f"the body is not OTLP/JSON ({exc})") from None
    raise BadRequest(f"Content-Type {kind or 'missing'!r}: OTLP/HTTP sends {PROTOBUF} or {JSON}")


def _protobuf(body: bytes) -> Any:
    # Parsing is native code and quick, so it is done while the client waits (a body that is
    # not protobuf gets its 400); the conversion to the JSON form is left to `as_otlp_json`.
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped,unused-ignore]
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    try:
        return trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        raise BadRequest(f"the body is not an OTLP protobuf trace request ({exc})") from None


def as_otlp_json(request: Any) -> Any:
    """A decoded request in the OTLP/JSON form: a protobuf message converted, JSON as is."""
    if isinstance(request, dict | list) or not hasattr(request, "resource_spans"):
        return request
    from google.protobuf.json_format import (  # type: ignore[import-untyped,unused-ignore]
        MessageToDict,
    )

    return MessageToDict(request)


def span_count(request: Any) -> int:
    """How many spans a decoded request carries (0 for what is not a request)."""
    if hasattr(request, "resource_spans"):
        return sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
    if not isinstance(request, dict):
        return 0
    total = 0
    for resource in _list(request, "resourceSpans"):
        for scope in _list(resource, "scopeSpans") or _list(
            resource, "instrumentationLibrarySpans"
        ):
            total += len(_list(scope, "spans"))
    return total


def _scopes(resource: Any) -> list[Any]:
    # `instrumentationLibrarySpans` is what OTLP called `scopeSpans` before 0.15.
    return _list(resource, "scopeSpans") or _list(resource, "instrumentationLibrarySpans")


def _list(owner: Any, key: str) -> list[Any]:
    value = owner.get(key) if isinstance(owner, dict) else None
    return value if isinstance(value, list) else []


def trace_ids(request: Any) -> set[str]:
    """The distinct trace ids a decoded request carries, as sent (to count dropped traces)."""
    if hasattr(request, "resource_spans"):
        return {
            span.trace_id.hex()
            for r in request.resource_spans
            for s in r.scope_spans
            for span in s.spans
        }
    found: set[str] = set()
    for resource in _list(request, "resourceSpans"):
        for scope in _list(resource, "scopeSpans") or _list(
            resource, "instrumentationLibrarySpans"
        ):
            for span in _list(scope, "spans"):
                if isinstance(span, dict):
                    found.add(str(span.get("traceId")))
    return found
