"""The live monitor page in headless Chromium: it refreshes in place (no reload) as a monitor
evaluates new traces, under its own content security policy, with no console error."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.support import chromium
from tests.support.extras import without

pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
pytest.importorskip("opentelemetry.proto", reason=without("monitor"))

from tests.support.otel_traces import emit_rag_trace, rag_provider

from vera import MonitorConfig, create_app, create_monitor, running_monitor

DOC = ["Paris is the capital of France."]


@contextmanager
def _view(history: Path) -> Iterator[str]:
    """`vera view` over `history`, served by uvicorn in a thread on a port the system picks."""
    import uvicorn

    app = create_app(history)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    thread.join(10)


def test_the_live_page_refreshes_in_place_as_traces_are_evaluated(tmp_path: Path) -> None:
    chromium.skip_or_fail()
    from playwright.sync_api import sync_playwright

    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(settle_seconds=0.1, flush_seconds=0.1), history=history)
    with (
        running_monitor(monitor) as url,
        _view(history) as view,
        sync_playwright() as driver,
    ):
        provider = rag_provider(url)
        tracer = provider.get_tracer("shop")
        emit_rag_trace(tracer, query="q", answer=DOC[0], documents=DOC)
        while monitor.status()["counts"].get("kept", 0) < 1 or monitor.status()["queued"]:
            time.sleep(0.05)
        browser = chromium.launch(driver, tmp_path / "profile")
        page = browser.new_page()
        log = chromium.watch(page)
        page.goto(view + "/monitor")
        cell = page.locator("table.windows td[data-evaluated]").first
        page.wait_for_function(
            "() => document.querySelector('td[data-evaluated]')?.dataset.evaluated === '1'",
            timeout=20_000,
        )
        page.evaluate("window.loadedOnce = true")  # gone if the page reloads
        emit_rag_trace(tracer, query="q2", answer="Paris is in Germany.", documents=DOC)
        provider.shutdown()
        page.wait_for_function(
            "() => document.querySelector('td[data-evaluated]')?.dataset.evaluated === '2'",
            timeout=30_000,
        )
        assert cell.inner_text() == "2"
        assert page.evaluate("window.loadedOnce") is True
        assert int(page.locator("#live").get_attribute("data-refreshes") or "0") >= 1
        assert page.locator('figure.trend[data-metric="faithfulness"] circle.mean').count() == 1
        assert log.problems_outside(view) == []
        browser.close()
