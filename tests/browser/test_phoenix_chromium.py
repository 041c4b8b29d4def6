"""What a team sees in Phoenix after `vera eval --phoenix`: the trace page of an answer, in
headless Chromium, shows VERA's verdict on the answer's own span, with its label and reason.
The screenshot lands in test-artifacts/phoenix-trace-verdict.png (docs/integrations-phoenix.md
shows it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import chromium
from tests.support.extras import without

pytest.importorskip("phoenix.client", reason=without("phoenix"))
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason=without("otel"))

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from phoenix.client import Client
from tests.support.otel_traces import FileSpanExporter, emit_rag_trace
from tests.support.phoenix import provider, running_phoenix
from typer.testing import CliRunner

from vera.cli import app


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    work = tmp_path / "phoenix"
    work.mkdir()
    with running_phoenix(work) as url:
        yield url


def test_the_trace_page_shows_the_verdict_on_the_answer_span(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium.skip_or_fail()
    from playwright.sync_api import sync_playwright

    monkeypatch.chdir(tmp_path)
    traces = tmp_path / "traces.jsonl"
    both = provider(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"), FileSpanExporter(traces))
    trace_id = emit_rag_trace(
        both.get_tracer("shop"),
        query="Which city is the capital of France?",
        answer="Paris is the capital of Germany.",
        documents=["Paris is the capital of France."],
    )
    both.shutdown()
    args = ["eval", "-d", "traces.jsonl", "--no-history", "-o", "report.json"]
    result = CliRunner().invoke(app, [*args, "--max-unfaithful", "1", "--phoenix", phoenix])
    assert result.exit_code == 0, result.output
    reason = json.loads(Path("report.json").read_text(encoding="utf-8"))["samples"][0]
    [project] = Client(base_url=phoenix).projects.list()
    with sync_playwright() as playwright:
        browser = chromium.launch(playwright, tmp_path / "profile", width=1500, height=950)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{phoenix}/projects/{project['id']}/traces/{trace_id}")
        drawer = page.get_by_test_id("application-drawer-plane")
        drawer.get_by_test_id("trace-tree").get_by_text("rag", exact=True).first.click()
        # The second: the span's own details, once loaded (the first is the tree's badge).
        drawer.get_by_text("vera.verdict").nth(1).hover()
        card = page.get_by_text(reason["verdict"]["reason"], exact=True)
        card.wait_for()
        chromium.ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(chromium.ARTIFACTS / "phoenix-trace-verdict.png"))
        shown = page.inner_text("body")
        browser.close()
    assert reason["verdict"]["status"] == "unfaithful"
    assert "unfaithful" in shown and "vera.faithfulness" in shown
