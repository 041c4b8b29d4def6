"""Issue 44, item 5: the run history says what happened: a run refused as bad input is not
listed as finished, `--quick` runs stay out of a dataset's trend, and `--dataset-name` pairs
the versions of one dataset's file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_vera

from vera.store import RunStore


def test_a_run_refused_as_bad_input_is_not_stored_as_finished(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text(json.dumps({"query": "q", "contexts": ["c"]}) + "\n")
    refused = run_vera(tmp_path, "eval", "-d", "q.jsonl")
    assert refused.returncode == 2
    assert "has a response" in refused.stderr
    store = RunStore(tmp_path / ".vera" / "runs.sqlite", read_only=True)
    assert [r.status for r in store.list()] == []
