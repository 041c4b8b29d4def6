"""`vera view --review` as a command: the real server process over HTTP on 127.0.0.1 takes a
label from its own page's form and writes only that: the runs and results rows are as they
were, the file passes SQLite's integrity check, and the label is there with its reviewer."""

from __future__ import annotations

import hashlib
import os
import re
import select
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from tests.support.cli import run_vera
from tests.support.extras import without

pytest.importorskip("starlette", reason=without("view"))
pytest.importorskip("uvicorn", reason=without("view"))


def _rows(path: Path) -> str:
    """A digest of every run and result row: what a label must never change."""
    with closing(sqlite3.connect(path)) as db:
        digest = hashlib.sha256()
        for table in ("runs", "results"):
            for row in db.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                digest.update(repr(row).encode())
        return digest.hexdigest()


def test_vera_view_review_stores_a_label_and_changes_nothing_else(tmp_path: Path) -> None:
    made = run_vera(tmp_path, "eval", "--quick")
    assert made.returncode == 1, made.stderr  # unfaithful answers: gate
    run_id = made.stderr.split("Run ", 1)[1].split()[0]
    history = tmp_path / ".vera" / "runs.sqlite"
    before = _rows(history)
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "vera", "view", "--review", "--no-browser", "--port", "0"],
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
        found = re.search(r"http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        assert found
        origin = found.group(0)
        page = httpx.get(f"{origin}/review/{run_id}", timeout=10).text
        form = page.split("</form>")[0]
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form))
        posted = httpx.post(
            f"{origin}/review/{run_id}/labels",
            data={**fields, "label": "unfaithful", "reviewer": "ana", "note": "wrong cap"},
            headers={"Origin": origin},
            timeout=10,
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert posted.status_code == 303, posted.text
    assert _rows(history) == before
    with closing(sqlite3.connect(history)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        labels = db.execute("SELECT sample_id, label, reviewer, note FROM labels").fetchall()
    assert labels == [(fields["sample"], "unfaithful", "ana", "wrong cap")]
