"""Issue 44, item 6: `vera monitor` starts without opentelemetry-proto, reads OTLP/JSON, and
refuses only protobuf requests, naming the extra that reads them.

opentelemetry-proto is installed here, so its absence is made explicit: `sys.modules` maps it
to None, which makes every import of it fail as it does where it is not installed."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from vera import MonitorConfig, create_monitor, running_monitor
from vera._monitor import protobuf_note

WHITEBOX = "the monitor's own parts"


def test_a_monitor_without_opentelemetry_proto_reads_json_and_refuses_protobuf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every opentelemetry.proto module, also those other tests imported already, fails to
    # import, as where the package is not installed.
    for name in [m for m in sys.modules if m.startswith("opentelemetry.proto")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "opentelemetry.proto", None)
    note = protobuf_note()
    assert note is not None and "vera-eval[monitor]" in note and "http/json" in note
    monitor = create_monitor(MonitorConfig(flush_seconds=0.1), history=tmp_path / "h.sqlite")
    with running_monitor(monitor) as url:
        json_answer = httpx.post(
            url, content=b'{"resourceSpans": []}', headers={"Content-Type": "application/json"}
        )
        assert json_answer.status_code == 200, json_answer.text
        protobuf = httpx.post(
            url, content=b"\x0a\x00", headers={"Content-Type": "application/x-protobuf"}
        )
    assert protobuf.status_code == 400
    assert "opentelemetry-proto" in protobuf.text and "vera-eval[monitor]" in protobuf.text
