"""Glue to other tools, imported only when chosen: OpenTelemetry export, Phoenix span
annotations and the pytest plugin."""

from vera.integrations._otel_export import export_report, traces_url
from vera.integrations._phoenix import (
    PhoenixAnnotator,
    PhoenixTally,
    annotate_phoenix,
    span_ids,
)

__all__ = [
    "PhoenixAnnotator",
    "PhoenixTally",
    "annotate_phoenix",
    "export_report",
    "span_ids",
    "traces_url",
]
