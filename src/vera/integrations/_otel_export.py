"""A finished run as OpenTelemetry spans, sent over OTLP/HTTP (`vera eval --otel-endpoint`).

One `vera.eval` span for the run, with one `vera.sample` child a sample carrying its scores, so
evaluation results land in the same tracing backend as the application's own traces. The
OpenTelemetry SDK and the OTLP/HTTP exporter are imported only here and only when asked for.
Their objects stay behind `Any` at this boundary.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera._types._report import Report, SampleResult

INSTALL_HINT = install_hint("otel")
TRACES_PATH = "/v1/traces"


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL: a bare collector address gets OTLP's `/v1/traces` path, as the
    SDK does for `OTEL_EXPORTER_OTLP_ENDPOINT`; a URL with a path is used as it is."""
    parts = urlsplit(endpoint)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ConfigError(f"--otel-endpoint {endpoint!r}: expected an http(s) URL")
    if parts.path in {"", "/"}:
        return endpoint.rstrip("/") + TRACES_PATH
    return endpoint


def _modules() -> dict[str, Any]:
    names = {
        "trace": "opentelemetry.sdk.trace",
        "export": "opentelemetry.sdk.trace.export",
        "memory": "opentelemetry.sdk.trace.export.in_memory_span_exporter",
        "resources": "opentelemetry.sdk.resources",
        "otlp": "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    }
    try:
        return {key: importlib.import_module(name) for key, name in names.items()}
    except ImportError:
        raise ConfigError(
            f"--otel-endpoint needs the OpenTelemetry SDK; install it with {INSTALL_HINT}"
        ) from None


def export_report(
    report: Report,
    endpoint: str,
    *,
    timeout_s: float = 10.0,
    results: Iterable[SampleResult] | None = None,
) -> int:
    """Send `report` as spans to `endpoint`, one per sample of `results` (default
    `report.samples`; a streamed run's come from its `RunView.sample_results()`); the number
    of spans sent.

    The spans are gathered in memory and sent in one request, so a collector that is down or
    refuses them is one `ConfigError` here rather than a log line per batch.
    """
    url = traces_url(endpoint)
    otel = _modules()
    memory = otel["memory"].InMemorySpanExporter()
    resource = otel["resources"].Resource.create({"service.name": "vera"})
    provider = otel["trace"].TracerProvider(resource=resource)
    provider.add_span_processor(otel["export"].SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("vera")
    with tracer.start_as_current_span("vera.eval") as run:
        run.set_attributes(_run_attributes(report))
        sent = 0
        for sample in report.samples if results is None else results:
            with tracer.start_as_current_span("vera.sample") as span:
                span.set_attributes(_sample_attributes(sample))
            sent += 1
        run.set_attribute("vera.samples", sent)
    spans = memory.get_finished_spans()
    provider.shutdown()
    exporter = otel["otlp"].OTLPSpanExporter(endpoint=url, timeout=timeout_s)
    try:
        outcome = exporter.export(spans)
    finally:
        exporter.shutdown()
    if outcome != otel["export"].SpanExportResult.SUCCESS:
        raise ConfigError(f"--otel-endpoint {url}: the collector did not accept the spans")
    return len(spans)


def _run_attributes(report: Report) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "vera.dataset": report.dataset,
        "vera.judge": report.judge,
        "vera.invalid_rows": len(report.invalid_rows),
    }
    if report.pipeline is not None:
        attributes["vera.pipeline"] = report.pipeline
    for metric, mean in report.metrics.items():
        if mean is not None:  # an attribute cannot be null
            attributes[f"vera.metric.{metric}"] = float(mean)
    return attributes


def _sample_attributes(sample: SampleResult) -> dict[str, Any]:
    attributes: dict[str, Any] = {"vera.sample.id": sample.id, "vera.status": sample.status.value}
    if sample.category is not None:
        attributes["vera.category"] = sample.category
    if sample.latency_ms is not None:
        attributes["vera.latency_ms"] = float(sample.latency_ms)
    for metric, score in sample.scores.items():
        if score is not None:
            attributes[f"vera.score.{metric}"] = float(score)
    if sample.error is not None:
        attributes["vera.error"] = str(sample.error)
    return attributes
