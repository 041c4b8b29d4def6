"""Reports for people: a run rendered as one self-contained HTML file, or in any format by name.

from vera.reports import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
Path("report.md").write_text(render_report("md", report))
get_reporter("md").write(RunView(report), sys.stdout)   # the one door every output goes through
"""

from vera.reports.html import HistoryPoint, render_html
from vera.reports.registry import (
    REPORTER_REGISTRY,
    RenderingReporter,
    Reporter,
    format_for_path,
    get_reporter,
    render_report,
    reporter_names,
)
from vera.reports.run_view import RenderContext, RunView

__all__ = [
    "REPORTER_REGISTRY",
    "HistoryPoint",
    "RenderContext",
    "RenderingReporter",
    "Reporter",
    "RunView",
    "format_for_path",
    "get_reporter",
    "render_html",
    "render_report",
    "reporter_names",
]
