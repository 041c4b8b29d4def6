"""Reviewing a run in `vera view --review` as a person does, in headless Chromium: label a
sample and one of its claims from the calibration queue, another from triage, see the
calibration block update on the review page and the run's report, export the labels; a form
posted from another site is refused; a view without `--review` takes nothing.

The history holds the bundled `example` judged by `offline:learned`. Two views are served by
uvicorn in threads on ports the system picks: one with review, one read-only (which is also
"another site" for the review view: another port is another origin). Screenshots land in
`test-artifacts/` (review-calibration.png, review-triage.png).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.support import chromium
from tests.support.chromium import ARTIFACTS, READY, Log
from tests.support.cli import run_vera
from tests.support.view_history import stored_run

from vera import RunStore, review_calibration
from vera._review import calibration_order
from vera._review._labels import stored_labels

WHITEBOX = "the review queues' order; the labels as stored rows"

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Made before Playwright starts: a run refuses to start inside its event loop."""
    path = tmp_path_factory.mktemp("review") / "runs.sqlite"
    for _ in range(8):
        run_id = stored_run(path, "example", "offline:learned")
        if _first_has_claims(path, run_id):
            return path, run_id
    raise AssertionError("eight runs in a row put an abstention first in the calibration queue")


def _first_has_claims(path: Path, run_id: str) -> bool:
    """The calibration order is random, fixed by the run id; the test labels a claim of the
    first sample, and two of `example`'s 28 answers are abstentions without claims."""
    store = RunStore(path, read_only=True)
    try:
        results = {result.id: result for result in store.iter_results(run_id)}
    finally:
        store.close()
    return bool(results[calibration_order(run_id, results)[0]].claims)


def _serve(path: Path, *, review: bool) -> tuple[Any, threading.Thread, str]:
    import uvicorn

    from vera import create_app

    app = create_app(path, allowed_hosts=["127.0.0.1"], review=review)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def origins(history: tuple[Path, str]) -> Iterator[tuple[str, str]]:
    """(the view with --review, the read-only view) over the same history."""
    chromium.skip_or_fail()
    served = [_serve(history[0], review=True), _serve(history[0], review=False)]
    yield served[0][2], served[1][2]
    for server, thread, _ in served:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture(scope="module")
def browser(
    origins: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserContext]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        context = _launch(driver, tmp_path_factory.mktemp("chromium-profile"))
        yield context
        context.close()


def _launch(driver: Playwright, profile: Path) -> BrowserContext:
    return chromium.launch(driver, profile)


@pytest.fixture
def tab(browser: BrowserContext) -> Iterator[tuple[Page, Log]]:
    page = browser.new_page()
    yield page, chromium.watch(page)
    page.close()


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _labels(path: Path, run_id: str) -> list[Any]:
    store = RunStore(path, read_only=True)
    try:
        return stored_labels(store, run_id)
    finally:
        store.close()


def _label_first(page: Page, label: str, *, claim: str | None = None, note: str = "") -> str:
    """Fill in and send the queue's first form; the sample it labelled."""
    item = page.locator("article.review-item").first
    sample = item.get_attribute("data-sample")
    assert sample
    if claim is not None:
        item.locator("select[name=claim-0]").select_option(claim)
    item.locator(f"input[name=label][value={label}]").check()
    if note:
        item.locator("textarea[name=note]").fill(note)
    if not item.locator("input[name=reviewer]").input_value():
        item.locator("input[name=reviewer]").fill("ana")
    item.locator("button[type=submit]").click()
    page.wait_for_load_state("load")
    return sample


def test_label_a_sample_and_a_claim_then_see_the_calibration_update_and_export(
    tab: tuple[Page, Log], origins: tuple[str, str], history: tuple[Path, str], tmp_path: Path
) -> None:
    page, log = tab
    origin, _ = origins
    path, run_id = history
    page.goto(f"{origin}/review/{run_id}?queue=calibration")
    assert "uniformly random sample" in page.locator("#why-queue").inner_text()
    assert page.locator("#calibration-block h2").inner_text() == "Calibration"
    first = _label_first(page, "unfaithful", claim="CONTRADICTED", note="the cap is 5 GB")
    assert page.locator("#saved").inner_text() == f"Saved the label of sample {first}."
    heading = page.locator("#calibration-block h2").inner_text()
    assert heading.startswith("Calibration against 1 human labels")
    rows = page.locator(f'#labels tr[data-sample="{first}"]')
    assert rows.count() == 2  # the whole response, and the claim
    assert any("CONTRADICTED" in text for text in rows.all_inner_texts())
    _shot(page, "review-calibration.png")

    # The next in the calibration order, with the reviewer's name remembered.
    item = page.locator("article.review-item").first
    assert item.locator("input[name=reviewer]").input_value() == "ana"
    second = _label_first(page, "faithful")
    assert second != first
    assert (
        page.locator("#calibration-block h2")
        .inner_text()
        .startswith("Calibration against 2 human labels")
    )

    # Triage: lowest scores first; a label there is kept and listed.
    page.locator("nav.pages a", has_text="Triage queue").click()
    page.wait_for_load_state("load")
    assert "not a random one" in page.locator("#why-queue").inner_text()
    third = _label_first(page, "unfaithful")
    assert page.locator(f'#labels tr[data-sample="{third}"]').count() == 1
    _shot(page, "review-triage.png")

    stored = _labels(path, run_id)
    assert [(x.sample_id, x.claim is None, x.label) for x in stored][:3] == [
        (first, True, "unfaithful"),
        (first, False, "CONTRADICTED"),
        (second, True, "faithful"),
    ]
    assert all(x.reviewer == "ana" for x in stored)

    # The run's report shows the block the stored labels give.
    store = RunStore(path, read_only=True)
    block = review_calibration(store, run_id)
    store.close()
    assert block is not None
    page.goto(f"{origin}/runs/{run_id}")
    page.wait_for_selector(READY, state="attached")
    assert (
        page.locator("#calibration h2")
        .inner_text()
        .startswith(f"Calibration against {block.labelled} human labels")
    )

    exported = run_vera(
        tmp_path, "labels", "export", run_id, "-o", "labels.jsonl", "--history", str(path)
    )
    assert exported.returncode == 0, exported.stderr
    rows_out = {
        row["id"]: row
        for row in map(json.loads, (tmp_path / "labels.jsonl").read_text().splitlines())
    }
    assert rows_out[first]["human_faithful"] is False
    assert rows_out[first]["human_claims"][0]["verdict"] == "CONTRADICTED"
    assert rows_out[second]["human_faithful"] is True
    assert log.problems_outside(origin) == []


@contextmanager
def _other_site(html: str) -> Iterator[str]:
    """A page of another origin (another port on 127.0.0.1), served by the standard library."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join(timeout=20)


def test_a_form_posted_from_another_site_is_refused(
    tab: tuple[Page, Log], origins: tuple[str, str], history: tuple[Path, str]
) -> None:
    """Even with the session's real CSRF token, a form another site sends is refused and
    stores nothing."""
    page, _ = tab
    origin, _ = origins
    path, run_id = history
    page.goto(f"{origin}/review/{run_id}")
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    sample = page.locator("article.review-item").first.get_attribute("data-sample")
    before = len(_labels(path, run_id))
    fields = {"csrf": token, "sample": sample, "queue": "calibration", "label": "faithful"}
    inputs = "".join(f'<input name="{k}" value="{escape(str(v))}">' for k, v in fields.items())
    form = (
        f'<form method="post" action="{origin}/review/{run_id}/labels">{inputs}'
        '<input name="reviewer" value="mallory"><button type="submit">Go</button></form>'
    )
    with _other_site(form) as elsewhere:
        page.goto(elsewhere)
        page.locator("button[type=submit]").click()
        page.wait_for_url(f"{origin}/review/{run_id}/labels")
    assert "not from this view's own page" in page.locator("#message").inner_text()
    assert len(_labels(path, run_id)) == before


def test_without_review_the_view_shows_the_queue_and_takes_no_label(
    tab: tuple[Page, Log], origins: tuple[str, str], history: tuple[Path, str]
) -> None:
    page, log = tab
    _, read_only = origins
    path, run_id = history
    page.goto(f"{read_only}/review/{run_id}")
    assert page.locator("#read-only").is_visible()
    assert page.locator("button[type=submit]").count() == 0
    assert page.locator("input[name=csrf]").count() == 0
    assert page.locator("article.review-item select").first.is_disabled()
    before = len(_labels(path, run_id))
    answer = page.request.post(
        f"{read_only}/review/{run_id}/labels",
        form={"sample": "ex-01", "label": "faithful", "reviewer": "ana"},
        headers={"Origin": read_only},
    )
    assert answer.status == 405
    assert len(_labels(path, run_id)) == before
    assert log.problems_outside(read_only) == []


def test_the_review_page_fits_390_pixels_without_scrolling_sideways(
    tab: tuple[Page, Log], origins: tuple[str, str], history: tuple[Path, str]
) -> None:
    page, log = tab
    origin, _ = origins
    page.set_viewport_size({"width": 390, "height": 844})
    for queue in ("calibration", "triage"):
        page.goto(f"{origin}/review/{history[1]}?queue={queue}")
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (queue, width)
        _shot(page, f"review-{queue}-390.png")
    assert log.problems_outside(origin) == []
