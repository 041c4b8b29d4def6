"""Traces of a small RAG application, made by the real OpenTelemetry SDK and sent by its
exporters over OTLP/HTTP, as an instrumented application sends them to `vera monitor`.

Protobuf goes through the SDK's own `OTLPSpanExporter`. For JSON, the SDK's own encoder gives
the request and `JsonSpanExporter` posts it in OTLP/JSON (ids in hex, per the OTLP spec): the
official JSON exporter package pins older versions of the shared exporter libraries than the
protobuf one installed beside it.
"""

from __future__ import annotations

import base64
import gzip
import json
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import Tracer

__all__ = ["FileSpanExporter", "JsonSpanExporter", "emit_rag_trace", "rag_provider"]

_IDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _IDS and v else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


class JsonSpanExporter(SpanExporter):
    """OTLP/JSON over HTTP, the request built by the SDK's own encoder."""

    def __init__(self, endpoint: str, *, gzipped: bool = False) -> None:
        self.endpoint = endpoint
        self.gzipped = gzipped
        self.answers: list[dict[str, Any]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = json.dumps(_hex_ids(MessageToDict(encode_spans(spans)))).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.gzipped:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers)
        with urllib.request.urlopen(request, timeout=10) as answer:
            self.answers.append(json.loads(answer.read() or b"{}"))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class FileSpanExporter(SpanExporter):
    """OTLP/JSON requests appended to a file, one a line, as OpenTelemetry's file exporter
    writes them: the trace file `vera eval --dataset` reads."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(_hex_ids(MessageToDict(encode_spans(spans))))
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def rag_provider(
    endpoint: str,
    *,
    service: str = "shop",
    encoding: str = "protobuf",
    gzipped: bool = False,
    batch: bool = False,
) -> TracerProvider:
    """A tracer provider exporting to `endpoint` (protobuf or json)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter: SpanExporter
    if encoding == "json":
        exporter = JsonSpanExporter(endpoint, gzipped=gzipped)
    else:
        compression = Compression.Gzip if gzipped else Compression.NoCompression
        exporter = OTLPSpanExporter(endpoint=endpoint, compression=compression)
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    return provider


def emit_rag_trace(
    tracer: Tracer,
    *,
    query: str,
    answer: str,
    documents: Sequence[str],
    route: str = "/ask",
    model: str = "gpt-4o-mini",
) -> str:
    """One request of the application: a root CHAIN span, a RETRIEVER and an LLM span, with
    OpenInference attributes. Its trace id, in hex."""
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("http.route", route)
        root.set_attribute("input.value", query)
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            for n, text in enumerate(documents):
                retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
                retriever.set_attribute(f"retrieval.documents.{n}.document.id", f"doc-{n}")
        with tracer.start_as_current_span("generate") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("gen_ai.request.model", model)
        root.set_attribute("output.value", answer)
        return format(root.get_span_context().trace_id, "032x")
