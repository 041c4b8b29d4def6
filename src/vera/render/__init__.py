"""Reports for people: a run rendered as one self-contained HTML file, or in any format by name.

from vera.render import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
Path("report.md").write_text(render_report("md", report))
get_reporter("md").write(RunView(report), sys.stdout)   # the one door every output goes through
"""

from vera.render._calibration import calibration_lines
from vera.render._cascade import cascade_summary
from vera.render._charts import Bar, bar_panel, histogram
from vera.render._console import (
    FAILING_TITLE,
    SHOWN_FAILURES,
    Cell,
    Column,
    change_cell,
    format_interval,
    format_score,
    plain_cells,
    print_summary,
    print_table,
)
from vera.render._html import HistoryPoint, csp_hash, read_samples, render_html
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.render._outputs import (
    atomic_text,
    check_output_paths,
    check_report_targets,
    open_run_view,
    output_format,
    parse_report_option,
    report_format,
    stored_report_html,
    write_reports,
    write_run_reports,
    write_stored_report,
)
from vera.render._progress import RunProgress, format_duration
from vera.render._ranking import FailingSamples, margin
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
from vera.render._samples import OUTCOMES, VERDICTS, unpack
from vera.render._view import baseline_rows, baseline_view, trend_panels

__all__ = [
    "FAILING_TITLE",
    "OUTCOMES",
    "REPORTER_REGISTRY",
    "SHOWN_FAILURES",
    "VERDICTS",
    "Bar",
    "Cell",
    "Column",
    "FailingSamples",
    "HistoryPoint",
    "RenderContext",
    "RenderingReporter",
    "Reporter",
    "RunProgress",
    "RunView",
    "atomic_text",
    "bar_panel",
    "baseline_rows",
    "baseline_view",
    "calibration_lines",
    "cascade_summary",
    "change_cell",
    "check_output_paths",
    "check_report_targets",
    "csp_hash",
    "format_duration",
    "format_for_path",
    "format_interval",
    "format_score",
    "get_reporter",
    "histogram",
    "margin",
    "open_run_view",
    "output_format",
    "parse_report_option",
    "plain_cells",
    "print_summary",
    "print_table",
    "read_samples",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_report",
    "report_format",
    "reporter_names",
    "stored_report_html",
    "trend_panels",
    "unpack",
    "write_reports",
    "write_run_reports",
    "write_stored_report",
]
