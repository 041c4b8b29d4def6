"""Render a `Report` as one self-contained HTML file that a person can read offline.

    from vera.reports import render_html
    html = render_html(report, samples={s.id: s for s in dataset})
    Path("report.html").write_text(html, encoding="utf-8")

The page holds everything inline: styles, SVG charts drawn here in Python, and a few lines of
script that only add a filter and open a claim's details on click (the page reads the same
without them). It fetches nothing: a content security policy forbids every external load, and
allows only the page's own style and script by their hashes. All text from the dataset and the
judge is escaped by the template engine (`autoescape` is always on), so a response holding
`<script>` shows as text.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from vera._version import __version__
from vera.report import Report, SampleStatus
from vera.reports import view
from vera.reports.cascade import cascade_summary
from vera.reports.samples import VERDICTS, sample_views
from vera.reports.view import HistoryPoint
from vera.types import Sample

__all__ = ["HistoryPoint", "render_html"]

TEMPLATE = "report.html.j2"
OPENED_SAMPLES = 3
"""How many of the worst samples the page shows expanded."""


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _num(value: float) -> str:
    return f"{value:g}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} ms"


def _p_value(value: float | None) -> str:
    if value is None:
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _usd(value: Any) -> str:
    return f"${value:,.4f}" if isinstance(value, int | float) else "—"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def _csp_hash(text: str) -> str:
    """The CSP source expression that allows exactly this inline style or script."""
    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("vera.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        score=_score,
        num=_num,
        ms=_ms,
        p_value=_p_value,
        usd=_usd,
        signed=_signed,
        csp_hash=_csp_hash,
    )
    return env


_ENV = _environment()


def _details(details: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's details less its usage, which has a table of its own; a cascade's second
    judge keeps its usage nested too, so that copy is dropped as well."""
    shown: dict[str, Any] = {}
    for key, value in details.items():
        if key == "usage":
            continue
        if isinstance(value, Mapping) and "usage" in value:
            value = {k: v for k, v in value.items() if k != "usage"}
        shown[key] = value
    return shown


def render_html(
    report: Report,
    *,
    samples: Mapping[str, Sample] | None = None,
    history: Sequence[HistoryPoint] = (),
) -> str:
    """The report as one HTML document.

    `samples` maps sample ids to the evaluated samples; with them, each response is shown with
    its claims highlighted by verdict, and each claim with the context it cites. Without them
    (or for a claim without a span) the claims are listed. `history` gives earlier runs' means,
    oldest first, for the trend chart, drawn from two runs on; include this run in it to see it
    on the chart.
    """
    breakdowns = view.breakdown_panels(report)
    baseline_panels, baseline_rows = view.baseline_view(report)
    views = sample_views(report.samples, samples, report.metric_summary, opened=OPENED_SAMPLES)
    categories = sorted({r.category for r in report.samples if r.category is not None})
    template = _ENV.get_template(TEMPLATE)
    return template.render(
        report=report,
        renderer_version=__version__,
        cards=view.cards(report),
        distributions=view.distributions(report),
        breakdowns=breakdowns,
        baseline_panels=baseline_panels,
        baseline_rows=baseline_rows,
        trend=view.trend_panels(report, history),
        history=history,
        steps=view.step_rows(report),
        usage=view.usage_view(report),
        cascade=cascade_summary(report.judge_details),
        details=_details(report.judge_details),
        samples=views,
        statuses=[s.value for s in SampleStatus if any(r.status is s for r in report.samples)],
        categories=categories,
        verdicts=VERDICTS,
        has_texts=bool(samples),
    )
