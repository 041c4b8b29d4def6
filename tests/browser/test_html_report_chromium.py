"""The HTML report as a person sees it: opened from disk in headless Chromium.

Chromium is driven with Playwright's Python package against the system's `chromium` (Debian
package); Playwright's own browser download is never used. It talks to the browser over a pipe,
so no port is opened, and the page is a `file://` URL, so nothing leaves the machine. Without
Chromium (or Playwright) these tests skip, except under CI (`CI` set), where they fail.

Screenshots land in `test-artifacts/` at the repository root (git-ignored).
"""

from __future__ import annotations

import colorsys
import importlib.util
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import vera
from vera.report import Report
from vera.reports import HistoryPoint, render_html
from vera.reports.samples import VERDICTS
from vera.types import Sample, Verdict

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCRIPT = '<script>document.title = window.__pwned = "pwned"</script>'
IMG = '"><img src=x onerror="window.__pwned = 2">'
TITLE = "VERA report · example"


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def playwright(rendered: Rendered) -> Iterator[Playwright]:
    """Playwright's driver. It runs an event loop in this thread while it lives, and
    `vera.evaluate` refuses to run inside one, so the report is rendered first."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI is set, so the browser tests must run")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


def _launch(playwright: Playwright, profile: Path, *, javascript: bool = True) -> BrowserContext:
    """Chromium with a fresh profile folder (`--user-data-dir`) and the offline flags."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=FLAGS,
        java_script_enabled=javascript,
        viewport={"width": 1280, "height": 900},
    )


@pytest.fixture(scope="module")
def browser(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    context = _launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
    yield context
    context.close()


@dataclass
class Rendered:
    path: Path
    report: Report
    samples: dict[str, Sample]
    hostile: Sample

    @property
    def url(self) -> str:
        return self.path.as_uri()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """The bundled example with every metric, plus one sample made of hostile text."""
    hostile = Sample(
        id="q-" + IMG,
        query="How long is the refund window? " + SCRIPT,
        response=f"The refund window is 30 days {SCRIPT}. Refunds are paid by {IMG} transfer.",
        contexts=[f"The refund window is 30 days {SCRIPT}. Refunds are paid by {IMG} transfer."],
        category="billing " + SCRIPT,
    )
    data = [*vera.load_dataset("example"), hostile]
    metrics = [vera.metrics.create_metric(name) for name in vera.metrics.METRICS]
    report = vera.evaluate(data, metrics, dataset_name="example")
    samples = {s.id: s for s in data}
    history = [
        HistoryPoint(f"run-{i}", f"2026-01-0{i + 1}T09:00:00Z", {"faithfulness": 0.6 + 0.05 * i})
        for i in range(3)
    ]
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(report, samples=samples, history=history), encoding="utf-8")
    return Rendered(path, report, samples, hostile)


@dataclass
class Log:
    """What the page said and asked for while a test used it."""

    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self, own_url: str) -> list[str]:
        foreign = [url for url in self.requests if url != own_url]
        return self.console + self.errors + [f"request to {url}" for url in foreign]


@pytest.fixture
def page(browser: BrowserContext, rendered: Rendered) -> Iterator[tuple[Page, Log]]:
    page = browser.new_page()
    page.set_default_timeout(10_000)
    log = Log()
    page.on(
        "console",
        lambda m: (
            log.console.append(f"{m.type}: {m.text}") if m.type in {"error", "warning"} else None
        ),
    )
    page.on("pageerror", lambda e: log.errors.append(str(e)))
    page.on("request", lambda r: log.requests.append(r.url))
    page.goto(rendered.url)
    page.wait_for_load_state("load")
    yield page, log
    page.close()


def _rgb(css: str) -> tuple[float, float, float]:
    found = re.match(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert found, css
    return tuple(int(v) / 255 for v in found.groups())  # type: ignore[return-value]


def _colour_name(css: str) -> str:
    """The colour a person would name: green, amber, red or grey."""
    hue, _lightness, saturation = colorsys.rgb_to_hls(*_rgb(css))
    degrees = hue * 360
    if saturation < 0.15:
        return "grey"
    if degrees < 20 or degrees > 340:
        return "red"
    if degrees < 60:
        return "amber"
    if 80 < degrees < 160:
        return "green"
    return f"other ({degrees:.0f} degrees)"


EXPECTED_COLOURS = {
    Verdict.FULLY_SUPPORTED: "green",
    Verdict.PARTIALLY_SUPPORTED: "amber",
    Verdict.NO_EVIDENCE: "grey",
    Verdict.CONTRADICTED: "red",
}


def _open_sample(page: Page, index: int) -> Any:
    article = page.locator("article.sample").nth(index)
    if article.locator("> details").get_attribute("open") is None:
        article.locator("> details > summary").click()
    return article


def _index_of(page: Page, sample_id: str) -> int:
    index = page.evaluate(
        "id => [...document.querySelectorAll('article.sample')]"
        ".findIndex(a => a.dataset.sampleId === id)",
        sample_id,
    )
    assert isinstance(index, int) and index >= 0
    return index


def test_the_page_loads_offline_without_errors(page: tuple[Page, Log], rendered: Rendered) -> None:
    tab, log = page
    assert tab.title() == TITLE
    assert tab.locator("h1").inner_text() == TITLE
    assert tab.locator("#counts").is_visible()
    for section in ("summary", "distributions", "breakdowns", "trend", "latency", "samples"):
        assert tab.locator(f"#{section}").is_visible(), section
    assert tab.locator("svg").count() > 30  # the charts drew
    assert log.problems(rendered.url) == []
    assert log.requests == [rendered.url]  # the file itself, and nothing else


def test_summary_cards_show_each_metric_with_its_numbers(
    page: tuple[Page, Log], rendered: Rendered
) -> None:
    tab, log = page
    for name, summary in rendered.report.metric_summary.items():
        card = tab.locator(f'article.card[data-metric="{name}"]')
        assert card.is_visible()
        assert summary.mean is not None
        assert card.locator("[data-role=mean]").inner_text() == f"{summary.mean:.3f}"
        interval = card.locator("[data-role=ci]").inner_text()
        assert f"{summary.ci_low:.3f} \N{EN DASH} {summary.ci_high:.3f}" in interval
        meets = (
            summary.mean >= summary.threshold
            if summary.higher_is_better
            else summary.mean <= summary.threshold
        )
        gate = card.locator("[data-role=gate]").inner_text()
        assert gate.startswith("✓ meets" if meets else "✗ misses")
        edge = card.evaluate("e => getComputedStyle(e).borderTopColor")
        assert _colour_name(edge) == ("green" if meets else "red"), name
    assert log.problems(rendered.url) == []


def test_claims_are_highlighted_in_their_verdict_colours_with_labels(
    page: tuple[Page, Log], rendered: Rendered
) -> None:
    tab, log = page
    for verdict, style in VERDICTS.items():
        legend = tab.locator(f".legend .verdict.{style.css}")
        assert legend.is_visible() and style.label in legend.inner_text()
        marks = tab.locator(f"mark.claim.{style.css}")
        assert marks.count() > 0, verdict
        mark = marks.first
        index = tab.evaluate(
            "m => [...document.querySelectorAll('article.sample')]"
            ".indexOf(m.closest('article.sample'))",
            mark.element_handle(),
        )
        _open_sample(tab, index)
        assert mark.is_visible()
        background = mark.evaluate("e => getComputedStyle(e).backgroundColor")
        assert _colour_name(background) == EXPECTED_COLOURS[verdict], (verdict, background)
        assert style.label in mark.get_attribute("title")  # type: ignore[operator]
        assert mark.locator("sup").inner_text().startswith(style.symbol)
        assert style.label in mark.locator(".sr").text_content()  # type: ignore[operator]
    total = sum(len(r.claims) for r in rendered.report.samples)
    assert tab.locator("mark.claim").count() == total
    assert log.problems(rendered.url) == []


def test_clicking_a_claim_shows_its_reason_evidence_and_cited_context(
    page: tuple[Page, Log], rendered: Rendered
) -> None:
    tab, log = page
    result = next(
        r
        for r in rendered.report.samples
        if any(c.verdict is Verdict.CONTRADICTED for c in r.claims)
    )
    claim = next(c for c in result.claims if c.verdict is Verdict.CONTRADICTED)
    article = _open_sample(tab, _index_of(tab, result.id))
    card = article.locator(f'details.claim-card[data-claim="{claim.id}"]')
    assert card.get_attribute("open") is None
    assert not card.locator("dl").is_visible()
    article.locator(f'mark.claim[data-claim="{claim.id}"] a').click()
    assert card.get_attribute("open") is not None
    details = card.locator("dl")
    assert details.is_visible()
    text = details.inner_text()
    assert "Contradicted" in text and claim.reason in text
    assert claim.evidence in text
    assert "Quote found" in text
    assert claim.context_index is not None
    context = rendered.samples[result.id].contexts[claim.context_index]
    assert card.locator("blockquote.context").inner_text() == context.text
    assert card.locator("mark.evidence").is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "html-report-claim.png"
    article.locator("> details > summary").evaluate("e => e.scrollIntoView()")
    tab.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    assert log.problems(rendered.url) == []


def test_the_hostile_sample_shows_as_text_and_runs_nothing(
    page: tuple[Page, Log], rendered: Rendered
) -> None:
    tab, log = page
    hostile = rendered.hostile
    article = _open_sample(tab, _index_of(tab, hostile.id))
    assert tab.evaluate("typeof window.__pwned") == "undefined"
    assert tab.title() == TITLE
    assert tab.locator("img").count() == 0
    assert article.locator(".sid").inner_text() == hostile.id
    response = article.locator("p.response").inner_text()
    assert SCRIPT in response and IMG in response
    assert SCRIPT in article.locator("p.query").inner_text()
    assert article.locator("mark.claim").count() == len(rendered.report.sample(hostile.id).claims)
    assert log.problems(rendered.url) == []


def test_the_filter_narrows_the_samples(page: tuple[Page, Log], rendered: Rendered) -> None:
    tab, log = page
    samples = tab.locator("article.sample")
    total = len(rendered.report.samples)
    assert tab.locator("#filters").is_visible()
    assert tab.locator("#shown").inner_text() == f"{total} of {total} samples shown"
    tab.select_option("select[name=verdict]", "CONTRADICTED")
    expected = [
        r.id
        for r in rendered.report.samples
        if any(c.verdict is Verdict.CONTRADICTED for c in r.claims)
    ]
    visible = [
        samples.nth(i).get_attribute("data-sample-id")
        for i in range(samples.count())
        if samples.nth(i).is_visible()
    ]
    assert sorted(visible) == sorted(expected)  # type: ignore[type-var]
    assert tab.locator("#shown").inner_text() == f"{len(expected)} of {total} samples shown"
    tab.select_option("select[name=verdict]", "")
    tab.select_option("select[name=category]", rendered.hostile.category)
    assert tab.locator("#shown").inner_text() == f"1 of {total} samples shown"
    assert log.problems(rendered.url) == []


def test_the_page_reads_the_same_without_javascript(
    playwright: Playwright, rendered: Rendered, tmp_path: Path
) -> None:
    context = _launch(playwright, tmp_path / "profile", javascript=False)
    try:
        tab = context.new_page()
        tab.goto(rendered.url)
        assert tab.locator("#filters").is_hidden()  # the filter needs a script; nothing else
        samples = tab.locator("article.sample")
        assert samples.count() == len(rendered.report.samples)
        assert all(samples.nth(i).is_visible() for i in range(samples.count()))
        card = samples.first.locator("details.claim-card").first
        card.locator("summary").click()
        assert card.locator("dl").is_visible()
        assert tab.locator("article.card").count() == len(rendered.report.metric_summary)
    finally:
        context.close()


def test_screenshot_of_the_report(page: tuple[Page, Log], rendered: Rendered) -> None:
    tab, log = page
    ARTIFACTS.mkdir(exist_ok=True)
    top = ARTIFACTS / "html-report.png"
    tab.screenshot(path=str(top))
    samples = ARTIFACTS / "html-report-samples.png"
    tab.evaluate("document.getElementById('samples').scrollIntoView()")
    tab.screenshot(path=str(samples))
    for shot in (top, samples):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
        print(f"screenshot: {shot}")
    assert log.problems(rendered.url) == []
