"""A CLI run streams its results: each goes to the run store as it finishes and leaves memory,
the store keeps each sample once (compressed), and the reports read them back in dataset order,
the same as a run that kept them all."""

from __future__ import annotations

import gc
import json
import sqlite3
from pathlib import Path

from tests.support.cli import run_vera

import vera
from vera import Bindings, RunPlan, RunStore, Settings, run_plan
from vera._plan import DatasetRef, build_plan

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"


def test_a_streamed_run_reports_what_a_kept_run_does(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path, "eval", "-d", "example", "--history", "h.sqlite", "-o", "r.json",
        "--markdown", "r.md", "--junit", "r.xml", "--concurrency", "4",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # unfaithful answers: gate
    streamed = json.loads((tmp_path / "r.json").read_text())
    kept = vera.evaluate("example").to_dict()
    for report in (streamed, kept):
        report.pop("timestamp")
    # The file shows each sample's dataset contexts (issue 44); the results carry only what
    # a pipeline retrieved.
    assert all(s.pop("contexts") for s in streamed["samples"])
    assert not any(s.pop("contexts") for s in kept["samples"])
    assert streamed == kept  # same aggregates, same samples, in dataset order
    assert "Failing samples, worst first" in done.stdout
    # A case per sample for its answer verdict, and one per sample for faithfulness.
    assert (tmp_path / "r.xml").read_text().count("<testcase ") == 2 * len(kept["samples"])

    with sqlite3.connect(tmp_path / "h.sqlite") as db:
        (stored_report,) = db.execute("SELECT report FROM runs").fetchone()
        payloads = [row[0] for row in db.execute("SELECT result FROM results")]
    assert json.loads(stored_report)["samples"] == []  # each sample is stored once
    assert all(isinstance(p, bytes) for p in payloads)  # compressed
    store = RunStore(tmp_path / "h.sqlite")
    (run,) = store.list()
    assert [s.id for s in store.report(run.id).samples] == [s["id"] for s in kept["samples"]]
    store.close()


def _baseline_plan(tmp_path: Path, *, history: bool) -> RunPlan:
    settings = Settings(history=history, history_path=tmp_path / "h.sqlite", cache=False)
    return build_plan(
        dataset=DatasetRef(source="example"),
        metrics=["faithfulness", "hallucination_rate"],
        baselines=("naive-rag",),
        settings=settings,
    )


def test_baselines_pair_their_samples_from_the_store_and_keep_none(tmp_path: Path) -> None:
    kept = run_plan(_baseline_plan(tmp_path / "kept", history=False))
    assert len(kept.report.samples) == 28  # Python keeps them unless told not to
    streamed = run_plan(_baseline_plan(tmp_path, history=True), Bindings(keep_samples=False))
    assert streamed.streamed and streamed.report.samples == ()
    block = streamed.report.baseline_comparison
    assert block == kept.report.baseline_comparison
    significance = block["significance"]["naive_rag"]
    assert {c["paired_samples"] for c in significance.values()} == {28}
    # The baseline's results were stored beside the run's, by the baseline's name.
    with sqlite3.connect(tmp_path / "h.sqlite") as db:
        stored = db.execute(
            "SELECT pass, COUNT(*) FROM pass_results WHERE run_id = ? GROUP BY pass",
            (streamed.run_id,),
        ).fetchall()
    assert stored == [("naive-rag", 28)]
    assert [r.id for r in streamed.results()] == [r.id for r in kept.report.samples]


def test_a_run_without_a_history_streams_to_a_store_removed_with_its_result(
    tmp_path: Path,
) -> None:
    result = run_plan(_baseline_plan(tmp_path, history=False), Bindings(keep_samples=False))
    assert result.run_id is None  # in no history: nothing to resume or show
    assert result.streamed and not (tmp_path / "h.sqlite").exists()
    assert result.scratch is not None
    folder = result.scratch.path.parent
    assert folder.is_dir()
    assert len(list(result.results())) == 28
    assert result.report.baseline_comparison["significance"]["naive_rag"]
    del result
    gc.collect()
    assert not folder.exists()


def test_a_cli_run_with_a_baseline_and_no_history_writes_every_sample(tmp_path: Path) -> None:
    done = run_vera(
        tmp_path, "eval", "-d", "example", "--baseline", "naive-rag", "--no-history",
        "-o", "r.json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # unfaithful answers: gate
    written = json.loads((tmp_path / "r.json").read_text())
    assert len(written["samples"]) == 28
    assert written["baseline_comparison"]["naive_rag"]
    assert not (tmp_path / ".vera").exists()
