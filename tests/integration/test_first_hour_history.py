"""Issue 44, item 5: the run history says what happened: a run refused as bad input is not
listed as finished, `--quick` runs stay out of a dataset's trend, and `--dataset-name` pairs
the versions of one dataset's file."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient
from tests.support.cli import run_vera

from vera import RunStore, create_app
from vera.datasets import bundled_path, open_dataset


def test_a_run_refused_as_bad_input_is_not_stored_as_finished(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text(json.dumps({"query": "q", "contexts": ["c"]}) + "\n")
    refused = run_vera(tmp_path, "eval", "-d", "q.jsonl")
    assert refused.returncode == 2
    assert "has a response" in refused.stderr
    store = RunStore(tmp_path / ".vera" / "runs.sqlite", read_only=True)
    assert [r.status for r in store.list()] == []


def test_quick_runs_stay_out_of_the_dataset_s_trend(tmp_path: Path) -> None:
    for args in (("-d", "example"), ("--quick",), ("-d", "example", "--quick")):
        done = run_vera(tmp_path, "eval", *args)
        assert done.returncode == 1, (
            done.stderr
        )  # the example's unfaithful answers fail the answer gate (--max-unfaithful 0)
    store = RunStore(tmp_path / ".vera" / "runs.sqlite", read_only=True)
    every = store.list(dataset="example", finished=True)
    assert len(every) == 3  # all three are stored and listed
    [full] = store.list(dataset="example", finished=True, full=True)
    assert full.finished_samples == sum(1 for _ in open_dataset("example"))
    page = TestClient(create_app(tmp_path / ".vera" / "runs.sqlite")).get("/").text
    trend = page.split('data-dataset="example"', 1)[1].split("</section>", 1)[0]
    assert "· 1 finished run</span>" in trend  # the one full run, not the two quick ones


def test_dataset_name_pairs_two_versions_of_a_file(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in bundled_path("example").open() if line.strip()][:6]
    for version, change in (("v1", "thirty (30) days"), ("v2", "sixty (60) days")):
        text = "".join(json.dumps(r) + "\n" for r in rows).replace("thirty (30) days", change)
        (tmp_path / f"answers_{version}.jsonl").write_text(text)
        done = run_vera(
            tmp_path, "eval", "-d", f"answers_{version}.jsonl", "--dataset-name", "answers"
        )
        assert done.returncode == 1, (
            done.stderr
        )  # the example's unfaithful answers fail the answer gate (--max-unfaithful 0)
    store = RunStore(tmp_path / ".vera" / "runs.sqlite", read_only=True)
    second, first = store.list(dataset="answers", finished=True)
    compared = run_vera(tmp_path, "compare", first.id, second.id)
    assert compared.returncode == 0, compared.stderr  # no --any-dataset needed
    assert "different datasets" not in compared.stderr + compared.stdout
