"""Serving the view with uvicorn, on this machine's loopback address unless told otherwise;
anywhere else only with a Host check and an access token (`plan_access`). The server runs
under `ServerLimits` as the monitor's does (`vera._http_server`): deadlines on each request's
head and body, a cap on connections, repeated log lines summarised."""

from __future__ import annotations

import ipaddress
import socket
import warnings
import webbrowser
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import uvicorn

from vera._http_server import ServerLimits, listen, server_config, summarised_logs
from vera._types._errors import ConfigError
from vera._viewer._access import TOKEN_PARAMETER, check_token, new_token
from vera._viewer._app import build_app

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The Host headers answered when the view listens on a loopback address."""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_WILDCARDS = frozenset({"0.0.0.0", "::", "[::]", ""})


def url_for(host: str, port: int, token: str | None = None) -> str:
    """The address a browser opens: `host` as a browser writes it, with `token` if any."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    url = f"http://{host}:{port}/"
    return url if token is None else url + "?" + urlencode({TOKEN_PARAMETER: token})


@dataclass(frozen=True)
class Access:
    """Who the view answers on `host`: the Host names, the token (None: none asked for),
    the name its printed address uses, and whether it is reachable from other machines."""

    hosts: tuple[str, ...]
    token: str | None
    url_host: str
    exposed: bool


def _as_sent(name: str) -> str:
    """A host name as a browser sends it in Host: an IPv6 address in brackets, lowercase."""
    name = name.strip().lower()
    return f"[{name.strip('[]')}]" if ":" in name else name


def plan_access(host: str, allow_hosts: Sequence[str] = (), token: str | None = None) -> Access:
    """What `run_server` enforces on `host` (see `vera._viewer.serve`); `ConfigError` when a
    wildcard host names no `--allow-host` or a given token is too weak."""
    allowed = tuple(dict.fromkeys(_as_sent(name) for name in allow_hosts if name.strip()))
    if token is not None:
        check_token(token)
    if _loopback(host):
        # Listening on loopback, only loopback names are answered: a page elsewhere that
        # points its own domain at 127.0.0.1 (DNS rebinding) gets no history. The host asked
        # for, in the form a browser sends it, is answered too ("127.0.0.2", "[::1]").
        hosts = tuple(dict.fromkeys((*LOOPBACK_HOSTS, _as_sent(host), *allowed)))
        return Access(hosts, token, host, exposed=False)
    if host in _WILDCARDS:
        if not allowed:
            raise ConfigError(
                f"vera view --host {host or '0.0.0.0'} answers on every network interface, so "
                "it must be told the names others will open it by: add --allow-host NAME "
                f"(repeatable), e.g. --allow-host {socket.gethostname()} or the machine's "
                "address; the Host header of every request is checked against them"
            )
        return Access(allowed, token or new_token(), allowed[0], exposed=True)
    hosts = tuple(dict.fromkeys((_as_sent(host), *allowed)))
    return Access(hosts, token or new_token(), host, exposed=True)


def _announce(url: str) -> None:
    print(f"VERA view: {url} (Ctrl+C stops it)", flush=True)


class _Server(uvicorn.Server):
    """uvicorn's server, which reports its port once it listens (port 0 picks one)."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[int], None]) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.servers and self.servers[0].sockets:
            self._ready(self.servers[0].sockets[0].getsockname()[1])


def _exposed_warning(host: str, access: Access) -> None:
    warnings.warn(
        f"vera view listens on {host}, which other machines can reach: anyone who has its "
        "address with the token can read the whole run history (queries, answers, contexts). "
        f"Answered Host names: {', '.join(access.hosts)}. Use --host 127.0.0.1 to keep it "
        "to this machine.",
        stacklevel=3,
    )


def run_server(
    history: Path | str,
    *,
    host: str,
    port: int,
    open_browser: bool,
    on_ready: Callable[[str], None] | None,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    review: bool = False,
    limits: ServerLimits | None = None,
) -> None:
    """See `vera._viewer.serve`."""
    access = plan_access(host, allow_hosts, token)
    app = build_app(history, allowed_hosts=access.hosts, token=access.token, review=review)
    if access.exposed:
        _exposed_warning(host, access)
    announce = on_ready or _announce

    def ready(port: int) -> None:
        url = url_for(access.url_host, port, access.token)
        announce(url)
        if open_browser:
            webbrowser.open(url)

    config = server_config(app, limits or ServerLimits(), log_level="warning")
    sock = listen(host, port, "vera view")
    with summarised_logs():
        _Server(config, ready).run(sockets=[sock])
