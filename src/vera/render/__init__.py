"""Reports for people: a run rendered as one self-contained HTML file, or in any format by name.

from vera.render import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
Path("report.md").write_text(render_report("md", report))
get_reporter("md").write(RunView(report), sys.stdout)   # the one door every output goes through
"""

from vera.render._html import render_html
from vera.render._outputs import (
    atomic_text,
    check_report_targets,
    open_run_view,
    write_reports,
    write_run_reports,
    write_stored_report,
)
from vera.render._registry import REPORTER_REGISTRY, RenderingReporter, Reporter, render_report
from vera.render._run_view import RenderContext, RunView

__all__ = [
    "REPORTER_REGISTRY",
    "RenderContext",
    "RenderingReporter",
    "Reporter",
    "RunView",
    "atomic_text",
    "check_report_targets",
    "open_run_view",
    "render_html",
    "render_report",
    "write_reports",
    "write_run_reports",
    "write_stored_report",
]
