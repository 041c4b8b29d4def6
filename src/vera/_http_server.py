"""What `vera monitor` and `vera view` both need of their uvicorn server to run as a service:
the socket bound before anything is said (a port in use is a `ConfigError`, exit 2), slow
clients cut off, connections capped, and repeated log lines summarised.

    limits = ServerLimits()
    sock = listen("127.0.0.1", 4318, "vera monitor")
    config = server_config(app, limits, log_level="warning")
    with summarised_logs():
        uvicorn.Server(config).run(sockets=[sock])

uvicorn closes an idle keep-alive connection, but not one that sends half a request head and
waits: 1,100 of those held every descriptor of a 1,024-descriptor process and starved real
exporters (issue 39). `GuardedH11Protocol` gives each request `header_timeout` seconds for its
head and `body_timeout` for its body, then closes the connection; past `max_connections` the
oldest connection still waiting for its head (or idle between requests) is closed for the new
one, so a client that sends its request at once is always read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from vera._types._errors import ConfigError

_DESCRIPTORS_WANTED = 8192
_LOG_WINDOW = 60.0
_LOG_LINES_PER_WINDOW = 5
_LOG_KINDS_KEPT = 1000


def default_max_connections() -> int:
    """Half the process's descriptors (raised to its hard limit first, up to 8,192): the
    rest stay free for the history, the spool and the judge's worker."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _DESCRIPTORS_WANTED if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    usable = _DESCRIPTORS_WANTED if soft == resource.RLIM_INFINITY else soft
    return max(32, min(4096, usable // 2))


@dataclass(frozen=True)
class ServerLimits:
    """How long a client may take over its request, and how many connections are kept."""

    header_timeout: float = 10.0
    """Seconds from a connection's first byte (or its last answer) to a whole request head."""
    body_timeout: float = 60.0
    """Seconds from the head to the whole body (32 MiB at 1 MiB/s fits twice)."""
    keep_alive: int = 5
    """Seconds an idle connection is kept between requests (uvicorn's own timer)."""
    max_head_bytes: int = 16 * 1024
    """A request head over this is answered 400 (h11's bound on what it buffers)."""
    max_connections: int = field(default_factory=default_max_connections)
    """Open connections at most; beyond, the oldest waiting one is closed for the new one."""

    def __post_init__(self) -> None:
        if min(self.header_timeout, self.body_timeout, self.keep_alive) <= 0:
            raise ConfigError("the server's timeouts must be above 0 seconds")
        if self.max_connections < 2 or self.max_head_bytes < 1024:
            raise ConfigError("the server needs 2 connections or more and 1 KiB of head")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's head and body, and the
    oldest waiting connection closed when a new one would pass `max_connections`.
    `server_config` makes a subclass per server, with its own limits and registry."""

    limits: ClassVar[ServerLimits] = ServerLimits(max_connections=2)
    waiting: ClassVar[OrderedDict[GuardedH11Protocol, None]] = OrderedDict()
    """Connections waiting for a request head (or idle between requests), oldest first."""
    cut_off: ClassVar[list[int]] = [0]
    """Connections closed by a deadline or for a newer one (one counter per server)."""

    _deadline: asyncio.TimerHandle | None = None
    _phase = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._enter("head", self.limits.header_timeout)
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            # Idle until the next request: uvicorn's keep-alive timer closes it; waiting, so
            # a newer connection may take its place.
            self._disarm()
            self._phase = "idle"
            self.waiting[self] = None
            self.waiting.move_to_end(self)
            self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.waiting.pop(self, None)
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Arm the deadline the request's state calls for, after bytes came in."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._phase == "idle" and self.conn.trailing_data[0]:
                self._enter("head", self.limits.header_timeout)  # the next head began
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                self.waiting.pop(self, None)
                self._enter("body", self.limits.body_timeout, wait=False)
        elif self._phase != "busy":
            self._disarm()
            self._phase = "busy"
            self.waiting.pop(self, None)

    def _enter(self, phase: str, seconds: float, *, wait: bool = True) -> None:
        self._disarm()
        self._phase = phase
        self._deadline = self.loop.call_later(seconds, self._expired)
        if wait:
            self.waiting[self] = None
            self.waiting.move_to_end(self)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        self._close()

    def _make_room(self) -> None:
        for other in self.waiting:
            if other is not self and not other.transport.is_closing():
                other._close()
                return

    def _close(self) -> None:
        self.waiting.pop(self, None)
        if not self.transport.is_closing():
            self.cut_off[0] += 1
            self.transport.close()


def server_config(app: Any, limits: ServerLimits, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for `app` served under `limits` (`options` pass on)."""
    protocol = type(
        "GuardedH11",
        (GuardedH11Protocol,),
        {"limits": limits, "waiting": OrderedDict(), "cut_off": [0]},
    )
    return uvicorn.Config(
        app,
        http=protocol,
        timeout_keep_alive=limits.keep_alive,
        # uvicorn answers 503 past this; the guard keeps connections at the cap, so it is
        # reached only when none of them is waiting to be closed.
        limit_concurrency=limits.max_connections + 1,
        h11_max_incomplete_event_size=limits.max_head_bytes,
        **options,
    )


def listen(host: str, port: int, what: str) -> socket.socket:
    """The socket to serve on, bound here (as uvicorn would bind it), so that a port in use
    is a `ConfigError` naming it before anything starts, not uvicorn's exit."""
    host = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"{what} cannot listen on {host}:{port}: {exc.strerror or exc}; choose another "
            "--port (0 picks a free one) or --host"
        ) from None
    return sock


class _Summary(logging.Filter):
    """At most `_LOG_LINES_PER_WINDOW` records of one kind (logger and message template) a
    minute; the next one let through says how many were held back."""

    def __init__(self) -> None:
        super().__init__()
        self._kinds: dict[tuple[str, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        if len(self._kinds) > _LOG_KINDS_KEPT:
            self._kinds.clear()
        started, said, held = self._kinds.setdefault(key, [now, 0, 0])
        if now - started >= _LOG_WINDOW:
            if held:
                record.msg = f"{record.msg} [{int(held)} more like it in the last minute]"
            started, said, held = now, 0, 0
        if said < _LOG_LINES_PER_WINDOW:
            self._kinds[key] = [started, said + 1, held]
            return True
        self._kinds[key] = [started, said, held + 1]
        return False


@contextlib.contextmanager
def summarised_logs(names: tuple[str, ...] = ("uvicorn.error", "asyncio")) -> Iterator[None]:
    """Repeated lines of these loggers summarised while serving (a flood of bad clients must
    not write a traceback each: issue 39 saw 79,635 in 15 s)."""
    summary = _Summary()
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addFilter(summary)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(summary)
