"""Reports for people: a run rendered as one self-contained HTML file, or in any format by name.

from vera.reports import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
Path("report.md").write_text(render_report("md", report))
"""

from vera.reports.html import HistoryPoint, render_html
from vera.reports.registry import (
    REPORTER_REGISTRY,
    RenderContext,
    Reporter,
    format_for_path,
    get_reporter,
    render_report,
    reporter_names,
)

__all__ = [
    "REPORTER_REGISTRY",
    "HistoryPoint",
    "RenderContext",
    "Reporter",
    "format_for_path",
    "get_reporter",
    "render_html",
    "render_report",
    "reporter_names",
]
