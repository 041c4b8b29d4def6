"""`vera view` as a command: the real server process, reached over HTTP on 127.0.0.1.

The command is a shell over `vera._viewer.serve`; these tests check what only the command
does: it prints where it serves, answers there with the runs page, leaves the history as it
was, and fails with exit 2 and the path when there is no history to show.
"""

from __future__ import annotations

import hashlib
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.support.cli import run_vera
from tests.support.extras import without

pytest.importorskip("starlette", reason=without("view"))
pytest.importorskip("uvicorn", reason=without("view"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_vera_view_serves_the_history_and_changes_nothing(tmp_path: Path) -> None:
    made = run_vera(tmp_path, "eval", "--quick")
    assert made.returncode == 1, made.stderr  # unfaithful answers: gate
    history = tmp_path / ".vera" / "runs.sqlite"
    before = _digest(history)
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "vera", "view", "--no-browser", "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 60)
        assert ready, "vera view printed no address within 60 s"
        line = server.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, (line, server.stderr.read() if server.poll() is not None else "")
        page = httpx.get(found.group(0), timeout=10)
        run = httpx.get(found.group(0) + "runs/" + made.stderr.split("Run ", 1)[1].split()[0])
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert page.status_code == 200 and "example" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert run.status_code == 200 and "VERA report" in run.text
    assert _digest(history) == before


def test_vera_view_without_a_history_names_the_path_and_creates_nothing(tmp_path: Path) -> None:
    result = run_vera(tmp_path, "view", "--no-browser", "--port", "0", timeout=60)
    assert result.returncode == 2
    assert ".vera/runs.sqlite" in result.stderr and "does not exist" in result.stderr
    assert not (tmp_path / ".vera").exists()
