"""`vera monitor` as a process: bad options exit 2, and a `kill -9` with `--spool` loses no
accepted trace and evaluates none twice."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without

pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
pytest.importorskip("opentelemetry.proto", reason=without("monitor"))

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer, error
from tests.support.otel_traces import emit_rag_trace

DOC = ["Paris is the capital of France."]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--alert", "faithfulness=0.8"], "--alert 'faithfulness=0.8': expected METRIC<VALUE"),
        (["--alert", "context_precision<0.5"], "does not measure 'context_precision'"),
        (["--window", "7m"], "--window '7m'"),
        (["--sample-rate", "1.5"], "--sample-rate 1.5"),
        (["--filter", "service"], "--filter 'service': expected KEY=VALUE"),
        (["--webhook", "ftp://x"], "--webhook: give an http:// or https:// URL"),
        (["--host", "0.0.0.0"], "--host 0.0.0.0 receives traces from other machines"),
        (["--token", "short"], "--token must be at least 16 characters"),
        (["--workers", "-1"], "--workers -1: give 0"),
    ],
)
def test_bad_options_exit_2_and_say_what_to_fix(tmp_path: Path, args: list[str], says: str) -> None:
    done = run_vera(tmp_path, "monitor", "--port", "0", *args, timeout=60)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert not (tmp_path / ".vera").exists()  # nothing was started or stored


class _Accepted(SpanExporter):
    """The SDK's exporter, keeping the spans of each trace the receiver answered 200 to."""

    def __init__(self, inner: OTLPSpanExporter) -> None:
        self.inner = inner
        self.accepted: Counter[str] = Counter()
        self.failed: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        for span in spans:
            assert span.context is not None
            trace_id = format(span.context.trace_id, "032x")
            if result is SpanExportResult.SUCCESS:
                self.accepted[trace_id] += 1
            else:
                self.failed.add(trace_id)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _monitor(tmp_path: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", "monitor", "--port", str(port), "--spool", "spool",
         "--concurrency", "1", *extra],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            _status(port)
            return process
        except OSError:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.1)
    raise AssertionError("vera monitor did not start")


def _status(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/status", timeout=5) as answer:
        found: dict[str, Any] = json.load(answer)
        return found


def test_kill_9_with_a_spool_evaluates_every_accepted_trace_exactly_once(tmp_path: Path) -> None:
    port = _port()
    first = _monitor(tmp_path, port)
    exporter = _Accepted(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=200))
    tracer = provider.get_tracer("shop")
    for n in range(600):
        emit_rag_trace(tracer, query=f"question {n}", answer=DOC[0], documents=DOC)
    assert provider.force_flush(60_000)
    left = _status(port)
    workers = _children(first.pid)
    assert workers  # the judge's worker process
    first.send_signal(signal.SIGKILL)
    first.wait()
    provider.shutdown()
    accepted = {t for t, n in exporter.accepted.items() if n == 3 and t not in exporter.failed}
    assert len(accepted) == 600

    # A small queue: what the spool holds is read back into it without a trace dropped.
    second = _monitor(tmp_path, port, "--queue", "5")
    try:
        deadline = time.monotonic() + 120
        while True:
            found = _status(port)
            if not (found["intake"] or found["open_traces"] or found["queued"] or found["spooled"]):
                break
            assert time.monotonic() < deadline, found
            time.sleep(0.2)
    finally:
        second.send_signal(signal.SIGINT)
        second.wait(60)
    with sqlite3.connect(tmp_path / ".vera" / "runs.sqlite") as db:
        stored = Counter(r[0] for r in db.execute("SELECT sample_id FROM results"))
    assert set(stored) == accepted
    assert set(stored.values()) == {1}
    # The kill came before the first monitor was done, so the spool carried work over (else
    # this test would not have tested a restart).
    assert left["counts"].get("traces", 0) < 600 or left["queued"] or left["open_traces"]
    assert not list((tmp_path / "spool").glob("*.pb"))
    # The killed monitor's worker left with it (its stdin ended), not an orphan judging on.
    _wait_gone(workers)


def _children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def _wait_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, f"worker processes {pids} outlived their monitor"
        time.sleep(0.1)


def test_a_window_alert_makes_the_stopped_monitor_exit_1(tmp_path: Path) -> None:
    port = _port()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", "monitor", "--port", str(port), "--window", "1s",
         "--alert", "faithfulness<0.9"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    history = tmp_path / ".vera" / "runs.sqlite"
    deadline = time.monotonic() + 60
    while True:  # a window of one second with no trace closes and raises its alert
        if history.exists():
            with sqlite3.connect(history) as db:
                tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
                if (
                    "monitor_alerts" in tables
                    and db.execute("SELECT COUNT(*) FROM monitor_alerts").fetchone()[0]
                ):
                    break
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1, stderr
    assert "ALERT window" in stderr and "scored no trace" in stderr


def test_sigterm_stops_a_monitor_without_alerts_with_exit_0(tmp_path: Path) -> None:
    process = _monitor(tmp_path, _port())
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_a_rejected_key_stops_the_monitor_with_exit_3_and_keeps_the_trace(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = lambda _: error(401, {"error": {"message": "Incorrect API key"}})
    port = _port()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "OPENAI_API_KEY": "sk-secret-never-shown",
        "VERA_JUDGE_BASE_URL": loopback.openai_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", "monitor", "--port", str(port), "--judge",
         "openai:gpt-4o-mini", "--spool", "spool", "--concurrency", "1"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            _status(port)
            break
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    url = f"http://127.0.0.1:{port}/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    emit_rag_trace(provider.get_tracer("shop"), query="q", answer=DOC[0], documents=DOC)
    provider.shutdown()
    _, stderr = process.communicate(timeout=90)  # it stops by itself
    assert process.returncode == 3, stderr
    assert "evaluations stopped" in stderr and "OPENAI_API_KEY" in stderr
    assert "sk-secret-never-shown" not in stderr
    assert loopback.request_count == 1  # not retried, nothing else started
    assert list((tmp_path / "spool").glob("*.pb"))  # evaluated after the key is fixed
