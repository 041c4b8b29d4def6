"""A conversation's thread as a person sees it, in headless Chromium: in the HTML report opened
from disk, and in `vera view` served by uvicorn on 127.0.0.1.

The run is a real one over a conversation file (the offline judge): a system prompt, the
user's question, an assistant tool call, the tool's result (with a `<script>` and an
`<img onerror>` in it, which must show as text and never run), a faithful answer and an
unfaithful one. Each page must show the user message, the tool result with its tool name and
call id, and the assistant turns' verdicts, with no console error, no script error and no
request for anything but the page itself.

Screenshots land in `test-artifacts/` (git-ignored): threads-report.png, threads-view.png.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.support import chromium
from tests.support.chromium import ARTIFACTS

import vera
from vera import evaluate_conversations
from vera._conversations import threads_html

WHITEBOX = "the conversations' own parts"

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

SCRIPT = '<script>document.title = window.__pwned = "pwned"</script>'
IMG = '<img src=x onerror="window.__pwned = 2">'
TOOL_TEXT = f"Order 42 shipped on May 3 via DHL. {SCRIPT} {IMG}"
CHAT: dict[str, Any] = {
    "id": "order-42",
    "messages": [
        {"role": "system", "content": "You are a support agent for ShipCo."},
        {"role": "user", "content": "Where is order 42? I live in Berlin."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_7",
                    "type": "function",
                    "function": {"name": "track_order", "arguments": '{"order": 42}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_7", "content": TOOL_TEXT},
        {"role": "assistant", "content": "Order 42 shipped on May 3 via DHL."},
        {"role": "user", "content": "Which carrier again?"},
        {"role": "assistant", "content": "Order 42 shipped on May 9 via UPS."},
    ],
}


@dataclass
class Run:
    report: Path
    history: Path
    run_id: str
    threads: Path
    """`vera conversations -o threads.html` of the same file."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Made before Playwright starts: its driver runs an event loop in this thread, and a run
    refuses to start inside one."""
    folder = tmp_path_factory.mktemp("threads")
    data = folder / "chats.jsonl"
    data.write_text(json.dumps(CHAT) + "\n", encoding="utf-8")
    history = folder / "runs.sqlite"
    report = folder / "report.html"
    result = vera.run_evaluation(data, history=history, reports={"html": report})
    assert result.run_id is not None
    threads = folder / "threads.html"
    threads.write_text(threads_html(evaluate_conversations(data)), encoding="utf-8")
    return Run(report, history, result.run_id, threads)


def _missing() -> str | None:
    for package in ("starlette", "uvicorn"):
        if importlib.util.find_spec(package) is None:
            return f"the {package} package is not installed (pip install -e '.[test]')"
    return chromium.missing()


@pytest.fixture(scope="module")
def origin(run: Run) -> Iterator[str]:
    """`vera view` over the run's history, served by uvicorn in a thread on 127.0.0.1."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}; CI is set, so the browser tests must run")
        pytest.skip(missing)
    import uvicorn

    from vera import create_app

    app = create_app(run.history, allowed_hosts=["127.0.0.1"])
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
def browser(origin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        context = chromium.launch(driver, tmp_path_factory.mktemp("chromium-profile"))
        yield context
        context.close()


def _check_thread(page: Page) -> None:
    """The thread is open and shows what a person reads it for; nothing from the data ran."""
    thread = page.locator('details.thread[data-conversation="order-42"]')
    assert thread.get_attribute("open") is not None
    user = thread.locator('li.msg[data-turn="2"]')
    assert user.is_visible()
    assert user.inner_text().endswith("Where is order 42? I live in Berlin.")
    tool = thread.locator('li.msg[data-turn="4"] [data-role="tool-result"]')
    assert tool.is_visible()
    assert tool.locator(".tool-name").inner_text() == "track_order"
    assert tool.locator(".call-id").inner_text() == "call_7"
    # The markup in the tool's result is text on the page, not elements.
    assert SCRIPT in tool.locator(".msg-text").inner_text()
    assert IMG in tool.locator(".msg-text").inner_text()
    assert tool.locator("script, img").count() == 0
    faithful = thread.locator('li.msg[data-turn="5"] [data-role="verdicts"]')
    assert faithful.is_visible()
    assert "Fully supported" in faithful.locator(".verdict").first.inner_text()
    assert "tool track_order, turn 4" in faithful.inner_text()
    unfaithful = thread.locator('li.msg[data-turn="7"] [data-role="verdicts"]')
    assert unfaithful.is_visible()
    assert "Contradicted" in unfaithful.locator(".verdict").first.inner_text()
    assert unfaithful.locator('[data-role="first-unfaithful"]').is_visible()
    # Turn 7 contradicts turn 5: it is marked, and the thread gives its consistency.
    assert unfaithful.locator('[data-role="inconsistent"]').is_visible()
    assert "consistency 0.00" in thread.locator("summary").first.inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.title() != "pwned"


def _check_consistency(page: Page) -> None:
    """The run's consistency beside its faithful-turn share, and in the conversation's row."""
    figures = page.locator('#conversation-figures [data-role="consistency"]')
    assert figures.is_visible()
    assert figures.inner_text() == "consistency 0.000 over 1 checked claim"
    row = page.locator('#conversation-table tr[data-conversation="order-42"]')
    assert row.locator('[data-role="inconsistent-turns"]').inner_text() == "7"


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#threads").screenshot(path=str(ARTIFACTS / name))


def test_the_report_opened_from_disk_shows_the_thread(browser: BrowserContext, run: Run) -> None:
    page, log = chromium.open_page(browser, run.report.as_uri() + "#conversations")
    _check_thread(page)
    _check_consistency(page)
    _shot(page, "threads-report.png")
    assert log.problems(page.url) == []
    page.close()


def test_vera_view_shows_the_thread_and_its_link_opens_the_sample(
    browser: BrowserContext, run: Run, origin: str
) -> None:
    page, log = chromium.open_page(browser, f"{origin}/runs/{run.run_id}")
    _check_thread(page)
    _check_consistency(page)
    _shot(page, "threads-view.png")
    page.locator('li.msg[data-turn="7"] [data-role="verdicts"] a').click()
    sample = page.locator('article.sample[data-sample-id="order-42/turn-7"]')
    sample.wait_for(state="visible")
    # The claim names the source its verdict rests on, under its evidence.
    source = sample.locator(".claim-source").first
    assert source.text_content() == "source: earlier-turn track_order, turn 4"
    assert source.get_attribute("dir") == "auto"
    assert page.evaluate("window.__pwned") is None
    assert log.problems_outside(origin) == []
    page.close()


def test_vera_conversations_threads_page_is_styled_under_its_policy(
    browser: BrowserContext, run: Run
) -> None:
    # Its content security policy allows its one style sheet by hash: were the hash wrong, the
    # page would show unstyled, and the browser would say so in the console.
    page = browser.new_page()
    log = chromium.watch(page)
    page.goto(run.threads.as_uri())
    page.wait_for_load_state("load")
    _check_thread(page)
    thread = page.locator('details.thread[data-conversation="order-42"]')
    assert (
        chromium.colour_name(thread.evaluate("e => getComputedStyle(e).borderLeftColor")) == "red"
    )
    inconsistent = thread.locator('li.msg[data-turn="7"] [data-role="inconsistent"]')
    assert inconsistent.is_visible()
    assert log.problems(page.url) == []
    page.close()
