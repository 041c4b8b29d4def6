"""`vera monitor` as a service, against what issue 39 found: one bad request stopped every
evaluation (and every restart with `--spool`), a failed spool write kept its bytes charged
and answered a traceback, slow clients held every connection, and the loopback check took
`127.example.com` for this machine.

The monitor is the real one (offline judge, real SQLite history, real spool folder), fed
OTLP bodies made by the OpenTelemetry SDK's own encoder or written out as OTLP/JSON.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest

from tests.support.extras import without

pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
pytest.importorskip("opentelemetry.proto", reason=without("monitor"))

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.otel_traces import emit_rag_trace
from vera import Claim, MonitorConfig, RunStore, create_monitor
from vera._monitor import Monitor
from vera.judges import OfflineJudge

WHITEBOX = "the monitor's own parts"

DOC = ["Paris is the capital of France."]
QUICK = {"settle_seconds": 0.1, "flush_seconds": 0.1}
PROTOBUF = "application/x-protobuf"


def _wait(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


def _good_body() -> tuple[str, bytes]:
    """One whole RAG trace (3 spans) as the SDK's protobuf exporter sends it."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace_id = emit_rag_trace(provider.get_tracer("t"), query="q", answer=DOC[0], documents=DOC)
    return trace_id, encode_spans(memory.get_finished_spans()).SerializeToString()


_POISON = "test.poison"
"""A span attribute key at which the `poisoned` fixture's reader raises."""


def _poisoned_body(n: int) -> bytes:
    """OTLP/JSON that is valid as a request but whose reading raises: the fuzz of issue 39
    found values the reader did not expect (a kvlistValue that is a list); the JSON reader
    now refuses those as invalid requests (test_hostile_json), so a fault the reader does
    not foresee is injected here by the `poisoned` fixture, keyed on this attribute."""
    span = {
        "traceId": f"{n + 1:032x}",
        "spanId": f"{n + 1:016x}",
        "name": "rag",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": _POISON, "value": {"stringValue": "x"}}],
    }
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(request).encode()


@pytest.fixture
def poisoned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The monitor's span reader raises AttributeError on a request carrying `_POISON`, as
    it once did on unexpected values: an explicit fault, to test the failure path."""
    from vera._monitor import request_spans_of

    def reader(request: Any) -> Any:
        if _POISON in json.dumps(request, default=str):
            raise AttributeError("'list' object has no attribute 'get'")
        return request_spans_of(request)

    # Where the monitor's service looks the reader up (a fault injected into the engine).
    monkeypatch.setattr("vera._monitor._service.request_spans_of", reader)


def _stored(history: Path) -> set[str]:
    store = RunStore(history, read_only=True)
    try:
        return {r.id for run in store.list() for r in store.iter_results(run.id)}
    finally:
        store.close()


def _monitor(tmp_path: Path, lines: list[str], **config: Any) -> Monitor:
    monitor = create_monitor(
        MonitorConfig(spool=tmp_path / "spool", **{**QUICK, **config}),
        history=tmp_path / "runs.sqlite",
    )
    monitor.echo = lines.append
    return monitor


def test_poisoned_requests_are_counted_said_once_and_the_monitor_goes_on(
    tmp_path: Path, poisoned: None
) -> None:
    lines: list[str] = []
    monitor = _monitor(tmp_path, lines)
    monitor.start()
    try:
        for n in range(5):
            assert monitor.receive(_poisoned_body(n), "application/json").status == 200
        trace_id, good = _good_body()
        assert monitor.receive(good, PROTOBUF).status == 200
        _wait(lambda: trace_id in _stored(tmp_path / "runs.sqlite"), "the good trace evaluated")
        assert monitor.fatal is None
        status = monitor.status()
    finally:
        monitor.stop()
    assert status["counts"]["failed"] == 5
    assert status["failures"] == {"reading: AttributeError": 5}
    said = [line for line in lines if "failed (AttributeError" in line]
    assert len(said) == 1, lines
    assert not any("evaluations stopped" in line for line in lines)
    # Each is kept for inspection, with why, never read again on start.
    quarantine = tmp_path / "spool" / "quarantine"
    assert len(list(quarantine.glob("*.json"))) == 5
    assert "AttributeError" in next(quarantine.glob("*.reason")).read_text()
    assert status["quarantined"] == 5


def test_a_poisoned_spool_file_is_set_aside_on_restart_and_the_rest_evaluated(
    tmp_path: Path, poisoned: None
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    # What a monitor killed before reading them left: a poisoned request, then a good one.
    (spool / "000000000001.json").write_bytes(_poisoned_body(0))
    trace_id, good = _good_body()
    (spool / "000000000002.pb").write_bytes(good)
    for _ in range(2):  # the second start must not meet the poisoned file again
        lines: list[str] = []
        monitor = _monitor(tmp_path, lines)
        monitor.start()
        try:
            _wait(lambda m=monitor: m.status()["spooled"] == 0, "the spool read back")
            _wait(lambda: trace_id in _stored(tmp_path / "runs.sqlite"), "the good trace")
            assert monitor.fatal is None
        finally:
            monitor.stop()
    assert not list(spool.glob("*.json")) and not list(spool.glob("*.pb"))
    assert [p.name for p in (spool / "quarantine").glob("*.json")] == ["000000000001.json"]
    assert monitor.status()["counts"].get("failed", 0) == 0  # nothing left to set aside
    assert _stored(tmp_path / "runs.sqlite") == {trace_id}


def test_the_quarantine_keeps_only_the_newest_files(tmp_path: Path, poisoned: None) -> None:
    from vera._monitor import QUARANTINE_KEPT

    lines: list[str] = []
    monitor = _monitor(tmp_path, lines)
    monitor.start()
    try:
        for n in range(QUARANTINE_KEPT + 3):
            monitor.receive(_poisoned_body(n), "application/json")
        _wait(
            lambda: monitor.status()["counts"].get("failed", 0) == QUARANTINE_KEPT + 3,
            "every request read",
        )
    finally:
        monitor.stop()
    kept = sorted(p.name for p in (tmp_path / "spool" / "quarantine").glob("*.json"))
    assert len(kept) == QUARANTINE_KEPT
    assert kept[-1] == f"{QUARANTINE_KEPT + 3:012d}.json"  # the newest stay


def test_a_failed_spool_write_releases_its_bytes_answers_503_and_leaves_no_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines: list[str] = []
    monitor = _monitor(tmp_path, lines)  # not started: the intake keeps what it accepts
    _, good = _good_body()
    real_write = Path.write_bytes

    def full_disk(path: Path, data: Any) -> int:
        # A disk that fills up after some of the bytes went down, as ENOSPC does.
        if path.suffix == ".part":
            real_write(path, bytes(data)[:10])
            raise OSError(28, "No space left on device")
        return real_write(path, data)

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    for _ in range(4):
        refused = monitor.receive(good, PROTOBUF)
        assert refused.status == 503
        assert refused.message.startswith("vera monitor cannot keep the request in its spool")
        assert "Traceback" not in refused.message
    assert not list((tmp_path / "spool").glob("*.part"))
    assert monitor.status()["failures"] == {"spooling: OSError": 4}
    monkeypatch.undo()  # the disk freed: every byte of the intake is free again
    accepted = [monitor.receive(good, PROTOBUF) for _ in range(3)]
    assert [a.status for a in accepted] == [200, 200, 200]
    assert [a.rejected for a in accepted] == [0, 0, 0]
    assert monitor.status()["intake"] == 3


# Slow clients: a deadline on each request's head, a cap on connections, summarised logs.


def _half_heads(url: str, count: int) -> list[socket.socket]:
    """`count` connections that each send half a request head and wait (slowloris)."""
    where = urlsplit(url)
    held = []
    for _ in range(count):
        sock = socket.create_connection((where.hostname or "", where.port or 0), timeout=10)
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: monitor\r\nContent-Type: applic")
        held.append(sock)
    return held


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed this connection (it reads as the end, or a reset)."""
    sock.settimeout(0)
    try:
        return sock.recv(1024) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def test_half_request_heads_are_cut_off_and_a_real_exporter_is_still_served(
    tmp_path: Path,
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from vera import running_monitor
    from vera._monitor import ServerLimits

    history = tmp_path / "runs.sqlite"
    monitor = create_monitor(MonitorConfig(**QUICK), history=history)
    monitor.echo = lambda line: None
    limits = ServerLimits(header_timeout=1.5, max_connections=40)
    with running_monitor(monitor, limits=limits) as url:
        held = _half_heads(url, 100)
        try:
            time.sleep(0.3)
            # Past the cap, the oldest waiting connections were closed for the newer ones.
            assert sum(not _closed(s) for s in held) <= limits.max_connections
            provider = TracerProvider()
            exporter = OTLPSpanExporter(endpoint=url, timeout=5)
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            started = time.monotonic()
            trace_id = emit_rag_trace(
                provider.get_tracer("t"), query="q", answer=DOC[0], documents=DOC
            )
            provider.shutdown()
            _wait(lambda: trace_id in _stored(history), "the exporter's trace evaluated")
            assert time.monotonic() - started < limits.header_timeout + 5
            # After the head deadline, not one of them is left open.
            _wait(lambda: all(_closed(s) for s in held), "every half head closed", timeout=10)
        finally:
            for sock in held:
                sock.close()


def test_a_flood_of_bad_request_heads_logs_a_few_lines_not_one_each(tmp_path: Path) -> None:
    from vera import running_monitor

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    kept = Kept()
    logger = logging.getLogger("uvicorn.error")  # where uvicorn says each bad request
    monitor = create_monitor(MonitorConfig(**QUICK), history=tmp_path / "runs.sqlite")
    try:
        with running_monitor(monitor) as url:
            logger.addHandler(kept)  # once uvicorn has set its logging up
            where = urlsplit(url)
            for _ in range(60):
                with socket.create_connection((where.hostname or "", where.port or 0), 10) as s:
                    s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                    s.settimeout(10)
                    assert s.recv(1024).startswith(b"HTTP/1.1 400")  # each is answered
    finally:
        logger.removeHandler(kept)
    invalid = [line for line in kept.lines if "Invalid HTTP request" in line]
    assert 1 <= len(invalid) <= 5, len(invalid)


def test_vera_view_cuts_off_half_request_heads_too(tmp_path: Path) -> None:
    from tests.support.view_history import make_history
    from vera._monitor import ServerLimits

    history = make_history(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "vera", "view", "--no-browser", "--port", "0",
         "--history", str(history.path)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-3]
        held = _half_heads(url, 30)
        started = time.monotonic()
        _wait(lambda: all(_closed(s) for s in held), "every half head closed", timeout=30)
        waited = time.monotonic() - started
        assert ServerLimits().header_timeout - 1 <= waited <= ServerLimits().header_timeout + 5
        with urllib.request.urlopen(url, timeout=10) as page:  # still serving
            assert page.status == 200
    finally:
        process.terminate()
        process.wait(30)


# Smaller ones (item 8 of issue 39): loopback, webhooks, start-up failures, the view's cookie.


@pytest.mark.parametrize("host", ["127.example.com", "127.0.0.1.example.com", "0.0.0.0"])
def test_a_name_that_only_looks_like_loopback_needs_a_token(host: str) -> None:
    from vera import ConfigError
    from vera._monitor import check_access

    with pytest.raises(ConfigError, match=f"--host {host} receives traces from other machines"):
        check_access(host, None)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_addresses_and_localhost_need_no_token(host: str) -> None:
    from vera._monitor import check_access

    check_access(host, None)


def test_a_webhook_with_user_and_password_is_refused_at_start_without_echoing_them() -> None:
    from vera import ConfigError

    with pytest.raises(ConfigError, match="user name or password") as refused:
        MonitorConfig(webhook="https://alice:s3cret-pass@hooks.example.com/vera")
    assert "s3cret-pass" not in str(refused.value)


class _Redirecting(BaseHTTPRequestHandler):
    """A hook that answers 302 to another server (the second one counts what reaches it)."""

    target = ""
    reached: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        if self.target:
            self.send_response(302)
            self.send_header("Location", self.target)
            self.end_headers()
        else:
            type(self).reached.append(self.command)
            self.send_response(204)
            self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


def test_a_webhook_redirect_is_not_followed_and_is_recorded_as_failed() -> None:
    from vera._monitor import post_webhook

    elsewhere = ThreadingHTTPServer(("127.0.0.1", 0), type("Other", (_Redirecting,), {}))
    other_url = f"http://127.0.0.1:{elsewhere.server_address[1]}/stolen"
    hook = ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Hook", (_Redirecting,), {"target": other_url})
    )
    for server in (elsewhere, hook):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        answer = post_webhook(f"http://127.0.0.1:{hook.server_address[1]}/hook", {"a": 1})
    finally:
        for server in (elsewhere, hook):
            server.shutdown()
            server.server_close()
    assert answer == "failed: HTTP 302 (a redirect, not followed)"
    assert _Redirecting.reached == []  # nothing went on to the other host


def _vera_monitor(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vera", "monitor", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_port_in_use_exits_2_naming_it_before_saying_it_receives(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _vera_monitor(tmp_path, "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert f"vera monitor cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Receiving" not in done.stderr and "Traceback" not in done.stderr


def test_a_read_only_history_exits_2_naming_it_before_saying_it_receives(
    tmp_path: Path,
) -> None:
    history = tmp_path / "runs.sqlite"
    create_monitor(MonitorConfig(), history=history).history.close()
    history.chmod(0o444)
    immutable = False
    try:
        if os.access(history, os.W_OK) and shutil.which("chattr"):  # root: permissions no bar
            immutable = subprocess.run(["chattr", "+i", str(history)]).returncode == 0
        if not immutable and os.access(history, os.W_OK):
            pytest.skip("no way to make a file read-only here (root, without chattr)")
        done = _vera_monitor(tmp_path, "--port", "0", "--history", str(history))
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(history)], check=True)
        history.chmod(0o644)
    assert done.returncode == 2, done.stderr
    assert f"cannot write to the run history {history}" in done.stderr
    assert "Receiving" not in done.stderr and "Traceback" not in done.stderr


def test_the_view_cookie_is_a_session_id_never_the_token(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from tests.support.view_history import make_history
    from vera import create_app

    token = "a-test-token-0123456789"
    history = make_history(tmp_path)
    app = create_app(history.path, allowed_hosts=["view.test"], token=token)
    client = TestClient(app, base_url="http://view.test", follow_redirects=False)
    traded = client.get(f"/?token={token}")
    assert traded.status_code == 303
    [(name, value)] = client.cookies.items()
    assert token not in value and token not in traded.headers["set-cookie"]
    assert client.get("/").status_code == 200  # the session answers
    stolen = TestClient(app, base_url="http://view.test", cookies={name: token})
    assert stolen.get("/").status_code == 401  # the raw token is no cookie
    restarted = create_app(history.path, allowed_hosts=["view.test"], token=token)
    again = TestClient(restarted, base_url="http://view.test", cookies={name: value})
    assert again.get("/").status_code == 401  # a new view, a new id


# Memory bounded by bytes: open traces, and large bodies read and decoded off the event loop.


def _rootless_body(n: int, size: int) -> bytes:
    """One span of `size` bytes of text whose root span never comes (its own trace)."""
    span = {
        "traceId": f"{n + 1:032x}",
        "spanId": f"{n + 1:016x}",
        "parentSpanId": "00000000000000ff",
        "name": "llm",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [{"key": "output.value", "value": {"stringValue": "x" * size}}],
    }
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(request).encode()


def test_open_traces_are_bounded_by_bytes_and_a_whole_trace_still_gets_through(
    tmp_path: Path,
) -> None:
    from vera import running_monitor

    budget = 4 * 1024 * 1024
    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(max_open_bytes=budget, trace_timeout=600, **QUICK)
    monitor = create_monitor(config, history=history)
    monitor.echo = lambda line: None
    with running_monitor(monitor) as url:
        for n in range(8):  # 8 MiB of spans whose traces stay open for ten minutes
            request = urllib.request.Request(
                url,
                data=_rootless_body(n, 1024 * 1024),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 200
        _wait(lambda: monitor.status()["intake"] == 0, "every request assembled")
        status = monitor.status()
        assert status["open_bytes"] <= budget
        assert status["open_traces"] == 3  # 3 MiB and their overhead fit, the 4th does not
        assert status["counts"]["dropped"] == 5
        trace_id, good = _good_body()  # small traces fit beside them
        assert monitor.receive(good, PROTOBUF).status == 200
        _wait(lambda: trace_id in _stored(history), "the whole trace evaluated")


class _KillerJudge(OfflineJudge):
    """A judge whose process dies on one answer, as a native crash or the OOM killer would
    end it (a fake, explicit here: it exits its worker process)."""

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        if "poison" in response:
            os._exit(9)
        return await super().extract_claims(response, query=query)


def _trace_body(answer: str) -> tuple[str, bytes]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    trace_id = emit_rag_trace(provider.get_tracer("t"), query="q", answer=answer, documents=DOC)
    return trace_id, encode_spans(memory.get_finished_spans()).SerializeToString()


def test_a_trace_that_kills_the_judges_worker_is_counted_and_the_worker_started_again(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(spool=tmp_path / "spool", concurrency=1, **QUICK)
    monitor = create_monitor(config, history=history, judge=_KillerJudge())
    monitor.echo = lines.append
    monitor.start()
    try:
        poisoned, body = _trace_body("Paris is the capital of France. poison")
        assert monitor.receive(body, PROTOBUF).status == 200
        _wait(lambda: monitor.status()["counts"].get("failed", 0) == 1, "the trace failed")
        good, body = _trace_body(DOC[0])
        assert monitor.receive(body, PROTOBUF).status == 200
        _wait(lambda: good in _stored(history), "the next trace evaluated by a new worker")
        assert monitor.fatal is None
    finally:
        monitor.stop()
    assert poisoned not in _stored(history)
    assert monitor.status()["failures"] == {"evaluating: WorkerGone": 1}
    assert monitor.status()["spooled"] == 0  # settled: no restart meets it again
    assert sum("evaluating trace" in line for line in lines) == 1


def test_a_large_body_is_decoded_off_the_event_loop_and_a_small_one_on_it(
    tmp_path: Path,
) -> None:
    from vera import running_monitor
    from vera._monitor import Receipt

    monitor = create_monitor(MonitorConfig(**QUICK), history=tmp_path / "runs.sqlite")
    monitor.echo = lambda line: None
    threads: list[str] = []
    real_receive = monitor.receive

    def receive(body: bytes, content_type: str, encoding: str = "") -> Receipt:
        # Where the monitor decodes each body, noted beside the real work (an explicit spy).
        threads.append(threading.current_thread().name)
        return real_receive(body, content_type, encoding)

    monitor.receive = receive  # type: ignore[method-assign]
    _, small = _good_body()
    large = _rootless_body(0, 2 * 1024 * 1024)
    with running_monitor(monitor) as url:
        for body, kind in ((small, PROTOBUF), (large, "application/json")):
            request = urllib.request.Request(url, data=body, headers={"Content-Type": kind})
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 200
    assert threads[0] == "vera-monitor-server"  # the event loop's own thread
    assert threads[1] != "vera-monitor-server"
