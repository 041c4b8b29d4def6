"""An OTLP/HTTP request body as the OTLP/JSON object the trace reader reads.

Protobuf (`application/x-protobuf`) is parsed by `opentelemetry-proto` and its spans read
field by field into the OTLP reader's spans; JSON is read by the OTLP reader itself.
Either may be gzip-compressed (`Content-Encoding: gzip`); what it inflates to is bounded, so a
small compressed body cannot fill the memory.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from typing import Any

from vera._json import JsonRefused, loads_bounded
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera.datasets._otlp import SERVICE_NAME, OtlpRequestError, OtlpSpan, request_spans

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


def _protobuf_missing() -> str:
    return (
        "this vera monitor reads OTLP/JSON only: OTLP protobuf needs opentelemetry-proto, "
        f"which is not installed ({install_hint('monitor')}); or send JSON "
        "(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)"
    )


def require_protobuf() -> None:
    """`ConfigError` naming the pip commands when the `monitor` extra is missing (for a
    caller that needs protobuf; the receiver itself refuses only protobuf requests)."""
    if not protobuf_available():
        raise ConfigError(_protobuf_missing())


def protobuf_note() -> str | None:
    """What a monitor starting without opentelemetry-proto says: it reads OTLP/JSON, and
    refuses protobuf requests naming the extra; None when protobuf is read too."""
    return None if protobuf_available() else _protobuf_missing()


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
        except (UnicodeDecodeError, json.JSONDecodeError, JsonRefused) as exc:
            raise BadRequest(f"the body is not OTLP/JSON ({exc})") from None
    raise BadRequest(f"Content-Type {kind or 'missing'!r}: OTLP/HTTP sends {PROTOBUF} or {JSON}")


def _protobuf(body: bytes) -> Any:
    # Parsing is native code and quick, so it is done while the client waits (a body that is
    # not protobuf gets its 400); the conversion to the JSON form is left to `as_otlp_json`.
    if not protobuf_available():
        raise BadRequest(_protobuf_missing())
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped,unused-ignore]
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    try:
        return trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        raise BadRequest(f"the body is not an OTLP protobuf trace request ({exc})") from None


def request_spans_of(request: Any) -> list[OtlpSpan]:
    """The spans of a decoded request: a protobuf message read field by field (protobuf's
    generic JSON conversion costs several times more than the spans' own reading), JSON by
    the OTLP file reader."""
    if not hasattr(request, "resource_spans"):
        return request_spans(request)
    spans = []
    for resource_spans in request.resource_spans:
        service = None
        for item in resource_spans.resource.attributes:
            if item.key == SERVICE_NAME and item.value.HasField("string_value"):
                service = item.value.string_value
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(_proto_span(span, service))
    return spans


def _proto_span(span: Any, service: str | None) -> OtlpSpan:
    if len(span.trace_id) != 16 or len(span.span_id) != 8:
        raise OtlpRequestError(
            f"not an OTLP trace request (a span's trace id has {len(span.trace_id)} bytes and "
            f"its span id {len(span.span_id)}; expected 16 and 8)"
        )
    return OtlpSpan(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        name=span.name,
        start=span.start_time_unix_nano,
        end=span.end_time_unix_nano,
        attributes={item.key: _proto_value(item.value, item.key) for item in span.attributes},
        service=service,
    )


def _proto_value(value: Any, key: str) -> Any:
    """An AnyValue as plain Python, as the file reader reads its JSON form (a NaN or
    infinite double is refused there, so here too)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_proto_value(v, key) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {p.key: _proto_value(p.value, key) for p in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    if kind == "double_value" and not math.isfinite(value.double_value):
        raise OtlpRequestError(
            f"not an OTLP trace request VERA reads (the attribute {key!r} holds "
            f"{value.double_value}; VERA reads finite numbers)"
        )
    return getattr(value, kind)


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
