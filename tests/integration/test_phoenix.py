"""`vera eval --phoenix` and `vera monitor --phoenix` against a real Phoenix that the test starts
on 127.0.0.1 (SQLite storage in a temporary folder): an application's traces go to Phoenix
over OTLP, VERA evaluates the same traces, and Phoenix's own client reads the annotations back
from the spans the answers came from.

Phoenix's server (`arize-phoenix`) pins `anthropic<2`, which VERA's test environment does not
share, so it runs from its own environment: `VERA_PHOENIX_SERVER` names its `phoenix`
executable (`.ci/run` installs one). Where the server is importable here, that one is used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without

pytest.importorskip("phoenix.client", reason=without("phoenix"))
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason=without("otel"))

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from phoenix.client import Client
from tests.support.otel_traces import FileSpanExporter, emit_rag_trace
from typer.testing import CliRunner

from vera.cli import app
from vera.integrations import PhoenixAnnotator
from vera.monitor import MonitorConfig, create_monitor, running_monitor

START_TIMEOUT_S = 180.0
"""Phoenix migrates its SQLite database and starts in about 30 s on a busy two-core machine."""
DOC = ["Paris is the capital of France."]
QUESTION = "Which city is the capital of France?"
FAITHFUL = "Paris is the capital of France."
UNFAITHFUL = "Paris is the capital of Germany."


def _server_command() -> list[str] | None:
    given = os.environ.get("VERA_PHOENIX_SERVER")
    if given:
        return [given, "serve"]
    if importlib.util.find_spec("phoenix.server") is not None:
        return [sys.executable, "-m", "phoenix.server.main", "serve"]
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix on 127.0.0.1 with its SQLite database in a temporary folder; its URL."""
    command = _server_command()
    if command is None:
        reason = (
            "Phoenix's server is not installed: set VERA_PHOENIX_SERVER to the `phoenix` "
            "executable of an environment with arize-phoenix (python -m venv /tmp/phoenix && "
            "/tmp/phoenix/bin/pip install arize-phoenix)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so the Phoenix tests must run")
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHOENIX_")}
    env.update(
        PHOENIX_WORKING_DIR=str(work),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(_free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
    )
    url = f"http://127.0.0.1:{port}"
    with (work / "server.log").open("wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _answers(url):
                said = (work / "server.log").read_text(errors="replace")[-2000:]
                if server.poll() is not None:
                    pytest.fail(f"Phoenix exited with {server.returncode}:\n{said}")
                if time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not answer in {START_TIMEOUT_S:.0f} s:\n{said}")
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _provider(*exporters: SpanExporter) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _root_span_ids(trace_file: Path) -> dict[str, str]:
    """Trace id -> its root span's id, read from the trace file as written."""
    roots: dict[str, str] = {}
    for line in trace_file.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    if not span.get("parentSpanId"):
                        roots[span["traceId"]] = span["spanId"]
    return roots


def _wait(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)


def _annotations(url: str, span_ids: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Span id -> annotation name -> annotation, as Phoenix's client reads them."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    client = Client(base_url=url)
    read = client.spans.get_span_annotations(span_ids=span_ids, project_identifier="default")
    for annotation in read:
        found.setdefault(annotation["span_id"], {})[annotation["name"]] = dict(annotation)
    return found


def _spans_in_phoenix(url: str, span_ids: set[str]) -> Callable[[], bool]:
    client = Client(base_url=url)

    def arrived() -> bool:
        spans = client.spans.get_spans(project_identifier="default", limit=1000)
        return span_ids <= {s["context"]["span_id"] for s in spans}

    return arrived


def _send_traces(url: str, trace_file: Path) -> dict[str, str]:
    """Two answers sent to Phoenix and written to the trace file, and one written only to the
    file; trace id -> root span id of each."""
    both = _provider(OTLPSpanExporter(endpoint=f"{url}/v1/traces"), FileSpanExporter(trace_file))
    tracer = both.get_tracer("shop")
    for answer in (FAITHFUL, UNFAITHFUL):
        emit_rag_trace(tracer, query=QUESTION, answer=answer, documents=DOC)
    both.shutdown()
    only_file = _provider(FileSpanExporter(trace_file))
    emit_rag_trace(only_file.get_tracer("shop"), query=QUESTION, answer=FAITHFUL, documents=DOC)
    only_file.shutdown()
    return _root_span_ids(trace_file)


def test_eval_puts_each_verdict_on_the_span_its_answer_came_from(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    roots = _send_traces(phoenix, tmp_path / "traces.jsonl")
    *sent, unsent = roots  # the third trace went to the file only
    _wait(_spans_in_phoenix(phoenix, {roots[t] for t in sent}), "the traces in Phoenix")
    args = ["eval", "-d", "traces.jsonl", "--no-history", "-o", "report.json"]
    result = CliRunner().invoke(app, [*args, "--phoenix", phoenix])
    assert result.exit_code == 1, result.output  # the unfaithful answer fails the gate
    said = " ".join(result.output.split())
    assert f"2 answers annotated in Phoenix at {phoenix}" in said
    assert f"1 whose span Phoenix does not hold ({unsent})" in said
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    samples = {s["id"]: s for s in report["samples"]}
    found = _annotations(phoenix, [roots[t] for t in roots])
    assert set(found) == {roots[t] for t in sent}  # on the answers' own spans, no other
    labels = set()
    for trace_id in sent:
        sample, on_span = samples[trace_id], found[roots[trace_id]]
        verdict = on_span["vera.verdict"]
        assert verdict["result"]["label"] == sample["verdict"]["status"]
        assert verdict["result"]["explanation"] == sample["verdict"]["reason"]
        assert verdict["annotator_kind"] == "CODE"  # the offline judge
        claims = verdict["metadata"]["claims"]
        assert [c["text"] for c in claims] == [c["text"] for c in sample["claims"]]
        assert [c["verdict"] for c in claims] == [c["verdict"] for c in sample["claims"]]
        score = on_span["vera.faithfulness"]["result"]["score"]
        assert score == pytest.approx(sample["scores"]["faithfulness"])
        labels.add(verdict["result"]["label"])
    assert labels == {"faithful", "unfaithful"}


def test_an_unreachable_phoenix_is_exit_2_after_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    provider = _provider(FileSpanExporter(tmp_path / "traces.jsonl"))
    emit_rag_trace(provider.get_tracer("shop"), query=QUESTION, answer=FAITHFUL, documents=DOC)
    provider.shutdown()
    nobody = f"http://127.0.0.1:{_free_port()}"
    args = ["eval", "-d", "traces.jsonl", "--no-history", "-o", "report.json"]
    result = CliRunner().invoke(app, [*args, "--phoenix", nobody])
    assert result.exit_code == 2, result.output
    assert f"--phoenix {nobody}: Phoenix could not be reached" in " ".join(result.output.split())
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["samples"]


def test_monitor_annotates_each_trace_it_evaluates(phoenix: str, tmp_path: Path) -> None:
    annotator = PhoenixAnnotator(phoenix, judge="offline")
    annotator.check()
    config = MonitorConfig(settle_seconds=0.1, flush_seconds=0.1)
    monitor = create_monitor(
        config, history=tmp_path / "runs.sqlite", on_result=annotator.annotate_sample
    )
    with running_monitor(monitor) as receiver:
        # As a collector fans out: the application's spans go to Phoenix and to VERA.
        provider = _provider(
            OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"), OTLPSpanExporter(endpoint=receiver)
        )
        tracer = provider.get_tracer("shop")
        with tracer.start_as_current_span("warm-up"):
            pass  # not a RAG trace: the monitor skips it, Phoenix stores it
        trace_id = emit_rag_trace(tracer, query=QUESTION, answer=UNFAITHFUL, documents=DOC)
        provider.shutdown()
        _wait(lambda: annotator.tally.annotated == 1, "the monitor's annotation")
    spans = Client(base_url=phoenix).spans.get_spans(project_identifier="default", limit=1000)
    [root] = [
        s["context"]["span_id"]
        for s in spans
        if s["context"]["trace_id"] == trace_id and s["parent_id"] is None
    ]
    on_span = _annotations(phoenix, [root])[root]
    assert on_span["vera.verdict"]["result"]["label"] == "unfaithful"
    assert on_span["vera.verdict"]["result"]["score"] == 0.0
    assert on_span["vera.faithfulness"]["result"]["score"] < 1.0
