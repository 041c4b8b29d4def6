"""A CLI run streams its results: each goes to the run store as it finishes and leaves memory,
the store keeps each sample once (compressed), and the reports read them back in dataset order,
the same as a run that kept them all."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.support.cli import run_vera

import vera
from vera.store import RunStore


def test_a_streamed_run_reports_what_a_kept_run_does(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path, "eval", "-d", "example", "--history", "h.sqlite", "-o", "r.json",
        "--markdown", "r.md", "--junit", "r.xml", "--concurrency", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    streamed = json.loads((tmp_path / "r.json").read_text())
    kept = vera.evaluate("example").to_dict()
    for report in (streamed, kept):
        report.pop("timestamp")
    assert streamed == kept  # same aggregates, same samples, in dataset order
    assert "Failing samples, worst first" in done.stdout
    assert (tmp_path / "r.xml").read_text().count("<testcase ") == len(kept["samples"])

    with sqlite3.connect(tmp_path / "h.sqlite") as db:
        (stored_report,) = db.execute("SELECT report FROM runs").fetchone()
        payloads = [row[0] for row in db.execute("SELECT result FROM results")]
    assert json.loads(stored_report)["samples"] == []  # each sample is stored once
    assert all(isinstance(p, bytes) for p in payloads)  # compressed
    store = RunStore(tmp_path / "h.sqlite")
    (run,) = store.list()
    assert [s.id for s in store.report(run.id).samples] == [s["id"] for s in kept["samples"]]
    store.close()
