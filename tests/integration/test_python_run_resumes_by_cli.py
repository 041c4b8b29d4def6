"""A run started from Python on a dataset file is resumed by `vera eval --resume`, as one the
CLI started: both build their plan in `vera.plan_evaluation`, and the run reads the file from
the plan either way, so the content digest it stores is the one a resume checks.

Before, Python handed the opened file to the run, which stored the digest of the samples it
read, while the resumed run took the file's bytes: every such resume was refused as "its
data has changed"."""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

from tests.support.cli import run_vera

import vera

EXAMPLE = Path(vera.__file__).parent / "datasets" / "examples" / "example.jsonl"


def test_a_run_started_from_python_on_a_file_resumes_from_the_cli(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "d.jsonl")
    history = tmp_path / "h.sqlite"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vera.GateWarning)
        first = vera.run_evaluation(tmp_path / "d.jsonl", history=history)
    assert first.run_id is not None
    # Interrupted half-way: the run is still "running" and half its results are missing.
    with sqlite3.connect(history) as store:
        store.execute("UPDATE runs SET status = 'running'")
        ids = [row[0] for row in store.execute("SELECT sample_id FROM results ORDER BY rowid")]
        store.executemany("DELETE FROM results WHERE sample_id = ?", [(i,) for i in ids[::2]])
    store.close()

    resumed = run_vera(tmp_path, "eval", "--resume", first.run_id, "--history", str(history),
                       "-o", "r.json")  # fmt: skip
    assert "has changed" not in resumed.stderr
    assert resumed.returncode == first.exit_code, resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["samples"]] == [s.id for s in first.report.samples]
    assert report["metrics"]["faithfulness"] == first.report.metrics["faithfulness"]
