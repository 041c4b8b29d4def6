"""Secrets never reach the store, the reports or the terminal; the history and cache files fail
with exit 2 and a message (locked too long, a folder, not SQLite), never a traceback."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest
from tests.support.cli import run_vera

from vera import RunStore, SampleResult, SampleStatus, StoreError
from vera.providers import ChatResponse
from vera.providers._cache import ResponseCache
from vera.render._html import read_samples

WHITEBOX = "the providers' own clients, retries, cache and batches"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_key_in_the_base_url_is_never_stored_reported_or_printed(tmp_path: Path) -> None:
    url = f"http://user:SECRETKEY@127.0.0.1:{_closed_port()}/v1?api-key=SECRETPARAM"
    result = run_vera(
        tmp_path,
        "eval", "-d", "example", "--judge", "openai:gpt-4o-mini", "--judge-base-url", url,
        "--retries", "0", "--fail-fast", "3", "--history", "h.sqlite",
        "-o", "r.json", "--html", "r.html", "--markdown", "r.md", "--junit", "r.xml",
        OPENAI_API_KEY="sk-test-0123456789abcdefghij",
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    # A judge on loopback is asked whether it is ready before its first call (exit 2).
    assert "no server answers at http://***@127.0.0.1" in " ".join(result.stderr.split())
    assert "http://***@127.0.0.1" in result.stderr
    shown = run_vera(tmp_path, "runs", "list", "--history", "h.sqlite")
    run_id = shown.stdout.split("20", 1)[1].split()[0]
    details = run_vera(tmp_path, "runs", "show", "20" + run_id, "--history", "h.sqlite", "--plan")
    assert details.returncode == 0, details.stderr
    everything = [result.stdout, result.stderr, shown.stdout, details.stdout]
    everything += [(tmp_path / name).read_bytes().decode() for name in ("r.json", "r.html")]
    # The HTML report's samples are embedded compressed: read them as its script does.
    everything += [json.dumps(read_samples((tmp_path / "r.html").read_text()))]
    everything += [(tmp_path / name).read_text() for name in ("r.md", "r.xml")]
    everything += [(tmp_path / "h.sqlite").read_bytes().decode(errors="replace")]
    for text in everything:
        assert "SECRETKEY" not in text
        assert "SECRETPARAM" not in text
        assert "sk-test-0123456789" not in text


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_a_write_locked_too_long_is_a_clear_error(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite", lock_timeout=0.2)
    cache = ResponseCache(tmp_path / "c.sqlite", lock_timeout=0.2)
    holders = [_hold_write_lock(tmp_path / "h.sqlite"), _hold_write_lock(tmp_path / "c.sqlite")]
    try:
        with pytest.raises(StoreError, match=r"run history .* locked by another process for 0.2s"):
            store.add_result("run", 0, SampleResult(id="s", status=SampleStatus.SCORED))
        with pytest.raises(StoreError, match=r"response cache .* locked .* for 0.2s"):
            cache.put("key", ChatResponse(text="hi"))
    finally:
        for holder in holders:
            holder.close()
    # Once the other writer is done, both files work again.
    store.add_result("run", 0, SampleResult(id="s", status=SampleStatus.SCORED))
    cache.put("key", ChatResponse(text="hi"))
    assert len(cache) == 1


def test_a_locked_history_exits_2_from_the_cli(tmp_path: Path) -> None:
    RunStore(tmp_path / "h.sqlite").close()
    (tmp_path / "vera.toml").write_text("lock-timeout = 0.3\n")
    holder = _hold_write_lock(tmp_path / "h.sqlite")
    try:
        result = run_vera(tmp_path, "eval", "-d", "example", "--history", "h.sqlite")
    finally:
        holder.close()
    assert result.returncode == 2, result.stderr
    assert "the run history h.sqlite stayed locked by another process for 0.3s" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("flag", "make", "message"),
    [
        ("--history", lambda p: p.mkdir(), "is a folder"),
        ("--history", lambda p: p.write_text("not sqlite " * 200), "is not the run history"),
        ("--cache-path", lambda p: p.write_text("not sqlite " * 200), "is not the response cache"),
        ("-o", lambda p: p.mkdir(), "the report path"),
        ("--html", lambda p: p.write_text("a file"), "target is not a folder"),
    ],
)
def test_bad_store_and_output_paths_exit_2(tmp_path: Path, flag: str, make, message: str) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "target"
    make(target)
    if flag == "--html":
        target = target / "report.html"
    # An LLM judge, so the cache is opened; nothing listens at its URL, and no call is made.
    judge = ["--judge", "openai:m", "--judge-base-url", f"http://127.0.0.1:{_closed_port()}/v1"]
    result = run_vera(tmp_path, "eval", "-d", "example", *judge, flag, str(target))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
