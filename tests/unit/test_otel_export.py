"""`vera eval --otel-endpoint`: the run sent as OTLP/HTTP spans to a collector on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without
from typer.testing import CliRunner

import vera
from vera import ConfigError
from vera.cli import app
from vera.integrations import export_report
from vera.integrations._otel_export import traces_url

WHITEBOX = "the trace links the exporter writes"

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter", reason=without("otel"))
trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason=without("monitor")
)


class Collector:
    """Records each POST's path and body; answers `status`."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        self.status = 200
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.requests.append((self.path, body))
                self.send_response(collector.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[Any]:
        found = []
        for _, body in self.requests:
            message = trace_service.ExportTraceServiceRequest.FromString(body)
            for resource_spans in message.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    found.extend(scope_spans.spans)
        return found


@pytest.fixture
def collector() -> Iterator[Collector]:
    running = Collector()
    thread = threading.Thread(target=running.server.serve_forever, daemon=True)
    thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


def attributes(span: Any) -> dict[str, Any]:
    values = {}
    for item in span.attributes:
        kind = item.value.WhichOneof("value")
        values[item.key] = getattr(item.value, kind)
    return values


def write_rows(path: Path) -> Path:
    texts = {"s1": "Paris is in France.", "s2": "Snow is white."}
    rows = [{"id": i, "query": "q", "response": t, "contexts": [t]} for i, t in texts.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# With the history on, `vera eval` streams its results to the store and `report.samples` is
# empty: the spans are sent from the run's view, as every report is written.
@pytest.mark.parametrize("history", [["--no-history"], ["--history", "h.sqlite"]])
def test_cli_sends_one_span_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: Collector, history: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_rows(tmp_path / "d.jsonl")
    args = ["eval", "-d", "d.jsonl", *history, "--otel-endpoint", collector.url]
    result = CliRunner().invoke(app, [*args, "--output", "report.json"])
    assert result.exit_code == 0, result.output
    assert "3 spans sent" in result.output
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    scores = {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]}
    assert min(scores.values()) >= 0.9  # each response copies its context
    [(path, _)] = collector.requests  # all spans in one request
    assert path == "/v1/traces"
    spans = collector.spans()
    [run] = [s for s in spans if s.name == "vera.eval"]
    samples = [s for s in spans if s.name == "vera.sample"]
    assert attributes(run)["vera.samples"] == 2
    assert attributes(run)["vera.metric.faithfulness"] == pytest.approx(
        report["metrics"]["faithfulness"]
    )
    assert sorted(attributes(s)["vera.sample.id"] for s in samples) == ["s1", "s2"]
    for span in samples:
        sent = attributes(span)
        assert sent["vera.score.faithfulness"] == pytest.approx(scores[sent["vera.sample.id"]])
    assert all(s.parent_span_id == run.span_id and s.trace_id == run.trace_id for s in samples)


def test_a_refusing_collector_is_an_error(tmp_path: Path, collector: Collector) -> None:
    collector.status = 400
    report = vera.evaluate(write_rows(tmp_path / "d.jsonl"))
    with pytest.raises(ConfigError, match="did not accept the spans"):
        export_report(report, collector.url)


def test_endpoint_urls() -> None:
    assert traces_url("http://localhost:4318") == "http://localhost:4318/v1/traces"
    assert traces_url("http://localhost:4318/") == "http://localhost:4318/v1/traces"
    assert traces_url("https://c.example/otlp/v1/traces") == "https://c.example/otlp/v1/traces"
    with pytest.raises(ConfigError, match="expected an http"):
        traces_url("localhost:4318")


def test_missing_sdk_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = vera.evaluate(write_rows(tmp_path / "d.jsonl"))
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(ConfigError, match=r"pip install 'vera-eval\[otel\]'"):
        export_report(report, "http://127.0.0.1:9")
