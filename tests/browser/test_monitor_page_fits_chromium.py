"""Issue 44, item 3: `vera view`'s Live monitors page in a 1400x900 window shows its windows
table on the first screen; the trend plot above it keeps its own size (the report's
`svg { width: 100% }` once stretched it to about 2,700 px high)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import chromium

import vera
from vera import create_app
from vera._monitor import MonitorHistory
from vera._plan import build_plan

WHITEBOX = "the monitor's own parts"

WIDTH, HEIGHT = 1400, 900


def _history(path: Path, windows: int) -> None:
    """`windows` closed windows of one monitor, each with the bundled example's report."""
    report = vera.evaluate("example", quick=True, history=False)
    history = MonitorHistory(path)
    start = time.time() - 3600 * windows
    for i in range(windows):
        run_id = history.window(
            "support-bot", start + 3600 * i, start + 3600 * (i + 1), build_plan()
        )
        history.runs.finish(run_id, report)
        history.mark_closed(run_id)
    history.close()


@contextmanager
def _view(history: Path) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(create_app(history), host="127.0.0.1", port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    thread.join(10)


def test_the_windows_table_is_on_the_first_screen(tmp_path: Path) -> None:
    chromium.skip_or_fail()
    from playwright.sync_api import sync_playwright

    history = tmp_path / "runs.sqlite"
    _history(history, windows=2)
    with _view(history) as view, sync_playwright() as driver:
        browser = chromium.launch(driver, tmp_path / "profile", width=WIDTH, height=HEIGHT)
        page = browser.new_page()
        log = chromium.watch(page)
        page.goto(view + "/monitor")
        page.wait_for_selector("table.windows")
        chromium.ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(chromium.ARTIFACTS / "monitor-live-1400x900.png"))
        plot = page.locator("figure.trend svg").first.bounding_box()
        table = page.locator("table.windows").first.bounding_box()
        assert plot is not None and table is not None
        assert plot["height"] <= 200 and plot["width"] <= WIDTH
        assert table["y"] + 60 < HEIGHT, table  # its header and first row show
        assert page.locator("table.windows tbody tr").count() == 2
        assert log.problems_outside(view) == []
        browser.close()
