"""Shared fixtures: a scripted HTTP server, and no network beyond this machine."""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A started `LoopbackServer` on 127.0.0.1, stopped after the test."""
    with LoopbackServer() as server:
        yield server


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # AF_UNIX paths and the like never leave the machine
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is still this machine
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse connections off this machine, so no test reaches a real provider by accident."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def refuse(address: Any) -> None:
        if not _is_loopback(address):
            raise ConnectionRefusedError(f"tests may not reach the network (tried {address!r})")

    def connect(self: socket.socket, address: Any) -> None:
        refuse(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        refuse(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def pytest_configure(config: pytest.Config) -> None:
    """Give the tests' `vera` subprocesses a Ctrl-C that works: a shell without job control
    starts a background job (`bash .ci/run &`, `nohup`) with SIGINT ignored, every child
    inherits that, and the tests that interrupt a run with SIGINT (or SIGTERM, which VERA turns
    into SIGINT under Ray) then wait on a run that never stops. An interactive terminal gives
    the default handler; this gives it whatever started pytest."""
    del config
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
