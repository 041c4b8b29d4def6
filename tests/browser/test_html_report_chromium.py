"""The HTML report as a person sees it: opened from disk in headless Chromium.

Chromium is driven with Playwright's Python package against the system's `chromium` (Debian
package); Playwright's own browser download is never used. It talks to the browser over a pipe,
so no port is opened, and the page is a `file://` URL, so nothing leaves the machine. Without
Chromium (or Playwright) these tests skip, except under CI (`CI` set), where they fail.

Screenshots land in `test-artifacts/` at the repository root (git-ignored).

The samples are a compressed JSON document that the page's script unpacks and shows 50 to a
page; `#sample-list[data-state=ready]` says the first page is in. A 5,000-sample report, made
by `benchmarks/html_scale.py`'s generator, checks the size and that paging, search and links
reach a sample on a late page.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.support.chromium import ARTIFACTS, ROOT, Log, colour_name, skip_or_fail
from tests.support.chromium import launch as _launch
from tests.support.chromium import open_page as _open
from tests.support.example_metrics import EXAMPLE_METRICS

import vera
from vera import Report, Sample, Verdict
from vera.judges import OfflineJudge
from vera.render import render_html
from vera.render._html import read_samples
from vera.render._samples import VERDICTS
from vera.render._view import HistoryPoint

WHITEBOX = "the console's tables, panels and progress"

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

SCRIPT = '<script>document.title = window.__pwned = "pwned"</script>'
IMG = '"><img src=x onerror="window.__pwned = 2">'
TITLE = "VERA report · example"


@pytest.fixture(scope="module")
def playwright(rendered: Rendered) -> Iterator[Playwright]:
    """Playwright's driver. It runs an event loop in this thread while it lives, and
    `vera.evaluate` refuses to run inside one, so the report is rendered first."""
    skip_or_fail()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


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
    learned: Path
    """Three samples judged by `offline:learned`, one claim's span dropped."""
    capped: Path
    """The example with the detail of its 5 worst samples only."""

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
    metrics = [vera.metrics.create_metric(name) for name in EXAMPLE_METRICS]
    report = vera.evaluate(data, metrics, dataset_name="example")
    samples = {s.id: s for s in data}
    history = [
        HistoryPoint(f"run-{i}", f"2026-01-0{i + 1}T09:00:00Z", {"faithfulness": 0.6 + 0.05 * i})
        for i in range(3)
    ]
    folder = tmp_path_factory.mktemp("html")
    path = folder / "report.html"
    path.write_text(render_html(report, samples=samples, history=history), encoding="utf-8")
    learned = vera.evaluate(data[:3], metrics, OfflineJudge(learned=True))
    first, *rest = learned.samples
    unplaced = first.model_copy(
        update={"claims": (first.claims[0].model_copy(update={"span": None}), *first.claims[1:])}
    )
    learned = learned.model_copy(update={"samples": (unplaced, *rest)})
    (folder / "learned.html").write_text(render_html(learned, samples=samples), encoding="utf-8")
    capped = render_html(report, samples=samples, detail_limit=5)
    (folder / "capped.html").write_text(capped, encoding="utf-8")
    return Rendered(path, report, samples, hostile, folder / "learned.html", folder / "capped.html")


@pytest.fixture
def page(browser: BrowserContext, rendered: Rendered) -> Iterator[tuple[Page, Log]]:
    tab, log = _open(browser, rendered.url)
    yield tab, log
    tab.close()


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
        assert colour_name(edge) == ("green" if meets else "red"), name
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
        assert colour_name(background) == EXPECTED_COLOURS[verdict], (verdict, background)
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
    assert claim.context_index is not None
    context = rendered.samples[result.id].contexts[claim.context_index]
    assert claim.evidence in context.text  # so it is shown once: highlighted in its context
    assert card.locator("blockquote.context").inner_text() == context.text
    assert card.locator("mark.evidence").inner_text() == claim.evidence
    terms = card.locator("dt").all_inner_texts()
    assert "Evidence" not in terms  # not again on its own
    assert "Quote found" not in terms  # the offline judge does not check quotes
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
    assert tab.locator("#shown").inner_text() == f"{total} of {total} samples match"
    assert samples.count() == total  # one page holds them all
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
    assert tab.locator("#shown").inner_text() == f"{len(expected)} of {total} samples match"
    tab.select_option("select[name=verdict]", "")
    tab.select_option("select[name=category]", rendered.hostile.category)
    assert tab.locator("#shown").inner_text() == f"1 of {total} samples match"
    assert samples.count() == 1
    assert log.problems(rendered.url) == []


def test_search_finds_a_sample_by_the_words_of_its_claims(
    page: tuple[Page, Log], rendered: Rendered
) -> None:
    tab, log = page
    total = len(rendered.report.samples)
    result = next(r for r in rendered.report.samples if r.claims and r.category == "reasoning")
    words = result.claims[-1].text.split()[:6]
    tab.fill("input[name=q]", " ".join(words).upper())  # case does not matter
    expected = [
        r.id
        for r in rendered.report.samples
        if any(" ".join(words).lower() in c.text.lower() for c in r.claims)
    ]
    tab.wait_for_function(
        "n => document.getElementById('shown').textContent.startsWith(n + ' of')", arg=len(expected)
    )
    found = tab.locator("article.sample").evaluate_all("a => a.map(e => e.dataset.sampleId)")
    assert result.id in found and sorted(found) == sorted(expected)
    tab.fill("input[name=q]", "no sample says this")
    tab.wait_for_function("() => document.getElementById('shown').textContent.startsWith('0 of')")
    assert tab.locator("article.sample").count() == 0
    assert tab.locator("#shown").inner_text() == f"0 of {total} samples match"
    assert log.problems(rendered.url) == []


def test_without_javascript_the_summary_reads_and_a_note_says_the_samples_need_it(
    playwright: Playwright, rendered: Rendered, tmp_path: Path
) -> None:
    context = _launch(playwright, tmp_path / "profile", javascript=False)
    try:
        tab = context.new_page()
        tab.goto(rendered.url)
        assert tab.locator("article.card").count() == len(rendered.report.metric_summary)
        assert all(tab.locator(f"#{s}").is_visible() for s in ("summary", "distributions"))
        note = tab.locator("#needs-script")
        assert note.is_visible() and "JavaScript" in note.inner_text()
        assert "JSON report" in note.inner_text()
        assert tab.locator("#filters").is_hidden() and tab.locator("nav.pager").first.is_hidden()
        assert tab.locator("article.sample").count() == 0
    finally:
        context.close()


def test_the_worst_samples_come_first_and_open(page: tuple[Page, Log], rendered: Rendered) -> None:
    tab, log = page
    ids = tab.locator("article.sample").evaluate_all("a => a.map(e => e.dataset.sampleId)")
    samples = [rendered.report.sample(i) for i in ids]
    # Samples that fail any metric come first, then the rest; each group by faithfulness.
    failing = [any(r.passed is False for r in s.results.values()) for s in samples]
    assert failing == sorted(failing, reverse=True)
    for group in (True, False):
        scores = [
            s.scores["faithfulness"] for s, f in zip(samples, failing, strict=True) if f is group
        ]
        assert scores == sorted(scores)  # type: ignore[type-var]
    opened = tab.locator("article.sample > details").evaluate_all("d => d.map(e => e.open)")
    assert opened[:3] == [True] * 3 and not any(opened[3:])
    assert log.problems(rendered.url) == []


def test_the_probability_of_support_and_unplaced_claims_show(
    browser: BrowserContext, rendered: Rendered
) -> None:
    tab, log = _open(browser, rendered.learned.as_uri())
    try:
        data = read_samples(rendered.learned.read_text(encoding="utf-8"))
        cards = tab.locator("details.claim-card")
        assert cards.count() == sum(len(d["c"]) for d in data["details"])
        for i in range(cards.count()):
            cards.nth(i).locator("summary").click()
            assert re.search(r"P\(supported\)\s*\d\.\d\d ", cards.nth(i).inner_text())
        notes = tab.locator("article.sample p", has_text="could not be placed")
        assert notes.count() == 1 and "1 claim(s)" in notes.inner_text()
        assert tab.locator("details.claim-card.claim").count() == 1  # listed, not highlighted
        assert log.problems(rendered.learned.as_uri()) == []
    finally:
        tab.close()


def test_past_the_detail_limit_the_page_says_where_the_rest_is(
    browser: BrowserContext, rendered: Rendered
) -> None:
    tab, log = _open(browser, rendered.capped.as_uri())
    try:
        total = len(rendered.report.samples)
        notice = tab.locator("#sample-cap")
        assert notice.is_visible()
        assert f"of the 5 lowest-scoring samples of {total}" in notice.inner_text()
        assert tab.locator("article.sample").count() == total  # every sample is listed
        listed_only = tab.locator("article.sample:has(.missing-detail)")
        assert listed_only.count() == total - 5
        last = tab.locator("article.sample").last
        last.locator("> details > summary").click()
        assert "JSON report" in last.locator(".missing-detail").inner_text()
        assert tab.locator("article.sample").first.locator(".claim-card").count() > 0
        assert log.problems(rendered.capped.as_uri()) == []
    finally:
        tab.close()


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


# At scale: 5,000 samples, as the benchmark makes them.
DASH = "\N{EN DASH}"
LARGE = 5_000
LATE = 4_321
"""A place worst first on a late page (page 87 of 100)."""


def _benchmark() -> Any:
    """`benchmarks/html_scale.py`, whose synthetic samples the scale test shares."""
    spec = importlib.util.spec_from_file_location("html_scale", ROOT / "benchmarks/html_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("html_scale", module)
    spec.loader.exec_module(module)
    return module


@dataclass
class Large:
    path: Path
    data: dict[str, Any]

    def ids(self) -> list[str]:
        return [self.data["rows"][row][0] for row in self.data["order"]]

    def text(self, row: int) -> str:
        """What the page's search reads of a sample: its id, category, query, response, error,
        and its claims' texts and reasons."""
        values = self.data["rows"][row]
        detail = self.details.get(row, {"c": []})
        parts = [values[0], values[2] or "", detail.get("q", ""), detail.get("t") or ""]
        parts.append(detail.get("err", ""))
        for claim in detail["c"]:
            start, end = claim.get("s", (0, 0))
            parts += [claim.get("t", (detail.get("t") or "")[start:end]), claim.get("r", "")]
        return "\n".join(parts)

    @property
    def details(self) -> dict[int, dict[str, Any]]:
        return {d["row"]: d for d in self.data["details"]}


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Large:
    bench = _benchmark()
    samples = bench.Samples(bench.Corpus(seed=0, passages=LARGE), LARGE)
    report = bench.build(samples).model_copy(update={"samples": ()})
    path = tmp_path_factory.mktemp("large") / "report.html"
    page = render_html(report, samples=samples, results=samples.results())
    path.write_text(page, encoding="utf-8")
    return Large(path, read_samples(page))


def samples_shown(tab: Page) -> list[str]:
    ids = tab.locator("article.sample").evaluate_all("a => a.map(e => e.dataset.sampleId)")
    return list(ids)


def _page_info(tab: Page) -> str:
    return tab.locator("#pager-top .page-info").inner_text()


def test_a_report_of_5000_samples_is_small_and_pages_reach_every_sample(
    browser: BrowserContext, large: Large
) -> None:
    assert large.path.stat().st_size < 10_000_000
    assert (large.data["total"], large.data["detailed"]) == (LARGE, LARGE)
    tab, log = _open(browser, large.path.as_uri())
    try:
        samples = tab.locator("article.sample")
        assert tab.locator("#shown").inner_text() == f"{LARGE:,} of {LARGE:,} samples match"
        assert _page_info(tab) == f"1{DASH}50 of {LARGE:,} · page 1 of 100"
        assert samples.count() == 50 and samples.first.get_attribute("id") == "s0"
        tab.click("#pager-top button[data-page=next]")
        assert _page_info(tab) == f"51{DASH}100 of {LARGE:,} · page 2 of 100"
        assert samples.first.get_attribute("data-sample-id") == large.ids()[50]
        tab.click("#pager-bottom button[data-page=last]")
        assert _page_info(tab) == f"4,951{DASH}5,000 of {LARGE:,} · page 100 of 100"
        ids = samples.evaluate_all("a => a.map(e => e.dataset.sampleId)")
        assert ids == large.ids()[4950:]
        assert tab.locator("#pager-top button[data-page=next]").is_disabled()
        assert log.problems(large.path.as_uri()) == []
    finally:
        tab.close()


def test_search_and_a_link_reach_a_sample_on_a_late_page_with_its_detail(
    browser: BrowserContext, large: Large
) -> None:
    target = large.ids()[LATE]
    row = large.data["order"][LATE]
    detail = next(d for d in large.data["details"] if d["row"] == row)
    tab, log = _open(browser, large.path.as_uri())
    try:
        assert tab.locator(f'article.sample[data-sample-id="{target}"]').count() == 0
        tab.fill("input[name=q]", target)
        article = tab.locator(f'article.sample[data-sample-id="{target}"]')
        article.wait_for()
        assert tab.locator("#shown").inner_text() == f"1 of {LARGE:,} samples match"
        article.locator("> details > summary").click()
        assert article.locator("details.claim-card").count() == len(detail["c"])
        assert article.locator("p.response").inner_text().startswith(detail["t"][:40])

        # Words from the response find it too, among every sample, not just the first page.
        words = " ".join(detail["t"].split()[1:7])
        expected = [large.data["rows"][r][0] for r in large.data["order"] if words in large.text(r)]
        assert target in expected and len(expected) <= 50
        tab.fill("input[name=q]", words)
        tab.wait_for_function(
            "n => document.getElementById('shown').textContent.startsWith(n + ' of')",
            arg=len(expected),
        )
        assert samples_shown(tab) == expected

        assert log.problems(large.path.as_uri()) == []
    finally:
        tab.close()


def test_a_link_to_a_late_sample_or_claim_turns_to_its_page_whatever_the_filters(
    browser: BrowserContext, large: Large
) -> None:
    target = large.ids()[LATE]
    url = large.path.as_uri() + f"#s{LATE}"
    tab, log = _open(browser, url)
    try:
        linked = tab.locator(f"#s{LATE}")
        assert _page_info(tab) == f"4,301{DASH}4,350 of {LARGE:,} · page 87 of 100"
        assert linked.get_attribute("data-sample-id") == target
        assert linked.locator("> details").get_attribute("open") is not None

        # A filter that hides the sample gives way to a link to one of its claims.
        category = large.data["rows"][large.data["order"][LATE]][2]
        other = next(r[2] for r in large.data["rows"] if r[2] != category)
        tab.select_option("select[name=category]", other)
        assert linked.count() == 0
        tab.evaluate(f"window.location.hash = '#s{LATE}-c1'")
        card = tab.locator(f"#s{LATE}-c1")
        card.wait_for()
        assert card.get_attribute("open") is not None and card.is_visible()
        assert tab.locator("select[name=category]").input_value() == ""
        assert _page_info(tab) == f"4,301{DASH}4,350 of {LARGE:,} · page 87 of 100"
        assert log.problems(large.path.as_uri()) == []
    finally:
        tab.close()
