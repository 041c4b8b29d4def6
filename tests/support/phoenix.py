"""A real Arize Phoenix on 127.0.0.1 for the Phoenix tests, with its SQLite database in a folder
the test gives, and the OpenTelemetry plumbing that sends an application's traces to it.

Phoenix's server (`arize-phoenix`) pins `anthropic<2` and pulls `openai` 3, which VERA's test
environment does not share, so it runs from its own environment: `VERA_PHOENIX_SERVER` names
its `phoenix` executable (`.ci/run` installs one). Where the server is importable here, that
one is used. Without either the tests skip, saying how to get one; under CI they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

__all__ = ["START_TIMEOUT_S", "free_port", "provider", "root_span_ids", "running_phoenix"]

START_TIMEOUT_S = 180.0
"""Phoenix migrates its SQLite database and starts in about 30 s on a busy two-core machine."""


def _server_command() -> list[str] | None:
    given = os.environ.get("VERA_PHOENIX_SERVER")
    if given:
        return [given, "serve"]
    if importlib.util.find_spec("phoenix.server") is not None:
        return [sys.executable, "-m", "phoenix.server.main", "serve"]
    return None


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@contextmanager
def running_phoenix(work: Path) -> Iterator[str]:
    """Phoenix serving from `work` (its SQLite database and log) on 127.0.0.1; its URL."""
    command = _server_command()
    if command is None:
        reason = (
            "Phoenix's server is not installed: set VERA_PHOENIX_SERVER to the `phoenix` "
            "executable of an environment with arize-phoenix (python -m venv /tmp/phoenix && "
            "/tmp/phoenix/bin/pip install arize-phoenix)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so the Phoenix tests must run")
        pytest.skip(reason)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHOENIX_")}
    env.update(
        PHOENIX_WORKING_DIR=str(work),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
    )
    url = f"http://127.0.0.1:{port}"
    log_path = work / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _answers(url):
                said = log_path.read_text(errors="replace")[-2000:]
                if server.poll() is not None:
                    pytest.fail(f"Phoenix exited with {server.returncode}:\n{said}")
                if time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not answer in {START_TIMEOUT_S:.0f} s:\n{said}")
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def provider(*exporters: SpanExporter) -> TracerProvider:
    """An application's tracer provider sending each span to every one of `exporters`, as
    a collector fans out."""
    made = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    for exporter in exporters:
        made.add_span_processor(SimpleSpanProcessor(exporter))
    return made


def root_span_ids(trace_file: Path) -> dict[str, str]:
    """Trace id -> its root span's id, read from an OTLP/JSON trace file as written."""
    roots: dict[str, str] = {}
    for line in trace_file.read_text(encoding="utf-8").splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    if not span.get("parentSpanId"):
                        roots[span["traceId"]] = span["spanId"]
    return roots
