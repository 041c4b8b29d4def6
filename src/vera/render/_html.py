"""Render a `Report` as one self-contained HTML file that a person can read offline.

    from vera.render import render_html
    html = render_html(report, samples={s.id: s for s in dataset})
    Path("report.html").write_text(html, encoding="utf-8")

The page holds everything inline: styles, SVG charts drawn here in Python, and a script. The
summary, charts and tables are HTML. The samples are one compressed JSON document (see
`vera.render._samples`) that the script decompresses in the browser and shows a page at a time,
with search and filters over all of them; that keeps a report of thousands of samples a few
megabytes that opens in about a second. Without JavaScript the summary still reads, and a note
says the samples need it.

It fetches nothing: a content security policy forbids every external load, and allows only the
page's own style and script by their hashes. All text from the dataset and the judge is
escaped by the template engine (`autoescape` is always on) or, in the samples, set as DOM text
by the script (never parsed as HTML), so a response holding `<script>` shows as text.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import Any
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from vera._results._outcome import sample_outcome
from vera._types import Conversation, JudgeDetails, Sample
from vera._types._report import Report, SampleResult, SampleStatus
from vera._version import __version__
from vera.render import _view as view
from vera.render._calibration import calibration_lines
from vera.render._cascade import cascade_summary
from vera.render._samples import OUTCOMES, VERDICTS, PackedSamples, SamplePacker, unpack
from vera.render._threads import ThreadWants, report_threads, worst_conversations
from vera.render._view import HistoryPoint, SampleTally

TEMPLATE = "report.html.j2"
OPENED_SAMPLES = 3
"""How many of the worst samples (and conversation threads) the page shows expanded."""
TABLE_LIMIT = 500
"""The most conversations the report's conversation table lists, the worst first."""
PAGE_SIZE = 50
"""Samples per page of the sample list."""
DETAIL_LIMIT = 5_000
"""The most samples whose full detail the page holds: the worst ones. Each further sample is
listed with its id, status, category and first score only, so a run of 100,000 samples still
gives a page of a few megabytes; the JSON report has every sample's detail."""


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


def _thousands(value: int) -> str:
    return f"{value:,}"


def csp_hash(text: str) -> str:
    """The CSP source expression that allows exactly this inline style or script."""
    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


FILTERS: dict[str, Callable[..., str]] = {
    "score": _score,
    "num": _num,
    "ms": _ms,
    "p_value": _p_value,
    "usd": _usd,
    "signed": _signed,
    "thousands": _thousands,
    "csp_hash": csp_hash,
}
"""How the report's templates format numbers; `vera view`'s pages use the same."""


def template_environment(package: str) -> Environment:
    """The Jinja environment for the `templates/` of `package`: autoescape always on, the
    report's number filters (`vera view`'s pages are rendered the same way). The report's own
    partials (`thread.html.j2`: threads and verdict badges) are found from any package."""
    loaders = [PackageLoader(package, "templates")]
    if package != "vera.render":
        loaders.append(PackageLoader("vera.render", "templates"))
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


_ENV = template_environment("vera.render")


def inline_template(package: str, name: str, element: str) -> Markup:
    """A file of `package`'s `templates/` to put in a page verbatim (VERA's own code, allowed
    by its hash), so it must not be able to close its `element`."""
    text = resources.files(package).joinpath(f"templates/{name}").read_text("utf-8")
    if f"</{element}" in text.lower() or "<!--" in text:
        raise RuntimeError(f"templates/{name} must not contain '</{element}' or '<!--'")
    return Markup(text)


STYLE = inline_template("vera.render", "report.css", "style")
"""The report's style sheet, which `vera view`'s own pages share."""
_SCRIPT = inline_template("vera.render", "report.js", "script")
_DATA = re.compile(r'<script type="application/octet-stream" id="sample-data"[^>]*>([^<]*)<')


def _details(details: JudgeDetails) -> dict[str, Any]:
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


def _read(
    report: Report,
    results: Iterable[SampleResult],
    texts: Mapping[str, Sample],
    detail_limit: int | None,
    wants: ThreadWants,
) -> tuple[PackedSamples, SampleTally]:
    """The one pass over the samples: each packed for the page, counted for the charts, and
    kept where it is a turn of a conversation the page shows as a thread."""
    packer = SamplePacker(
        report.metric_summary, limit=detail_limit, measured=report.pipeline is not None
    )
    tally = SampleTally()
    for result in results:
        outcome = sample_outcome(result)
        tally.add(result, outcome.outcome)
        packer.add(result, texts.get(result.id), outcome)
        wants.add(result)
    return packer.finish(), tally


def render_html(
    report: Report,
    *,
    samples: Mapping[str, Sample] | None = None,
    history: Sequence[HistoryPoint] = (),
    results: Iterable[SampleResult] | None = None,
    detail_limit: int | None = DETAIL_LIMIT,
    links: Sequence[tuple[str, str]] = (),
    conversations: Mapping[str, Conversation] | None = None,
    thread_link: str | None = None,
) -> str:
    """The report as one HTML document.

    `results` are the per-sample results, read once in one pass (a streamed run's); by default
    `report.samples`. `samples` maps sample ids to the evaluated samples; with them (or where a
    result carries its own response), each response is shown with its claims highlighted by
    verdict, and each claim with the context it cites. Without them (or for a claim without a
    span) the claims are listed. `history` gives earlier runs' means, oldest first, for the
    trend chart, drawn from two runs on; include this run in it to see it on the chart.
    `detail_limit` caps how many samples, the worst, keep their full detail (None: all).
    `links` are (label, URL) pairs shown above the title (`vera view` links its other pages).
    `conversations` (by id, as read) and `thread_link`: see `_conversation_values`.
    """
    texts = samples if samples is not None else {}
    wants = ThreadWants.of(report.conversations)
    packed, tally = _read(
        report, report.samples if results is None else results, texts, detail_limit, wants
    )
    baseline_panels, baseline_rows = view.baseline_view(report)
    return _ENV.get_template(TEMPLATE).render(
        report=report,
        renderer_version=__version__,
        cards=view.cards(report),
        distributions=view.distributions(report, tally),
        breakdowns=view.breakdown_panels(report),
        baseline_panels=baseline_panels,
        baseline_rows=baseline_rows,
        trend=view.trend_panels(report, history),
        history=history,
        steps=view.step_rows(tally),
        usage=view.usage_view(report),
        cascade=cascade_summary(report.judge_details),
        calibration=calibration_lines(report.calibration) if report.calibration else None,
        details=_details(report.judge_details),
        packed=packed,
        payload=Markup(packed.data),  # base64: nothing in it to escape
        primary=next(iter(report.metric_summary), None),
        statuses=[s.value for s in SampleStatus if s in tally.statuses],
        outcomes={o: style for o, style in OUTCOMES.items() if o in tally.outcomes},
        latency_source=view.latency_source(report),
        categories=sorted(tally.categories),
        verdicts=VERDICTS,
        js=_SCRIPT,
        css=STYLE,
        links=links,
        page_size=PAGE_SIZE,
        opened=OPENED_SAMPLES,
        **_conversation_values(report, wants, conversations or {}, texts, thread_link),
    )


def _conversation_values(
    report: Report,
    wants: ThreadWants,
    conversations: Mapping[str, Conversation],
    texts: Mapping[str, Sample],
    thread_link: str | None,
) -> dict[str, Any]:
    """The Conversations section of a run over conversation turns: the worst conversations
    as threads, every message in order (from `conversations`, the dataset's conversations by
    id; without them, what the turn samples hold) and each assistant turn's claims and
    verdicts; the table of the worst `TABLE_LIMIT`, each linked to its thread on the page or,
    where a page of each conversation exists (`vera view`), to it: `thread_link` is its URL
    less the conversation's id."""
    block = report.conversations
    if block is None:
        return {"threads": [], "conversation_rows": [], "thread_links": {}}
    threads = report_threads(block, wants, conversations, texts)
    return {
        "threads": threads,
        "conversation_rows": worst_conversations(block, TABLE_LIMIT),
        "thread_links": _thread_links(report, {t.id for t in threads}, thread_link),
    }


def _thread_links(report: Report, threaded: set[str], link: str | None) -> dict[str, str]:
    """Where the conversation table links each conversation: its thread on the page, or its
    own page (`link`) where the page shows no thread of it."""
    block = report.conversations
    if block is None:
        return {}
    out = {}
    for c in block.conversations:
        if c.id in threaded:
            out[c.id] = "#thread-" + c.id
        elif link is not None:
            out[c.id] = link + quote(c.id, safe="")
    return out


def read_samples(page: str) -> dict[str, Any]:
    """The sample data embedded in an HTML report `render_html` wrote, as the page's script
    reads it (the layout is in `vera.render._samples`); ValueError for a page without it."""
    found = _DATA.search(page)
    if found is None:
        raise ValueError("no VERA sample data in this page")
    return unpack(found.group(1))
