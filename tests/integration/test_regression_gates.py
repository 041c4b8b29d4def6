"""The regression gate never passes without measuring, and compares only like with like.

Each defect of issue 26 is reproduced here: `--regression --baseline-run ID --no-history`
passed (exit 0) without comparing anything, and `--regression` compared with the last run
of the dataset even when that run used another judge.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_vera

import vera
from vera import Bindings, ConfigError, RunPlan, RunStore, run_plan
from vera._plan import DatasetRef, build_plan
from vera._results import regression_failures
from vera.datasets import bundled_path

WHITEBOX = "the report builder, on hand-made results"


def _run_id(stderr: str) -> str:
    return stderr.split("Run ", 1)[1].split()[0]


def test_a_regression_gate_without_a_history_is_bad_usage(tmp_path: Path) -> None:
    for args in (["--regression"], ["--baseline-run", "20260101-000000-abcdef"]):
        done = run_vera(tmp_path, "eval", "--quick", "--no-history", *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Gate passed" not in done.stdout
        assert "the run history is off" in done.stderr and "--no-history" in done.stderr
        assert "--history-path" in done.stderr
    with pytest.raises(ConfigError, match="history is off"):
        vera.evaluate("example", quick=True, regression=True)  # history=False by default
    with pytest.raises(ConfigError, match="only widens a regression gate"):
        vera.evaluate("example", quick=True, any_plan=True)


TOLERATE = ("--max-unfaithful", "100%")
"""The example's unfaithful answers, tolerated where the regression gate alone is tested."""


def test_regression_compares_only_runs_with_the_same_plan(tmp_path: Path) -> None:
    first = run_vera(tmp_path, "eval", "--quick", "--regression", *TOLERATE)
    assert first.returncode == 0, first.stderr
    assert "no earlier finished run with this plan" in first.stdout
    assert "no regression check" in first.stdout
    first_id = _run_id(first.stderr)

    # Another judge: the offline run is not its baseline, and it says it compared nothing.
    other = run_vera(
        tmp_path, "eval", "--quick", "--regression", "--judge", "offline:learned", "-o", "o.json",
        *TOLERATE,
    )  # fmt: skip
    assert other.returncode == 0, other.stderr
    assert first_id not in other.stdout
    regression = json.loads((tmp_path / "o.json").read_text())["regression"]
    assert regression["compared_with"] is None

    # The same plan again: compared with the first run, named in the console and reports.
    reports = ("-o", "a.json", "--markdown", "a.md", "--html", "a.html")
    again = run_vera(tmp_path, "eval", "--quick", "--regression", *reports, *TOLERATE)
    assert again.returncode == 0, again.stderr
    assert f"compared with run {first_id}" in again.stdout
    assert f"no significant drop against run {first_id}" in again.stdout
    report = json.loads((tmp_path / "a.json").read_text())
    assert report["regression"]["compared_with"] == first_id
    assert report["regression"]["fingerprint"] == report["fingerprint"]["digest"]
    assert f"compared with run {first_id}" in (tmp_path / "a.md").read_text()
    assert f"compared with run {first_id}" in (tmp_path / "a.html").read_text()


def test_a_baseline_run_of_another_plan_is_refused_unless_any_plan(tmp_path: Path) -> None:
    first = run_vera(tmp_path, "eval", "--quick")
    first_id = _run_id(first.stderr)
    args = ("eval", "--quick", "--judge", "offline:learned", "--baseline-run", first_id)
    refused = run_vera(tmp_path, *args)
    assert refused.returncode == 2
    judges = "The judges differ: this run offline:learned; the compared run offline"
    assert judges in " ".join(refused.stderr.split())
    assert "--any-plan" in refused.stderr
    allowed = run_vera(tmp_path, *args, "--any-plan", *TOLERATE)
    assert allowed.returncode == 0, allowed.stderr
    assert f"compared with run {first_id}" in allowed.stdout
    assert f"a different plan: {judges}" in " ".join(allowed.stdout.split())


def test_python_finds_the_same_baseline_as_the_cli(tmp_path: Path) -> None:
    history = tmp_path / "runs.sqlite"
    settings = {"history_path": history}

    def plan(**fields: Any) -> RunPlan:
        return build_plan(
            dataset=DatasetRef(source="example"),
            quick=True,
            overrides=settings,
            config_directory=tmp_path,
            **fields,
        )

    first = run_plan(plan())
    result = run_plan(plan(regression=True))
    assert result.compared_with == first.run_id
    assert result.report.regression is not None
    assert result.report.regression.compared_with == first.run_id
    other_metrics = build_plan(
        dataset=DatasetRef(source="example"),
        metrics=["faithfulness", "hallucination_rate"],
        quick=True,
        overrides=settings,
        config_directory=tmp_path,
        baseline_run=first.run_id,
    )
    with pytest.raises(ConfigError, match="The metrics differ: only this run measured"):
        run_plan(other_metrics)
    # --regression --any-plan: the newest finished run of the dataset, whatever its plan.
    anyway = run_plan(
        other_metrics.model_copy(
            update={"baseline_run": None, "regression": True, "any_plan": True}
        )
    )
    assert anyway.compared_with == result.run_id
    assert anyway.report.regression is not None
    assert [d.split(":")[0] for d in anyway.report.regression.differences] == ["The metrics differ"]
    store = RunStore(history, read_only=True)
    try:
        assert first.report.fingerprint is not None
        found = store.last_finished(digest=first.report.fingerprint.digest)
        assert found is not None and found.id == result.run_id
    finally:
        store.close()


def test_a_streamed_regression_run_pairs_its_samples_from_the_history(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in bundled_path("example").open() if line.strip()]
    worse = [{**row, "response": "Bananas are purple and the moon is cheese."} for row in rows]
    for name, written in (("good", rows), ("bad", worse)):
        text = "".join(json.dumps(row) + "\n" for row in written)
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")

    def plan(name: str, **fields: Any) -> RunPlan:
        return build_plan(
            dataset=DatasetRef(source=str(tmp_path / f"{name}.jsonl")),
            overrides={"history_path": tmp_path / "runs.sqlite"},
            config_directory=tmp_path,
            **fields,
        )

    first = run_plan(plan("good"))
    assert first.run_id is not None
    streamed = run_plan(
        plan("bad", baseline_run=first.run_id, any_plan=True), Bindings(keep_samples=False)
    )
    assert streamed.compared_with == first.run_id and streamed.report.samples == ()
    # The same lines as a comparison of the two reports held whole in memory.
    whole = streamed.report.model_copy(update={"samples": tuple(streamed.results())})
    expected = regression_failures(whole, first.report, first.run_id)
    found = [line for line in streamed.gate_failures if "against run" in line]
    assert found == expected
    assert found and f"{len(rows)} paired samples" in found[0]
