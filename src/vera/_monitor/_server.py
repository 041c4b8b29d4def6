"""The receiver's HTTP side: `POST /v1/traces` (OTLP/HTTP) and `GET /v1/status`, served by
uvicorn, in the foreground (`serve_monitor`, what `vera monitor` does) or in a thread
(`running_monitor`, for tests and the load benchmark).

The server runs under `ServerLimits` (`vera._http_server`): a deadline on each request's head
and body, a cap on connections, repeated log lines summarised. A body is read in full before
it is decoded; a large one is read only within `DECODE_BYTES` of large bodies at once, and
decoded on a worker thread (a 30 MiB JSON body must not hold the event loop other exporters
are answered on)."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vera._http_server import ServerLimits, listen, server_config, summarised_logs
from vera._monitor._decode import MAX_BODY_BYTES, PROTOBUF
from vera._monitor._service import Monitor, Receipt, decoded_size
from vera._types._errors import ConfigError

MIN_TOKEN_LENGTH = 16
DECODE_BYTES = 64 * 1024 * 1024
"""Bytes of large request bodies being read, inflated and decoded at once, at most (two
32 MiB bodies, or one gzip body and what it may inflate to); the rest wait their turn,
holding only their connection."""
_DEFLATE_RATIO = 1032
"""The most a deflate stream inflates to, per byte of it (zlib's own bound)."""
_ON_THE_LOOP = 64 * 1024
"""Bodies up to this are decoded on the event loop: a thread's hand-over costs more."""

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
    """Whether every address `host` names is this machine's loopback (a name is resolved:
    `127.example.com` is a name like any other, wherever it points)."""
    name = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return False
    addresses = {str(info[4][0]).split("%", 1)[0] for info in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def _authorised(request: Request, token: bytes | None) -> bool:
    if token is None:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token)


class _ByteBudget:
    """Bytes handed out on one event loop, waited for when none are left."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._free = total
        self._changed: asyncio.Condition | None = None

    @contextlib.asynccontextmanager
    async def holding(self, size: int) -> AsyncIterator[None]:
        size = min(size, self.total)
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self._free >= size)
            self._free -= size
        try:
            yield
        finally:
            async with changed:
                self._free += size
                changed.notify_all()


def _cost(request: Request) -> int:
    """What reading and decoding the request's body may hold in memory (0: little enough to
    be done on the event loop): the body, what a gzip body may inflate to (known only once
    inflated: at most `_DEFLATE_RATIO` times its size, and `MAX_BODY_BYTES`), and what it
    holds once decoded (`decoded_size`). A body of unknown length is charged the most it may
    be. Past the budget's total it is charged the whole budget: one such at a time."""
    declared = request.headers.get("content-length", "")
    size = int(declared) if declared.isdigit() else MAX_BODY_BYTES
    encoding = request.headers.get("content-encoding", "").strip().lower()
    inflated = min(MAX_BODY_BYTES, size * _DEFLATE_RATIO) if encoding == "gzip" else 0
    if size + inflated <= _ON_THE_LOOP and encoding in ("", "identity", "gzip"):
        return 0
    kind = request.headers.get("content-type", "")
    return size + inflated + decoded_size(inflated or size, kind)


async def _receipt(monitor: Monitor, request: Request, budget: _ByteBudget) -> Receipt | None:
    """The request read and handed to `monitor.receive` (None: its body is over the limit).
    A small body is read and decoded on the event loop; a large one waits for its bytes in
    the budget, then is decoded on a worker thread, so other exporters are answered
    meanwhile. A failure of the monitor's own is a short 500, said once per kind."""
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None  # answered at once, unread
    cost = _cost(request)
    try:
        if cost == 0:
            body = await _body(request)
            return None if body is None else monitor.receive(body, content_type, encoding)
        async with budget.holding(cost):
            body = await _body(request)
            if body is None:
                return None
            return await anyio.to_thread.run_sync(monitor.receive, body, content_type, encoding)
    except ClientDisconnect:
        raise
    except Exception as exc:  # the receiver's own defect: this request fails, not the server
        monitor.failures.add("receiving", "a request", exc)
        return Receipt(500, message="vera monitor could not take this request; see its log")


def receiver_app(monitor: Monitor, *, token: str | None = None) -> Starlette:
    """The ASGI app an application's OTLP/HTTP exporter sends its traces to; with `token`,
    each request must carry `Authorization: Bearer TOKEN` (else 401, nothing read)."""
    expected = token.encode() if token is not None else None
    budget = _ByteBudget(DECODE_BYTES)

    async def traces(request: Request) -> Response:
        started = time.perf_counter()
        if not _authorised(request, expected):
            return Response(
                "send Authorization: Bearer TOKEN (the monitor's --token)",
                status_code=401,
                media_type="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
        try:
            receipt = await _receipt(monitor, request, budget)
        except ClientDisconnect:  # gone before its body came (or cut off): nobody to answer
            return Response(status_code=400)
        if receipt is None:
            monitor.answered(time.perf_counter() - started)
            return Response(
                f"the body is over {MAX_BODY_BYTES} bytes", status_code=413, media_type="text/plain"
            )
        answer = _answer(receipt, request.headers.get("content-type", ""))
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


def _server(
    monitor: Monitor, host: str, token: str | None, limits: ServerLimits | None
) -> uvicorn.Server:
    check_access(host, token)
    config = server_config(
        receiver_app(monitor, token=token),
        limits or ServerLimits(),
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
    limits: ServerLimits | None = None,
) -> int:
    """Receive until interrupted (Ctrl-C, SIGTERM) or until evaluations stop; the exit code:
    3 when they stopped (`monitor.fatal`), 1 when a window raised an alert, else 0. What
    prevents the start (a port in use, a history that cannot be written) raises a
    `VeraError` before `on_ready` is called: nothing is said to be received."""
    server = _server(monitor, host, token, limits)
    sock = listen(host, port, "vera monitor")

    def fatal() -> None:
        server.should_exit = True

    monitor.on_fatal = fatal
    # The receiver shares the interpreter with the assembling and evaluating threads; a short
    # switch interval lets it answer within milliseconds while they are busy.
    sys.setswitchinterval(_SWITCH_INTERVAL)
    try:
        monitor.start()
    except BaseException:
        sock.close()
        raise
    if on_ready is not None:
        on_ready(f"http://{host}:{sock.getsockname()[1]}/v1/traces")
    try:
        with _stopped_by_signals(), summarised_logs():
            server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        monitor.stop()
    if monitor.fatal is not None:
        return 3
    return 1 if monitor.alerted else 0


@contextmanager
def running_monitor(
    monitor: Monitor,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    limits: ServerLimits | None = None,
) -> Iterator[str]:
    """The monitor started and served in a thread; its `/v1/traces` URL. Stopped on exit."""
    server = _server(monitor, host, token, limits)
    sock = listen(host, port, "vera monitor")
    try:
        monitor.start()
    except BaseException:
        sock.close()
        raise
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="vera-monitor-server", daemon=True
    )
    with summarised_logs():
        thread.start()
        try:
            while not server.started:
                if not thread.is_alive():
                    raise RuntimeError("the monitor's server did not start")
                thread.join(0.01)
            yield f"http://{host}:{sock.getsockname()[1]}/v1/traces"
        finally:
            server.should_exit = True
            thread.join(10)
            monitor.stop()
