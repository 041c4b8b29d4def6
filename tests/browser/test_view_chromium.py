"""`vera view` as a person uses it: the app served by uvicorn on 127.0.0.1, in headless Chromium.

The history holds real runs made through the library (see `tests/unit/test_viewer.py`): the
bundled `technical` dataset, `example` judged by `offline:learned` (A) and then by `offline`
(B), whose verdicts differ, and an `example` run left unfinished after three samples. The
server runs in a thread on a port the system picks; Chromium is driven as in
`test_html_report_chromium.py` (the system's `chromium`, offline flags, a fresh profile), and
every page is checked for console errors and for requests to anything but the server.

Screenshots land in `test-artifacts/` at the repository root (git-ignored): view-list.png,
view-run.png and view-compare.png at 1280 px, and view-*-390.png at 390 px.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from tests.support import chromium
from tests.support.chromium import ARTIFACTS, READY, Log
from tests.support.view_history import METRICS, History, make_history

from vera import RunStore
from vera._results import verdict_changes

WHITEBOX = "the report builder, on hand-made results"

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright


def _missing() -> str | None:
    for package in ("starlette", "uvicorn"):
        if importlib.util.find_spec(package) is None:
            return f"the {package} package is not installed (pip install -e '.[test]')"
    return chromium.missing()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """Made before Playwright starts: its driver runs an event loop in this thread, and a run
    refuses to start inside one."""
    return make_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def origin(history: History) -> Iterator[str]:
    """The view served by uvicorn in a thread on 127.0.0.1, on a port the system picks."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI is set, so the browser tests must run")
        pytest.skip(missing)
    import uvicorn

    from vera import create_app

    app = create_app(history.path, allowed_hosts=["127.0.0.1"])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=20)


@pytest.fixture(scope="module")
def playwright(origin: str) -> Iterator[Playwright]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    context = chromium.launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
    yield context
    context.close()


@pytest.fixture
def tab(browser: BrowserContext) -> Iterator[tuple[Page, Log]]:
    page = browser.new_page()
    yield page, chromium.watch(page)
    page.close()


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {path}")


def _in_view(page: Page, selector: str) -> bool:
    """Whether the element shows in the window (scrolled to, its top may sit a pixel above)."""
    box = page.locator(selector).bounding_box()
    height = page.evaluate("window.innerHeight")
    return box is not None and box["y"] + box["height"] > 0 and box["y"] < height


def test_the_list_leads_to_a_run_whose_samples_and_claims_open(
    tab: tuple[Page, Log], origin: str, history: History
) -> None:
    page, log = tab
    page.goto(origin + "/")
    assert page.title() == "Runs · VERA view"
    rows = page.locator("#run-table tbody tr")
    assert rows.count() == 4
    assert page.locator("#run-table tr[data-status=running] a").count() == 0
    assert "vera eval --resume" in page.locator("#run-table tr[data-status=running]").inner_text()
    assert page.locator('.dataset-trend[data-dataset="example"] svg').count() == len(METRICS)
    _shot(page, "view-list.png")

    page.locator(f'#run-table a[href="/runs/{history.b}"]').click()
    page.wait_for_selector(READY, state="attached")
    assert page.url == f"{origin}/runs/{history.b}"
    assert page.locator("h1").inner_text() == "VERA report · example"
    assert page.locator("article.sample").count() == 28
    nav = page.locator("nav.app a")
    assert nav.all_inner_texts()[0] == "All runs"
    contradicted = page.locator("article.sample:has(mark.claim.v-contradicted)").first
    if contradicted.locator("> details").get_attribute("open") is None:
        contradicted.locator("> details > summary").click()
    mark = contradicted.locator("mark.claim.v-contradicted").first
    claim = mark.get_attribute("data-claim")
    card = contradicted.locator(f'details.claim-card[data-claim="{claim}"]')
    assert card.get_attribute("open") is None
    mark.locator("a").click()
    assert card.get_attribute("open") is not None
    assert "Contradicted" in card.locator("dl").inner_text()
    _shot(page, "view-run.png")
    assert log.problems_outside(origin) == []


def test_the_compare_form_shows_changed_verdicts_and_their_links_open_the_sample(
    tab: tuple[Page, Log], origin: str, history: History
) -> None:
    page, log = tab
    page.goto(origin + "/")
    assert page.locator("select[name=a]").input_value() == history.a
    assert page.locator("select[name=b]").input_value() == history.b
    page.locator("form.pick button[type=submit]").click()
    page.wait_for_load_state("load")
    assert page.url == f"{origin}/compare?a={history.a}&b={history.b}"
    for metric in METRICS:
        row = page.locator(f'#metric-table tr[data-metric="{metric}"]')
        assert row.locator("[data-role=difference]").inner_text().endswith("worse")
    store = RunStore(history.path, read_only=True)
    changes = verdict_changes(store.report(history.a).samples, store.report(history.b).samples)
    shown = page.locator("article.change").evaluate_all("a => a.map(e => e.dataset.sampleId)")
    assert shown == [c.id for c in changes]
    worst = changes[0]
    assert worst.before.label == "pass" and worst.after.label.startswith("fail")
    _shot(page, "view-compare.png")

    # The link turns A's page to the sample, opened and scrolled to (far below the top).
    article = page.locator(f'article.change[data-sample-id="{worst.id}"]')
    article.locator("a[data-side=A]").click()
    page.wait_for_selector(READY, state="attached")
    assert page.url == f"{origin}/runs/{history.a}#id={quote(worst.id, safe='')}"
    opened = f'article.sample[data-sample-id="{worst.id}"]'
    page.wait_for_function(
        "s => document.querySelector(s + ' > details')?.open === true", arg=opened
    )
    assert _in_view(page, opened)
    assert log.problems_outside(origin) == []


def test_a_runs_page_links_to_the_comparison_with_the_previous_run(
    tab: tuple[Page, Log], origin: str, history: History
) -> None:
    page, log = tab
    page.goto(f"{origin}/runs/{history.b}")
    page.wait_for_selector(READY, state="attached")
    page.locator("nav.app a", has_text="Compare with the previous run").click()
    page.wait_for_load_state("load")
    assert page.url == f"{origin}/compare?a={history.a}&b={history.b}"
    assert page.locator("article.change").count() > 0
    page.locator("nav.app a", has_text="All runs").click()
    page.wait_for_load_state("load")
    assert page.url == origin + "/"
    assert log.problems_outside(origin) == []


def test_every_page_fits_390_pixels_without_scrolling_sideways(
    tab: tuple[Page, Log], origin: str, history: History
) -> None:
    page, log = tab
    page.set_viewport_size({"width": 390, "height": 844})
    pages = {
        "list": "/",
        "run": f"/runs/{history.b}",
        "compare": f"/compare?a={history.a}&b={history.b}",
        "compare-datasets": f"/compare?a={history.technical}&b={history.b}",
    }
    for name, url in pages.items():
        page.goto(origin + url)
        page.wait_for_load_state("load")
        if name == "run":
            page.wait_for_selector(READY, state="attached")
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (name, width)
        _shot(page, f"view-{name}-390.png")
    # The tables are wider than the page, and scroll in their own frame.
    page.goto(origin + "/")
    frame = page.locator("#runs .scroll")
    assert frame.evaluate("e => e.scrollWidth > e.clientWidth")
    assert log.problems_outside(origin) == []
