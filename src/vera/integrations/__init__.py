"""Glue to other tools, imported only when chosen: OpenTelemetry export and the pytest plugin."""

from vera.integrations._otel_export import export_report, traces_url

__all__ = [
    "export_report",
    "traces_url",
]
