"""What a first-time reader could misread in the HTML report (issue 19), checked as they see it
in headless Chromium: one badge per sample from its answer verdict and every gated metric,
never a plain pass for a sample with an unsupported or contradicted claim; baselines called
better or worse only when the paired interval excludes 0; latency that says who measured it;
each piece of evidence shown once; a page that fits a phone's width; and a link to a sample by
its id.

Expected figures come from the report and from `vera._results`,
never from the page. Screenshots land in `test-artifacts/` (git-ignored).
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from tests.support.chromium import (
    ARTIFACTS,
    ROOT,
    Log,
    colour_name,
    launch,
    open_page,
    skip_or_fail,
)
from tests.support.example_metrics import EXAMPLE_METRICS

import vera
from vera import Report, Sample, SampleResult, build_baseline
from vera._results import Outcome, baseline_comparison, relative_change, sample_outcome, significant
from vera.judges import OfflineJudge
from vera.render import render_html
from vera.render._html import read_samples
from vera.render._view import HistoryPoint

WHITEBOX = "the report builder, on hand-made results"

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page, Playwright

ODD_ID = 'refund/#7 \N{EN DASH} 50% "off" & more?'
"""A sample id that only survives a link URL-encoded."""
INVENTED = " Every party must also hold a $9 million cyber insurance policy with Lloyd's."
"""What the baseline adds to every answer: a sentence no context supports."""
GATED = ("faithfulness", "answer_relevance", "context_relevance")
"""Metrics that a sample with a contradicted claim can pass (hallucination_rate, with its
threshold of 0, would fail it): faithfulness, the seeds' share of supported claims, scores one
contradicted claim of two 0.5, which clears its threshold of 0.5; the sample fails all the
same, on its answer verdict."""
PAGED = 150
"""Synthetic samples: three pages of 50."""


@dataclass
class Rendered:
    path: Path
    report: Report
    samples: dict[str, Sample]

    @property
    def url(self) -> str:
        return self.path.as_uri()


@dataclass
class Pages:
    full: Rendered
    """The example with every metric, compared with a baseline, plus a sample with an odd id."""
    gated: Rendered
    """The example on three metrics: samples pass, fail, and fail on their answer verdict
    alone while every metric passes."""
    piped: Rendered
    """A pipeline's run, whose latency VERA measured."""
    evidence: Rendered
    """One sample whose claims' evidence is, and is not, a slice of the cited context."""
    paged: Path
    paged_ids: list[str]
    """The paged report's sample ids, worst first."""


def _write(folder: Path, name: str, report: Report, samples: dict[str, Sample]) -> Rendered:
    path = folder / f"{name}.html"
    path.write_text(render_html(report, samples=samples), encoding="utf-8")
    return Rendered(path, report, samples)


def _full(folder: Path) -> Rendered:
    odd = Sample(
        id=ODD_ID,
        query="How much is the refund?",
        response="The refund is 50% of the price.",
        contexts=["Refunds are 50% of the price paid."],
        category="billing",
    )
    data = [*vera.load_dataset("example"), odd]
    metrics = [vera.metrics.create_metric(name) for name in EXAMPLE_METRICS]
    system = vera.evaluate(data, metrics, dataset_name="example")
    worse = [
        s.model_copy(update={"response": s.response + INVENTED}) if s.response else s for s in data
    ]
    naive = vera.evaluate(worse, metrics, dataset_name="example")
    block = baseline_comparison(system, {"naive_rag": naive})
    report = system.model_copy(update={"baseline_comparison": block})
    history = [
        HistoryPoint(f"run-{i}", f"2026-01-0{i + 1}T09:00:00Z", {"faithfulness": 0.6 + 0.05 * i})
        for i in range(3)
    ]
    samples = {s.id: s for s in data}
    path = folder / "full.html"
    path.write_text(render_html(report, samples=samples, history=history), encoding="utf-8")
    return Rendered(path, report, samples)


def _piped(folder: Path) -> Rendered:
    data = vera.load_dataset("legal")
    rows = list(itertools.islice(data, 4))
    judge = OfflineJudge()
    pipeline = build_baseline("vera", data.documents, judge)
    metrics = [vera.metrics.create_metric("faithfulness")]
    report = vera.evaluate(rows, metrics, judge, pipeline=pipeline, dataset_name="legal")
    return _write(folder, "piped", report, {s.id: s for s in rows})


def _evidence(gated: Rendered, folder: Path) -> Rendered:
    """A sample whose first claim quotes words its context does not hold, whose second claim's
    quote the judge checked and found, and whose third cites no context."""
    result = next(
        r
        for r in gated.report.samples
        if len(r.claims) >= 3 and all(c.context_index is not None for c in r.claims[:3])
    )
    first, second, third, *rest = result.claims
    claims = (
        first.model_copy(update={"evidence": "words no context holds", "quote_found": False}),
        second.model_copy(update={"quote_found": True}),
        third.model_copy(update={"context_index": None}),
        *rest,
    )
    changed = result.model_copy(update={"claims": claims})
    report = gated.report.model_copy(update={"samples": (changed,)})
    return _write(folder, "evidence", report, gated.samples)


def _benchmark() -> Any:
    """`benchmarks/html_scale.py`, whose synthetic samples make the paged report."""
    spec = importlib.util.spec_from_file_location("html_scale", ROOT / "benchmarks/html_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Pages:
    folder = tmp_path_factory.mktemp("trust")
    data = list(vera.load_dataset("example"))
    metrics = [vera.metrics.create_metric(name) for name in GATED]
    gated = _write(folder, "gated", vera.evaluate(data, metrics), {s.id: s for s in data})
    bench = _benchmark()
    synthetic = bench.Samples(bench.Corpus(seed=1, passages=PAGED), PAGED)
    paged = render_html(bench.build(synthetic), samples=synthetic)
    (folder / "paged.html").write_text(paged, encoding="utf-8")
    order = read_samples(paged)
    ids = [order["rows"][row][0] for row in order["order"]]
    return Pages(
        _full(folder), gated, _piped(folder), _evidence(gated, folder), folder / "paged.html", ids
    )


@pytest.fixture(scope="module")
def playwright(pages: Pages) -> Iterator[Playwright]:
    """Playwright's driver, started after the reports are rendered: its event loop in this
    thread would stop `vera.evaluate`."""
    skip_or_fail()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
    yield context
    context.close()


@pytest.fixture
def tabs(browser: BrowserContext) -> Iterator[list[Page]]:
    """Tabs a test opens, closed after it."""
    opened: list[Page] = []
    yield opened
    for tab in opened:
        tab.close()


def _open(browser: BrowserContext, tabs: list[Page], url: str) -> tuple[Page, Log]:
    tab, log = open_page(browser, url)
    tabs.append(tab)
    return tab, log


def _shot(target: Page | Locator, name: str, **options: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    target.screenshot(path=str(path), **options)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {path}")


def _article(tab: Page, sample_id: str) -> Locator:
    """The sample's article, by its id as a CSS string (quotes and backslashes escaped)."""
    escaped = sample_id.replace("\\", "\\\\").replace('"', '\\"')
    return tab.locator(f'article.sample[data-sample-id="{escaped}"]')


def _open_sample(article: Locator) -> Locator:
    if article.locator("> details").get_attribute("open") is None:
        article.locator("> details > summary").click()
    return article


def _shown_ids(tab: Page) -> list[str]:
    return list(tab.locator("article.sample").evaluate_all("a => a.map(e => e.dataset.sampleId)"))


def _expected_badge(result: SampleResult) -> tuple[str, str]:
    """The badge's text and the colour a person would call it, from `sample_outcome`."""
    outcome = sample_outcome(result)
    if outcome.outcome is Outcome.FAIL:
        unfaithful = ["unfaithful answer"] if result.verdict and not result.verdict.passed else []
        failed = [f"{m} {result.results[m].score:.3f}" for m in outcome.failed]
        return "fail: " + ", ".join(unfaithful + failed), "red"
    colours = {Outcome.PASS: "green", Outcome.PASS_WITH_UNSUPPORTED: "amber"}
    return outcome.label, colours.get(outcome.outcome, "grey")


# 1. One honest badge per sample.
@pytest.mark.parametrize("which", ["gated", "full"])
def test_each_sample_has_one_badge_from_every_gated_metric(
    browser: BrowserContext, tabs: list[Page], pages: Pages, which: str
) -> None:
    rendered: Rendered = getattr(pages, which)
    tab, log = _open(browser, tabs, rendered.url)
    outcomes = {r.id: sample_outcome(r) for r in rendered.report.samples}
    seen = {o.outcome for o in outcomes.values()}
    assert {Outcome.PASS, Outcome.FAIL} <= seen
    if which == "gated":  # an unfaithful answer fails though every metric passes
        assert any(o.outcome is Outcome.FAIL and not o.failed for o in outcomes.values())
    else:  # a sample failing five metrics or more names every one of them
        assert max(len(o.failed) for o in outcomes.values()) >= 5
    articles = tab.locator("article.sample")
    assert articles.count() == len(rendered.report.samples)
    for i in range(articles.count()):
        article = articles.nth(i)
        result = rendered.report.sample(article.get_attribute("data-sample-id") or "")
        outcome = outcomes[result.id]
        badges = article.locator("> details > summary .badge.outcome")
        assert badges.count() == 1, result.id
        text, colour = _expected_badge(result)
        assert badges.inner_text().split(" ", 1)[1] == text, result.id
        background = badges.evaluate("e => getComputedStyle(e).backgroundColor")
        assert colour_name(background) == colour, (result.id, background)
        assert badges.get_attribute("title") == outcome.why
        assert article.get_attribute("data-outcome") == outcome.outcome.value
    _shot(tab.locator("#samples"), f"html-report-outcomes-{which}.png")
    assert log.problems(rendered.url) == []


def test_an_unfaithful_answer_fails_and_its_passing_metrics_are_amber(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    rendered = pages.gated
    tab, log = _open(browser, tabs, rendered.url)
    total = len(rendered.report.samples)
    by_outcome = {
        outcome: [r.id for r in rendered.report.samples if sample_outcome(r).outcome is outcome]
        for outcome in (Outcome.PASS, Outcome.FAIL)
    }
    for outcome, ids in by_outcome.items():
        tab.select_option("select[name=outcome]", outcome.value)
        assert sorted(_shown_ids(tab)) == sorted(ids), outcome
        assert tab.locator("#shown").inner_text() == f"{len(ids)} of {total} samples match"

    tab.select_option("select[name=outcome]", Outcome.FAIL.value)
    # A sample whose every metric passes, failed by its answer verdict alone.
    result = next(
        rendered.report.sample(i) for i in by_outcome[Outcome.FAIL]
        if not sample_outcome(rendered.report.sample(i)).failed
    )  # fmt: skip
    outcome = sample_outcome(result)
    article = _open_sample(_article(tab, result.id))
    why = article.locator("p.outcome-why")
    assert why.is_visible() and outcome.why in why.inner_text()
    assert "unfaithful answer: " in why.inner_text()
    unsupported = sum(c.verdict.unsupported for c in result.claims)
    assert unsupported == outcome.unsupported > 0
    claims = f"{unsupported} unsupported or contradicted claim" + ("" if unsupported == 1 else "s")
    rows = article.locator("table.metrics tbody tr")
    assert rows.count() == len(result.results)
    for name, metric in result.results.items():
        assert metric.passed is True  # the sample passed every gated metric
        cell = article.locator(f'table.metrics tr[data-metric="{name}"] td').nth(2)
        assert cell.inner_text() == f"pass (threshold ≥ {metric.threshold:g}) · {claims}"
        badge = cell.locator(".badge")
        assert colour_name(badge.evaluate("e => getComputedStyle(e).backgroundColor")) == "amber"
    assert article.locator(".badge.pass").count() == 0  # no bare green pass anywhere in it
    article.evaluate("e => e.scrollIntoView()")
    _shot(tab, "html-report-unfaithful.png")
    assert log.problems(rendered.url) == []


# 2. Baselines: better or worse only when the interval excludes 0.
def test_baselines_are_better_or_worse_only_when_the_interval_excludes_0(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    rendered = pages.full
    tab, log = _open(browser, tabs, rendered.url)
    block = rendered.report.baseline_comparison
    assert block is not None
    compared = dict(block.significance["naive_rag"])
    verdicts = {significant(c) for c in compared.values()}
    assert verdicts == {True, False}  # both kinds of row are on the page
    assert any(relative_change(c.system_mean, c.baseline_mean) is None for c in compared.values())
    section = tab.locator("#baselines")
    heads = section.locator("table.baseline-table th").all_inner_texts()
    assert [h.replace("\n", " ") for h in heads] == [
        "Metric", "Compared with", "System mean", "Baseline mean", "Difference",
        "95% CI of the difference", "p", "Relative change",
    ]  # fmt: skip
    for metric, comparison in compared.items():
        row = section.locator(f'tr[data-metric="{metric}"][data-baseline="naive_rag"]')
        cells = row.locator("td")
        difference = cells.nth(4)
        colour = colour_name(difference.evaluate("e => getComputedStyle(e).color"))
        higher = rendered.report.metric_summary[metric].higher_is_better
        assert comparison.difference is not None
        if significant(comparison):
            better = (comparison.difference > 0) == higher
            assert difference.inner_text().endswith("better" if better else "worse"), metric
            assert colour == ("green" if better else "red"), metric
            assert row.locator(".badge.significant").count() == 1
        else:
            assert difference.inner_text().endswith("no significant change"), metric
            assert colour == "grey", metric
            assert row.locator(".badge.significant").count() == 0
        relative = relative_change(comparison.system_mean, comparison.baseline_mean)
        shown = cells.nth(7)
        assert shown.inner_text() == (relative or "—"), metric
        if relative is None:
            assert "within 0.05 of 0" in (shown.get_attribute("title") or "")
            assert metric in section.locator("#relative-notes").inner_text()
        note = section.locator(f'figure.panel[data-metric="{metric}"] figcaption').inner_text()
        assert ("no significant change" in note) is not significant(comparison), metric
    _shot(section, "html-report-baselines.png")
    assert log.problems(rendered.url) == []


# 3. Latency says where it comes from.
def _latency_source(tab: Page) -> str:
    """The latency section's heading and the sentence under it."""
    return (
        tab.locator("#latency-h").inner_text() + ". " + tab.locator("#latency-source").inner_text()
    )


def test_latency_says_whether_the_dataset_gave_it_or_vera_measured_it(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    given, log = _open(browser, tabs, pages.full.url)
    source = _latency_source(given)
    assert "from the dataset" in source and "latency_ms" in source
    assert "measured by VERA" not in source
    result = pages.full.report.samples[0]
    assert result.latency_ms is not None
    line = _open_sample(_article(given, result.id)).locator("p.latency").inner_text()
    assert line == f"Latency from the dataset's latency_ms field: {result.latency_ms:,.1f} ms"
    assert log.problems(pages.full.url) == []

    measured, log = _open(browser, tabs, pages.piped.url)
    report = pages.piped.report
    assert report.pipeline is not None
    source = _latency_source(measured)
    assert "measured by VERA" in source and report.pipeline in source
    assert "from the dataset" not in source
    result = report.samples[0]
    article = _open_sample(_article(measured, result.id))
    line = article.locator("p.latency").inner_text()
    assert line.startswith(f"Pipeline latency, measured by VERA: {result.latency_ms:,.1f} ms")
    for step in result.steps:
        assert f"{step.name} {step.latency_ms:,.1f} ms" in line
    _shot(measured.locator("#latency"), "html-report-latency.png")
    assert log.problems(pages.piped.url) == []


# 4. Evidence once.
def test_evidence_is_shown_once_and_quote_found_only_when_checked(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    rendered = pages.evidence
    tab, log = _open(browser, tabs, rendered.url)
    (result,) = rendered.report.samples
    contexts = rendered.samples[result.id].contexts
    article = _open_sample(_article(tab, result.id))
    for claim in result.claims:
        mark = article.locator(f'mark.claim[data-claim="{claim.id}"]')
        title = mark.get_attribute("title") or ""
        assert claim.reason in title
        if claim.evidence:
            assert claim.evidence not in title  # the tooltip keeps verdict and reason only
        card = article.locator(f'details.claim-card[data-claim="{claim.id}"]')
        card.locator("summary").click()
        terms = card.locator("dt").all_inner_texts()
        cited = claim.context_index
        inside = cited is not None and claim.evidence in contexts[cited].text
        if claim.evidence and inside:
            assert "Evidence" not in terms, claim.id
            assert card.locator("mark.evidence").inner_text() == claim.evidence
        elif claim.evidence:
            evidence = card.locator("dd blockquote.evidence")
            assert "Evidence" in terms and evidence.inner_text() == claim.evidence, claim.id
            assert card.locator("mark.evidence").count() == 0
        if claim.quote_found is None:
            assert "Quote found" not in terms, claim.id
        else:
            assert "Quote found" in terms, claim.id
            found = card.locator("dt:text-is('Quote found') + dd").inner_text()
            assert found.startswith("yes" if claim.quote_found else "no"), claim.id
    first, second, third = result.claims[:3]
    assert first.quote_found is False and second.quote_found is True
    assert (
        third.context_index is None
        and "Evidence"
        in article.locator(f'details.claim-card[data-claim="{third.id}"] dt').all_inner_texts()
    )
    _shot(article, "html-report-evidence.png")
    assert log.problems(rendered.url) == []


# 5. Every section fits the window.
WITHIN = """() => {
  const width = window.innerWidth;
  const out = [];
  const boxes = "figure.panel, article.card, .table-wrap, article.sample, section, header, nav";
  for (const node of document.querySelectorAll(boxes)) {
    const box = node.getBoundingClientRect();
    if (box.width && (box.left < -0.5 || box.right > width + 0.5)) {
      out.push(node.tagName + "." + node.className + " " + box.left + ".." + box.right);
    }
  }
  for (const svg of document.querySelectorAll("svg")) {
    const holder = svg.parentElement.getBoundingClientRect();
    if (svg.getBoundingClientRect().width > holder.width + 0.5) {
      out.push("svg in " + svg.parentElement.className);
    }
  }
  return out;
}"""
OPEN_ALL = """() => document.querySelectorAll("article.sample details, details.contexts")
  .forEach(d => { d.open = true; })"""


@pytest.mark.parametrize("width", [390, 1280, 1920])
def test_every_section_fits_the_window(
    browser: BrowserContext, tabs: list[Page], pages: Pages, width: int
) -> None:
    rendered = pages.full
    tab, log = _open(browser, tabs, rendered.url)
    tab.set_viewport_size({"width": width, "height": 900})
    assert tab.evaluate("window.innerWidth") == width
    for selector in ("figure.panel", "article.card", ".table-wrap", "#baselines", "#trend"):
        assert tab.locator(selector).count() > 0, selector
    assert tab.evaluate("document.documentElement.scrollWidth") <= width
    assert tab.evaluate(WITHIN) == []
    _shot(tab, f"html-report-{width}.png", full_page=True)

    tab.evaluate(OPEN_ALL)  # every sample's claims, metrics and contexts too
    assert tab.evaluate("document.documentElement.scrollWidth") <= width
    assert tab.evaluate(WITHIN) == []
    wide = tab.locator("#baselines .table-wrap")
    overflows = wide.evaluate("e => e.scrollWidth > e.clientWidth")
    assert overflows is (width == 390)  # a wide table scrolls inside its wrapper, not the page
    assert log.problems(rendered.url) == []


# 6. A link to a sample by its id.
def test_a_link_by_sample_id_turns_to_its_page_and_opens_it(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    late = pages.paged_ids[-7]  # on the last of three pages
    url = pages.paged.as_uri() + "#id=" + quote(late, safe="")
    tab, log = _open(browser, tabs, url)
    article = _article(tab, late)
    assert article.count() == 1
    assert "page 3 of 3" in tab.locator("#pager-top .page-info").inner_text()
    assert article.locator("> details").get_attribute("open") is not None
    assert article.is_visible() and tab.locator("#unknown-sample").is_hidden()
    assert log.problems(url) == []


def test_a_link_by_an_odd_id_clears_the_filters_that_hide_it(
    browser: BrowserContext, tabs: list[Page], pages: Pages
) -> None:
    rendered = pages.full
    tab, log = _open(browser, tabs, rendered.url)
    other = next(r.category for r in rendered.report.samples if r.category != "billing")
    assert other is not None
    tab.select_option("select[name=category]", other)
    assert _article(tab, ODD_ID).count() == 0
    tab.evaluate("h => { window.location.hash = h; }", "#id=" + quote(ODD_ID, safe=""))
    article = _article(tab, ODD_ID)
    article.wait_for()
    assert tab.locator("select[name=category]").input_value() == ""
    assert article.locator("> details").get_attribute("open") is not None
    assert article.locator(".sid").inner_text() == ODD_ID
    top = article.evaluate("e => e.getBoundingClientRect().top")
    assert -1 <= top < 900  # scrolled to
    _shot(tab, "html-report-link.png")

    tab.evaluate("h => { window.location.hash = h; }", "#id=" + quote("no such sample"))
    notice = tab.locator("#unknown-sample")
    notice.wait_for()
    assert "no sample with the id “no such sample”" in notice.inner_text()
    tab.evaluate("h => { window.location.hash = h; }", "#id=" + quote(ODD_ID, safe=""))
    notice.wait_for(state="hidden")
    assert log.problems(rendered.url) == []
