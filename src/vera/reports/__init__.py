"""Reports for people: a run rendered as one self-contained HTML file.

from vera.reports import render_html
Path("report.html").write_text(render_html(report, samples={s.id: s for s in data}))
"""

from vera.reports.html import HistoryPoint, render_html

__all__ = ["HistoryPoint", "render_html"]
