"""Serving the view with uvicorn, on this machine's loopback address unless told otherwise."""

from __future__ import annotations

import ipaddress
import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn

from vera.errors import ConfigError
from vera.viewer.app import build_app

__all__ = ["LOOPBACK_HOSTS", "run_server", "url_for"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The Host headers answered when the view listens on a loopback address."""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_for(host: str, port: int) -> str:
    """The address a browser opens: a wildcard host ("0.0.0.0", "::") is reached on loopback."""
    if host in {"0.0.0.0", ""}:
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def _announce(url: str) -> None:
    print(f"VERA view: {url} (Ctrl+C stops it)", flush=True)


class _Server(uvicorn.Server):
    """uvicorn's server, which reports its address once it listens (port 0 picks one)."""

    def __init__(self, config: uvicorn.Config, host: str, ready: Callable[[str], None]) -> None:
        super().__init__(config)
        self._host = host
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.servers and self.servers[0].sockets:
            port = self.servers[0].sockets[0].getsockname()[1]
            self._ready(url_for(self._host, port))


def run_server(
    history: Path | str,
    *,
    host: str,
    port: int,
    open_browser: bool,
    on_ready: Callable[[str], None] | None,
) -> None:
    """See `vera.viewer.serve`."""
    # Listening on loopback, only loopback names are answered: a page elsewhere that points
    # its own domain at 127.0.0.1 (DNS rebinding) gets no history. The host asked for, in the
    # form a browser sends it, is answered too ("127.0.0.2", "[::1]").
    named = f"[{host.strip('[]')}]" if ":" in host else host
    hosts = [*LOOPBACK_HOSTS, named] if _loopback(host) else None
    app = build_app(history, allowed_hosts=hosts)
    announce = on_ready or _announce

    def ready(url: str) -> None:
        announce(url)
        if open_browser:
            webbrowser.open(url)

    config = uvicorn.Config(app, host=host.strip("[]"), port=port, log_level="warning")
    _Server(config, host, ready).run(sockets=[_listen(host.strip("[]"), port)])


def _listen(host: str, port: int) -> socket.socket:
    """The socket to serve on, bound here (as uvicorn would bind it) so that a port in use is
    an error that says what to do, not uvicorn's exit."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"vera view cannot listen on {host}:{port}: {exc.strerror}; choose another --port "
            "(0 picks a free one) or --host"
        ) from None
    return sock
