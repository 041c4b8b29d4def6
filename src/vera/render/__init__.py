"""Reports for people: a run rendered as one self-contained HTML file, or in any format by name.

from vera.render import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
Path("report.md").write_text(render_report("md", report))
get_reporter("md").write(RunView(report), sys.stdout)   # the one door every output goes through
"""

from vera.render._html import read_samples, render_html
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.render._outputs import (
    atomic_text,
    check_report_targets,
    open_run_view,
    stored_report_html,
    write_reports,
    write_run_reports,
    write_stored_report,
)
from vera.render._registry import (
    REPORTER_REGISTRY,
    RenderingReporter,
    Reporter,
    format_for_path,
    get_reporter,
    render_report,
    reporter_names,
)
from vera.render._run_view import RenderContext, RunView
from vera.render._view import HistoryPoint

__all__ = [
    "REPORTER_REGISTRY",
    "HistoryPoint",
    "RenderContext",
    "RenderingReporter",
    "Reporter",
    "RunView",
    "atomic_text",
    "check_report_targets",
    "format_for_path",
    "get_reporter",
    "open_run_view",
    "read_samples",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_report",
    "reporter_names",
    "stored_report_html",
    "write_reports",
    "write_run_reports",
    "write_stored_report",
]
