"""Glue to other tools, imported only when chosen: OpenTelemetry export, Phoenix span
annotations and the pytest plugin."""

from vera.integrations._otel_export import export_report
from vera.integrations._phoenix import PhoenixAnnotator, annotate_phoenix

__all__ = [
    "PhoenixAnnotator",
    "annotate_phoenix",
    "export_report",
]
