"""What the reliability tests share: a dataset, `vera eval` started in the background against
the loopback server, and read-only looks into the SQLite files a run leaves behind."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.support.faults import judge_args
from tests.support.loopback import LoopbackServer

__all__ = [
    "ENV",
    "integrity",
    "marker",
    "query",
    "start_eval",
    "wait_for_results",
    "write_dataset",
]

ENV = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1", "OPENAI_API_KEY": "test"}


def marker(sample_id: str) -> str:
    """A text only sample `sample_id`'s response holds, so a prompt shows whose it is."""
    return f"Fact {sample_id} holds"


def write_dataset(path: Path, size: int) -> list[str]:
    """`size` samples (two supported claims each) in JSONL at `path`; their ids."""
    ids = [f"s{i:02d}" for i in range(size)]
    rows = [
        {
            "id": sample_id,
            "query": f"What holds for {sample_id}?",
            "response": f"{marker(sample_id)}. Item {sample_id} is listed.",
            "contexts": [f"{marker(sample_id)}. Item {sample_id} is listed."],
        }
        for sample_id in ids
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return ids


def start_eval(
    cwd: Path, server: LoopbackServer, *args: str, name: str = "vera"
) -> subprocess.Popen[bytes]:
    """`vera eval` with the loopback server as its OpenAI judge, in the background; its
    output goes to NAME.out and NAME.err in `cwd` (a pipe nobody reads could stall it)."""
    with open(cwd / f"{name}.out", "wb") as out, open(cwd / f"{name}.err", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "vera", "eval", *judge_args(server), *args],
            cwd=cwd,
            env={**ENV, "HOME": str(cwd)},
            stdout=out,
            stderr=err,
        )


def query(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of `sql` from the SQLite file at `path`, opened read-only (as an onlooker would:
    nothing is checkpointed or recovered into the file by reading it)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
        return db.execute(sql, params).fetchall()


def integrity(path: Path) -> str:
    """SQLite's own verdict on the file: "ok" when it is sound."""
    return "; ".join(str(row[0]) for row in query(path, "PRAGMA integrity_check"))


def wait_for_results(
    history: Path, at_least: int, process: subprocess.Popen[bytes], timeout: float = 15
) -> None:
    """Poll the run history (read-only) until `at_least` results are stored."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "vera eval ended before it could be interrupted"
        try:
            if query(history, "SELECT COUNT(*) FROM results")[0][0] >= at_least:
                return
        except sqlite3.OperationalError:
            pass  # the file or its tables are not there yet
        time.sleep(0.01)
    raise AssertionError(f"fewer than {at_least} results stored after {timeout:g}s")
