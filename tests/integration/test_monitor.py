"""`vera monitor` end to end: the real OpenTelemetry SDK exporting to the receiver over
127.0.0.1, traces evaluated by the offline judge into windowed runs of a real SQLite history."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.support.extras import without

pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
pytest.importorskip("opentelemetry.proto", reason=without("monitor"))

from tests.support.otel_traces import emit_rag_trace, rag_provider

from vera import (
    Claim,
    MonitorConfig,
    RunStopError,
    RunStore,
    create_monitor,
    parse_alert,
    read_windows,
    running_monitor,
)
from vera._monitor import is_sampled
from vera.judges import OfflineJudge

WHITEBOX = "the monitor's own parts; the viewer's own parts"

DOC = ["Paris is the capital of France."]
FAITHFUL = "Paris is the capital of France."
UNFAITHFUL = "Paris is the capital of Germany."
QUICK = {"settle_seconds": 0.1, "flush_seconds": 0.1}


def _wait(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _results(history: Path) -> dict[str, dict[str, float | None]]:
    """Every stored result of every window: trace id -> scores."""
    store = RunStore(history, read_only=True)
    try:
        found: dict[str, dict[str, float | None]] = {}
        for run in store.list():
            for result in store.iter_results(run.id):
                assert result.id not in found, f"trace {result.id} stored twice"
                found[result.id] = dict(result.scores)
        return found
    finally:
        store.close()


def _hour_clock(monitor: Any) -> list[float]:
    """Set the monitor's clock a minute into an hour's window; the shift it adds to the real
    time, which the test moves on an hour to close the window (never while its traces are
    still being evaluated, as a window of seconds would)."""
    now = time.time()
    shift = [now - now % 3600 + 3600 + 60 - now]
    monitor.clock = lambda: time.time() + shift[0]
    return shift


def _emit(url: str, answers: list[str], **provider: Any) -> list[str]:
    service = provider.pop("service", "shop")
    tp = rag_provider(url, service=service, **provider)
    tracer = tp.get_tracer("shop")
    ids = [
        emit_rag_trace(
            tracer, query="Which city is the capital of France?", answer=a, documents=DOC
        )
        for a in answers
    ]
    tp.shutdown()
    return ids


@pytest.mark.parametrize(
    ("encoding", "gzipped"),
    [("protobuf", False), ("protobuf", True), ("json", False), ("json", True)],
)
def test_traces_from_the_sdk_exporter_are_evaluated_into_a_window(
    tmp_path: Path, encoding: str, gzipped: bool
) -> None:
    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(**QUICK), history=history)
    with running_monitor(monitor) as url:
        ids = _emit(url, [FAITHFUL, UNFAITHFUL], encoding=encoding, gzipped=gzipped)
        _wait(lambda: len(_results(history)) == 2, "two results")
    results = _results(history)
    assert results[ids[0]]["faithfulness"] == 1.0
    assert results[ids[1]]["faithfulness"] == 0.0
    [window] = read_windows(history)
    assert window.counts["spans"] == 6
    assert window.counts["kept"] == 2
    assert window.evaluated == 2
    assert window.monitor == "monitor"


def test_a_bad_body_is_answered_400_and_nothing_is_counted_as_evaluated(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    monitor = create_monitor(MonitorConfig(**QUICK), history=tmp_path / "runs.sqlite")
    with running_monitor(monitor) as url:
        for body, kind in ((b"not protobuf", "application/x-protobuf"), (b"{", "application/json")):
            request = urllib.request.Request(url, data=body, headers={"Content-Type": kind})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 400
        request = urllib.request.Request(url, data=b"x", headers={"Content-Type": "text/plain"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert b"application/x-protobuf" in refused.value.read()
    assert monitor.status()["counts"].get("kept", 0) == 0


def test_sampling_keeps_the_traces_its_rate_names_and_counts_the_rest(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(sample_rate=0.5, **QUICK), history=history)
    with running_monitor(monitor) as url:
        ids = _emit(url, [FAITHFUL] * 24)
        _wait(lambda: monitor.status()["counts"].get("traces", 0) == 24, "24 traces decided")
        expected = {t for t in ids if is_sampled(t, 0.5)}
        _wait(lambda: set(_results(history)) == expected, "the sampled traces evaluated")
    assert 0 < len(expected) < 24  # both outcomes happened, so the rate was applied
    counts = monitor.status()["counts"]
    assert counts["not_sampled"] == 24 - len(expected)


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        ((("service", "shop"),), {"shop"}),
        ((("service", "shop"), ("service", "blog")), {"shop", "blog"}),
        ((("route", "/ask"),), {"shop", "blog"}),
        ((("route", "/other"),), set()),
        ((("model", "gpt-4o-mini"), ("service", "blog")), {"blog"}),
    ],
)
def test_filters_keep_only_matching_traces(
    tmp_path: Path, filters: tuple[tuple[str, str], ...], kept: set[str]
) -> None:
    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(filters=filters, **QUICK), history=history)
    with running_monitor(monitor) as url:
        by_service = {s: _emit(url, [FAITHFUL], service=s)[0] for s in ("shop", "blog")}
        _wait(lambda: monitor.status()["counts"].get("traces", 0) == 2, "both traces decided")
        expected = {by_service[s] for s in kept}
        _wait(lambda: set(_results(history)) == expected, "the matching traces evaluated")
    assert monitor.status()["counts"].get("filtered", 0) == 2 - len(kept)


class _GatedJudge(OfflineJudge):
    """The offline judge, held at each claim extraction until `gate` opens."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        await asyncio.to_thread(self.gate.wait)
        return await super().extract_claims(response, query=query)


def test_a_full_queue_drops_traces_and_counts_them_without_blocking(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    gate = threading.Event()
    config = MonitorConfig(queue_size=2, concurrency=1, **QUICK)
    monitor = create_monitor(config, history=history, judge=_GatedJudge(gate))
    with running_monitor(monitor) as url:
        # Sent and answered while the judge is held: had the receiver waited on it, the
        # exporter's requests would time out and the traces never be decided.
        _emit(url, [FAITHFUL] * 8)
        _wait(lambda: monitor.status()["counts"].get("traces", 0) == 8, "8 traces decided")
        held = monitor.status()["counts"]
        gate.set()
        _wait(lambda: monitor.status()["queued"] == 0, "the queue drained")
        _wait(lambda: len(_results(history)) == held["kept"], "the kept traces evaluated")
    # Two wait in the queue, and one in the judge if it took one before the rest came.
    assert held["kept"] in (2, 3)
    assert held["dropped"] == 8 - held["kept"]
    [window] = read_windows(history)
    assert window.counts["dropped"] == held["dropped"]
    assert window.evaluated == held["kept"]


def test_the_intake_answers_rejected_spans_when_full(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    emit_rag_trace(provider.get_tracer("t"), query="q", answer=FAITHFUL, documents=DOC)
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    config = MonitorConfig(intake_size=1, **QUICK)
    monitor = create_monitor(config, history=tmp_path / "runs.sqlite")  # not started
    assert monitor.receive(body, "application/x-protobuf").rejected == 0
    refused = monitor.receive(body, "application/x-protobuf")
    assert (refused.status, refused.rejected) == (200, 3)
    assert monitor.status()["counts"]["dropped"] == 1


def test_the_budget_caps_evaluations_an_hour_and_counts_the_rest(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(budget_per_hour=2, **QUICK), history=history)
    with running_monitor(monitor) as url:
        _emit(url, [FAITHFUL] * 5)
        _wait(lambda: monitor.status()["counts"].get("over_budget", 0) == 3, "three over budget")
    assert len(_results(history)) == 2


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: ClassVar[list[dict[str, Any]]] = []
    handler = type("Hook", (_Hook,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()
    server.server_close()


def test_a_window_closes_into_a_finished_run_and_its_alert_is_printed_stored_and_posted(
    tmp_path: Path, webhook: tuple[str, list[dict[str, Any]]]
) -> None:
    url_hook, received = webhook
    history = tmp_path / "runs.sqlite"
    lines: list[str] = []
    config = MonitorConfig(alerts=(parse_alert("faithfulness<0.9"),), webhook=url_hook, **QUICK)
    monitor = create_monitor(config, history=history)
    monitor.echo = lines.append
    shift = _hour_clock(monitor)
    with running_monitor(monitor) as url:
        ids = _emit(url, [FAITHFUL, UNFAITHFUL])
        _wait(lambda: len(_results(history)) == 2, "two results")
        assert not received  # the window is open until the clock says otherwise
        shift[0] += 3600
        _wait(lambda: bool(received), "the webhook called", timeout=20)
        # The webhook is posted as the window closes; its closing is stored just after.
        _wait(
            lambda: any(w.closed for w in read_windows(history) if w.evaluated),
            "the window stored as closed",
            timeout=20,
        )
    windows = [w for w in read_windows(history) if w.evaluated]
    [window] = windows
    assert window.closed
    [alert] = window.alerts
    assert alert.rule == "faithfulness<0.9"
    assert alert.mean == pytest.approx(0.5)
    assert alert.webhook == "sent: HTTP 204"
    assert any(line.startswith("ALERT ") and "faithfulness is 0.500" in line for line in lines)
    assert received[0]["run_id"] == window.run_id
    assert received[0]["alerts"][0]["metric"] == "faithfulness"
    store = RunStore(history, read_only=True)
    report = store.report(window.run_id)  # a finished run, as `vera runs` and compare read it
    assert report.metrics["faithfulness"] == pytest.approx(0.5)
    assert {s.id for s in report.samples} == set(ids)
    store.close()
    assert monitor.alerted


def test_a_window_that_evaluated_nothing_raises_its_alert(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(window_seconds=1, alerts=(parse_alert("faithfulness<0.9"),), **QUICK)
    monitor = create_monitor(config, history=history)
    monitor.echo = lambda line: None
    with running_monitor(monitor):
        _wait(lambda: any(w.alerts for w in read_windows(history)), "an alert", timeout=20)
    alerted = next(w for w in read_windows(history) if w.alerts)
    assert alerted.alerts[0].mean is None
    assert "scored no trace" in alerted.alerts[0].message


def test_a_trace_sent_twice_is_evaluated_once(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace_id = emit_rag_trace(provider.get_tracer("t"), query="q", answer=FAITHFUL, documents=DOC)
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    history = tmp_path / "runs.sqlite"
    for _ in range(2):  # two monitors one after the other: a restart
        monitor = create_monitor(MonitorConfig(**QUICK), history=history)
        with running_monitor(monitor):
            monitor.receive(body, "application/x-protobuf")
            _wait(lambda m=monitor: m.status()["counts"].get("traces", 0) == 1, "decided")
            _wait(lambda m=monitor: m.status()["queued"] == 0, "evaluated")
    assert list(_results(history)) == [trace_id]
    assert monitor.status()["counts"]["duplicates"] == 1


def test_the_view_shows_windows_live_with_trend_counts_and_alerts(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from vera import create_app
    from vera._viewer import LIVE_SCRIPT

    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(alerts=(parse_alert("faithfulness<0.9"),), **QUICK)
    monitor = create_monitor(config, history=history)
    monitor.echo = lambda line: None
    shift = _hour_clock(monitor)
    with running_monitor(monitor) as url:
        _emit(url, [FAITHFUL, UNFAITHFUL])
        _wait(lambda: len(_results(history)) == 2, "two results")
        assert not any(w.alerts for w in read_windows(history))
        shift[0] += 3600
        _wait(lambda: any(w.alerts for w in read_windows(history)), "an alert", timeout=20)
        _emit(url, [FAITHFUL])  # into the next window, open
        _wait(lambda: len(_results(history)) == 3, "three results")
        client = TestClient(create_app(history))
        page = client.get("/monitor")
        part = client.get("/monitor?part=windows")
    assert page.status_code == 200
    from vera.render._html import csp_hash

    assert csp_hash(LIVE_SCRIPT) in page.headers["content-security-policy"]
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert f"<script>{LIVE_SCRIPT}</script>" in page.text
    closed = next(w for w in read_windows(history) if w.alerts)
    for body in (page.text, part.text):
        assert f'<tr data-window="{closed.run_id}" data-closed="yes">' in body
        assert 'figure class="trend" data-metric="faithfulness"' in body
        assert f'<circle class="mean" data-window="{closed.run_id}"' in body
        assert "faithfulness is 0.500 (faithfulness&lt;0.9)" in body
        assert 'data-closed="no"' in body  # the open window, read from its results so far
        # Each window's answer verdicts: the unfaithful answer of the closed one, none yet in
        # the open one's faithful answer.
        assert 'data-unfaithful="1">1 of 2</td>' in body
        assert 'data-unfaithful="0">0 of 1</td>' in body
    assert "<script>" not in part.text


class _RejectedKeyJudge(OfflineJudge):
    """A judge whose provider refused the key: every evaluation stops the run."""

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        raise RunStopError("the provider rejected the API key (HTTP 401)")


class _WhereJudge(OfflineJudge):
    """A judge that stops the run saying which process it ran in."""

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        raise RunStopError(f"judged in process {os.getpid()}")


@pytest.mark.parametrize("workers", [1, 0])
def test_the_judge_runs_in_its_own_process_unless_workers_is_0(
    tmp_path: Path, workers: int
) -> None:
    stopped = threading.Event()
    config = MonitorConfig(workers=workers, **QUICK)
    monitor = create_monitor(config, history=tmp_path / "runs.sqlite", judge=_WhereJudge())
    monitor.echo = lambda _: None
    monitor.on_fatal = stopped.set
    with running_monitor(monitor) as url:
        _emit(url, [FAITHFUL])
        assert stopped.wait(30)
    # The judge's exception came back across the process boundary as itself.
    assert isinstance(monitor.fatal, RunStopError)
    where = int(str(monitor.fatal).rsplit(" ", 1)[1])
    assert (where != os.getpid()) if workers else (where == os.getpid())


class _UncopyableJudge(OfflineJudge):
    """A judge holding what cannot be pickled (as a client with a lock would)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


def test_a_judge_that_cannot_be_copied_evaluates_beside_the_receiver_and_says_so(
    tmp_path: Path,
) -> None:
    history = tmp_path / "runs.sqlite"
    lines: list[str] = []
    monitor = create_monitor(MonitorConfig(**QUICK), history=history, judge=_UncopyableJudge())
    monitor.echo = lines.append
    with running_monitor(monitor) as url:
        [trace] = _emit(url, [UNFAITHFUL])
        _wait(lambda: trace in _results(history), "the trace evaluated")
    assert _results(history)[trace]["faithfulness"] == 0.0
    assert any("the judge cannot run in its own process" in line for line in lines), lines


def test_a_stopped_judge_stops_the_monitor_and_keeps_the_trace_in_the_spool(
    tmp_path: Path,
) -> None:
    history = tmp_path / "runs.sqlite"
    lines: list[str] = []
    stopped = threading.Event()
    config = MonitorConfig(spool=tmp_path / "spool", **QUICK)
    monitor = create_monitor(config, history=history, judge=_RejectedKeyJudge())
    monitor.echo = lines.append
    monitor.on_fatal = stopped.set
    with running_monitor(monitor) as url:
        _emit(url, [FAITHFUL])
        assert stopped.wait(30)
    assert isinstance(monitor.fatal, RunStopError)
    assert any("evaluations stopped: the provider rejected the API key" in line for line in lines)
    assert _results(history) == {}
    assert list((tmp_path / "spool").glob("*.pb"))  # evaluated after a restart, not lost


def test_with_a_token_only_requests_that_carry_it_are_read(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    token = "s3cret-token-of-24-chars"
    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(**QUICK), history=history)
    with running_monitor(monitor, token=token) as url:
        for headers in ({}, {"Authorization": "Bearer wrong-token-wrong-token"}):
            request = urllib.request.Request(
                url, data=b"", headers={"Content-Type": "application/json", **headers}
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
        provider = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=url, headers={"Authorization": f"Bearer {token}"})
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace_id = emit_rag_trace(
            provider.get_tracer("t"), query="q", answer=FAITHFUL, documents=DOC
        )
        provider.shutdown()
        _wait(lambda: list(_results(history)) == [trace_id], "the trace with the token")


def test_a_body_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    import http.client
    from urllib.parse import urlsplit

    from vera._monitor import MAX_BODY_BYTES

    monitor = create_monitor(MonitorConfig(**QUICK), history=tmp_path / "runs.sqlite")
    with running_monitor(monitor) as url:
        where = urlsplit(url)
        connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
        connection.putrequest("POST", where.path)
        connection.putheader("Content-Type", "application/x-protobuf")
        connection.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
        connection.endheaders()  # the body is never sent: the answer comes first
        answer = connection.getresponse()
        assert answer.status == 413
        connection.close()


def test_a_failure_behind_the_receiver_stops_the_monitor_loudly(tmp_path: Path) -> None:
    from vera._monitor import MonitorHistory

    class _Broken(MonitorHistory):
        def add_counts(self, run_id: str, deltas: Any) -> None:
            raise RuntimeError("the counts cannot be written")

    lines: list[str] = []
    stopped = threading.Event()
    monitor = create_monitor(MonitorConfig(**QUICK), history=tmp_path / "runs.sqlite")
    monitor.history = _Broken(tmp_path / "runs.sqlite")
    monitor.echo = lines.append
    monitor.on_fatal = stopped.set
    with running_monitor(monitor) as url:
        _emit(url, [FAITHFUL])
        assert stopped.wait(30)
    assert monitor.status()["stopped"] == "the counts cannot be written"
    assert "vera monitor: evaluations stopped: RuntimeError: the counts cannot be written" in lines
