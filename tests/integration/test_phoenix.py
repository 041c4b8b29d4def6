"""`vera eval --phoenix` and `vera monitor --phoenix` against a real Phoenix that the test starts
on 127.0.0.1 (SQLite storage in a temporary folder): an application's traces go to Phoenix
over OTLP, VERA evaluates the same traces, and Phoenix's own client reads the annotations back
from the spans the answers came from.
Where the server comes from: tests/support/phoenix.py.
"""

from __future__ import annotations

import json
import os
import signal
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
from phoenix.client import Client
from tests.support.docs import run_example
from tests.support.otel_traces import FileSpanExporter, emit_rag_trace
from tests.support.phoenix import free_port, provider, root_span_ids, running_phoenix
from typer.testing import CliRunner

from vera import MonitorConfig, create_monitor, running_monitor
from vera.cli import app
from vera.integrations import PhoenixAnnotator

DOC = ["Paris is the capital of France."]
QUESTION = "Which city is the capital of France?"
FAITHFUL = "Paris is the capital of France."
UNFAITHFUL = "Paris is the capital of Germany."


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix on 127.0.0.1 with its SQLite database in a temporary folder; its URL."""
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as url:
        yield url


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
    both = provider(OTLPSpanExporter(endpoint=f"{url}/v1/traces"), FileSpanExporter(trace_file))
    tracer = both.get_tracer("shop")
    for answer in (FAITHFUL, UNFAITHFUL):
        emit_rag_trace(tracer, query=QUESTION, answer=answer, documents=DOC)
    both.shutdown()
    only_file = provider(FileSpanExporter(trace_file))
    emit_rag_trace(only_file.get_tracer("shop"), query=QUESTION, answer=FAITHFUL, documents=DOC)
    only_file.shutdown()
    return root_span_ids(trace_file)


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
    app_traces = provider(FileSpanExporter(tmp_path / "traces.jsonl"))
    emit_rag_trace(app_traces.get_tracer("shop"), query=QUESTION, answer=FAITHFUL, documents=DOC)
    app_traces.shutdown()
    nobody = f"http://127.0.0.1:{free_port()}"
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
        fan_out = provider(
            OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"), OTLPSpanExporter(endpoint=receiver)
        )
        tracer = fan_out.get_tracer("shop")
        with tracer.start_as_current_span("warm-up"):
            pass  # not a RAG trace: the monitor skips it, Phoenix stores it
        trace_id = emit_rag_trace(tracer, query=QUESTION, answer=UNFAITHFUL, documents=DOC)
        fan_out.shutdown()
        _wait(lambda: annotator.tally.annotated == 1, "the monitor's annotation")
    root = _root_in_phoenix(phoenix, trace_id)
    on_span = _annotations(phoenix, [root])[root]
    assert on_span["vera.verdict"]["result"]["label"] == "unfaithful"
    assert on_span["vera.verdict"]["result"]["score"] == 0.0
    assert on_span["vera.faithfulness"]["result"]["score"] < 1.0


def test_the_docs_example_runs(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = _send_traces(phoenix, tmp_path / "traces.jsonl")
    *sent, unsent = roots
    _wait(_spans_in_phoenix(phoenix, {roots[t] for t in sent}), "the traces in Phoenix")
    monkeypatch.setenv("PHOENIX_URL", phoenix)
    done = run_example("integrations-phoenix.md", tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"2 answers annotated in Phoenix at {phoenix}" in done.stdout
    assert f"1 whose span Phoenix does not hold ({unsent})" in done.stdout
    assert "1 whose span Phoenix does not hold" in done.stderr  # vera.evaluate's warning
    found = _annotations(phoenix, [roots[t] for t in sent])
    assert all("vera.verdict" in found[roots[t]] for t in sent)


def test_vera_monitor_phoenix_from_the_command_line(phoenix: str, tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "vera", "monitor", "--port", str(port)]
    command += ["--history", "runs.sqlite", "--phoenix", phoenix]
    env = {**os.environ, "HOME": str(tmp_path)}
    monitor = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        _wait(lambda: _listening(port, monitor), "vera monitor to listen")
        fan_out = provider(
            OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces"),
            OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"),
        )
        trace_id = emit_rag_trace(
            fan_out.get_tracer("shop"), query=QUESTION, answer=FAITHFUL, documents=DOC
        )
        fan_out.shutdown()
        root = _root_in_phoenix(phoenix, trace_id)
        _wait(lambda: "vera.verdict" in _annotations(phoenix, [root]).get(root, {}), "the verdict")
    finally:
        monitor.send_signal(signal.SIGINT)
        _, said = monitor.communicate(timeout=60)
    assert monitor.returncode == 0, said
    assert f"1 answer annotated in Phoenix at {phoenix} (2 annotations)" in said
    on_span = _annotations(phoenix, [root])[root]
    assert on_span["vera.verdict"]["result"]["label"] == "faithful"


def _listening(port: int, process: subprocess.Popen[str]) -> bool:
    assert process.poll() is None, process.stderr.read() if process.stderr else ""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/status", timeout=2):
            return True
    except OSError:
        return False


def _root_in_phoenix(url: str, trace_id: str) -> str:
    """The root span id of `trace_id`, once Phoenix holds it."""
    client = Client(base_url=url)
    found: list[str] = []

    def arrived() -> bool:
        spans = client.spans.get_spans(project_identifier="default", limit=1000)
        found[:] = [
            s["context"]["span_id"]
            for s in spans
            if s["context"]["trace_id"] == trace_id and s["parent_id"] is None
        ]
        return bool(found)

    _wait(arrived, f"trace {trace_id} in Phoenix")
    return found[0]
