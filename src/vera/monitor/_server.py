"""The receiver's HTTP side: `POST /v1/traces` (OTLP/HTTP) and `GET /v1/status`, served by
uvicorn, in the foreground (`serve_monitor`, what `vera monitor` does) or in a thread
(`running_monitor`, for tests and the load benchmark)."""

from __future__ import annotations

import hmac
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vera.monitor._decode import MAX_BODY_BYTES, PROTOBUF
from vera.monitor._service import Monitor, Receipt
from vera.types._errors import ConfigError

__all__ = ["MIN_TOKEN_LENGTH", "check_access", "receiver_app", "running_monitor", "serve_monitor"]

MIN_TOKEN_LENGTH = 16

_SWITCH_INTERVAL = 0.0005


def _answer(receipt: Receipt, content_type: str) -> Response:
    protobuf = content_type.split(";", 1)[0].strip().lower() == PROTOBUF
    if receipt.status != 200:
        return Response(receipt.message, status_code=receipt.status, media_type="text/plain")
    if protobuf:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as pb

        answer = pb.ExportTraceServiceResponse()
        if receipt.rejected:
            answer.partial_success.rejected_spans = receipt.rejected
            answer.partial_success.error_message = receipt.message
        return Response(answer.SerializeToString(), media_type=PROTOBUF)
    body: dict[str, object] = {}
    if receipt.rejected:
        body["partialSuccess"] = {
            "rejectedSpans": str(receipt.rejected),
            "errorMessage": receipt.message,
        }
    return Response(json.dumps(body), media_type="application/json")


async def _body(request: Request) -> bytes | None:
    """The body, or None once it passes `MAX_BODY_BYTES` (read no further: a client cannot
    make the receiver hold more than that, whatever its Content-Length says)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def check_access(host: str, token: str | None) -> None:
    """Refuse (`ConfigError`) to listen off this machine without a token, or with a weak one:
    anyone who reaches the port could otherwise spend the judge's budget on traces of theirs."""
    if token is not None and (len(token) < MIN_TOKEN_LENGTH or token != token.strip()):
        raise ConfigError(
            f"--token must be at least {MIN_TOKEN_LENGTH} characters without spaces around them"
        )
    if token is None and not _loopback(host):
        raise ConfigError(
            f"--host {host} receives traces from other machines: give --token TOKEN (or "
            "VERA_MONITOR_TOKEN), and have the exporter send it: "
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20TOKEN"
        )


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _authorised(request: Request, token: bytes | None) -> bool:
    if token is None:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token)


def receiver_app(monitor: Monitor, *, token: str | None = None) -> Starlette:
    """The ASGI app an application's OTLP/HTTP exporter sends its traces to; with `token`,
    each request must carry `Authorization: Bearer TOKEN` (else 401, nothing read)."""
    expected = token.encode() if token is not None else None

    async def traces(request: Request) -> Response:
        started = time.perf_counter()
        if not _authorised(request, expected):
            return Response(
                "send Authorization: Bearer TOKEN (the monitor's --token)",
                status_code=401,
                media_type="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
        content_type = request.headers.get("content-type", "")
        body = await _body(request)
        if body is None:
            monitor.answered(time.perf_counter() - started)
            return Response(
                f"the body is over {MAX_BODY_BYTES} bytes", status_code=413, media_type="text/plain"
            )
        receipt = monitor.receive(body, content_type, request.headers.get("content-encoding", ""))
        answer = _answer(receipt, content_type)
        monitor.answered(time.perf_counter() - started)
        return answer

    async def status(request: Request) -> Response:
        if not _authorised(request, expected):
            return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return JSONResponse(monitor.status())

    return Starlette(
        routes=[
            Route("/v1/traces", traces, methods=["POST"]),
            Route("/v1/status", status, methods=["GET"]),
        ]
    )


def _server(monitor: Monitor, host: str, port: int, token: str | None) -> object:
    import uvicorn

    check_access(host, token)
    config = uvicorn.Config(
        receiver_app(monitor, token=token),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
    )
    return uvicorn.Server(config)


class _Stopped(Exception):
    """Ctrl-C or SIGTERM: a normal end of the monitor."""


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """uvicorn handles SIGINT and SIGTERM itself (a graceful shutdown), then raises each again
    for the handler it found: ours turns it into `_Stopped`, so the monitor still finishes
    (its counts written) and picks its exit code, instead of dying of the signal."""

    def stop(signum: int, frame: object) -> None:
        raise _Stopped

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve_monitor(
    monitor: Monitor,
    *,
    host: str,
    port: int,
    token: str | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> int:
    """Receive until interrupted (Ctrl-C, SIGTERM) or until evaluations stop; the exit code:
    3 when they stopped (`monitor.fatal`), 1 when a window raised an alert, else 0."""
    import uvicorn

    server = _server(monitor, host, port, token)
    assert isinstance(server, uvicorn.Server)

    def fatal() -> None:
        server.should_exit = True

    monitor.on_fatal = fatal
    # The receiver shares the interpreter with the assembling and evaluating threads; a short
    # switch interval lets it answer within milliseconds while they are busy.
    sys.setswitchinterval(_SWITCH_INTERVAL)
    monitor.start()
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/v1/traces")
    try:
        with _stopped_by_signals():
            server.run()
    except _Stopped:
        pass
    finally:
        monitor.stop()
    if monitor.fatal is not None:
        return 3
    return 1 if monitor.alerted else 0


@contextmanager
def running_monitor(
    monitor: Monitor, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None
) -> Iterator[str]:
    """The monitor started and served in a thread; its `/v1/traces` URL. Stopped on exit."""
    import uvicorn

    server = _server(monitor, host, port, token)
    assert isinstance(server, uvicorn.Server)
    monitor.start()
    thread = threading.Thread(target=server.run, name="vera-monitor-server", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the monitor's server did not start")
            thread.join(0.01)
        bound = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{host}:{bound}/v1/traces"
    finally:
        server.should_exit = True
        thread.join(10)
        monitor.stop()
