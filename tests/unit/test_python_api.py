"""`vera.evaluate` with what Python users hold: dicts, DataFrames, Hugging Face datasets, and
metrics, judges and baselines by name, through the same plan the CLI runs."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.extras import without

import vera
from vera import Bindings, ConfigError, DatasetRowError, RunPlan, Sample, Verdict, run_plan
from vera._plan import DatasetRef, MetricSpec, build_plan

WHITEBOX = "the eval flags table, kept in step with Python's keywords"

ROWS = [
    {
        "question_id": "p",
        "question": "Where is Paris?",
        "answer": "Paris is in France.",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {
        "question_id": "w",
        "question": "How long is the refund window?",
        "answer": "The refund window is 60 days.",
        "retrieved_contexts": ["The refund window is 30 days."],
    },
]


def faithfulness_by_id(report: vera.Report) -> dict[str, float | None]:
    return {s.id: s.scores.get("faithfulness") for s in report.samples}


def assert_copied_passes_and_wrong_number_fails(report: vera.Report) -> None:
    """Row p copies its context: faithfulness passes well clear of 0.5. Row w contradicts
    its context's number: the claim is CONTRADICTED and faithfulness fails."""
    p, w = (report.sample(i).results["faithfulness"] for i in ("p", "w"))
    assert p.passed is True and p.score is not None and p.score >= 0.9
    assert report.sample("w").claims[0].verdict is Verdict.CONTRADICTED
    assert w.passed is False and w.score is not None and w.score < 0.5


def test_dicts_with_other_tools_field_names_score_like_samples() -> None:
    from_dicts = vera.evaluate(ROWS)
    samples = [
        Sample(
            id=str(r["question_id"]),
            query=str(r["question"]),
            response=str(r["answer"]),
            contexts=list(r["retrieved_contexts"]),
        )
        for r in ROWS
    ]
    assert faithfulness_by_id(from_dicts) == faithfulness_by_id(vera.evaluate(samples))
    assert_copied_passes_and_wrong_number_fails(from_dicts)
    assert from_dicts.dataset == "samples" and from_dicts.judge == "offline"


def test_a_dataframe_and_a_hugging_face_dataset_are_read_as_rows() -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    datasets = pytest.importorskip("datasets", reason=without("hf"))
    frame = pandas.DataFrame(ROWS)
    hf = datasets.Dataset.from_list(ROWS)
    from_dicts = vera.evaluate(ROWS)
    assert_copied_passes_and_wrong_number_fails(from_dicts)
    expected = faithfulness_by_id(from_dicts)
    assert faithfulness_by_id(vera.evaluate(frame)) == expected
    assert faithfulness_by_id(vera.evaluate(hf)) == expected
    assert vera.evaluate(frame, dataset_name="support-bot").dataset == "support-bot"


def test_a_bad_in_memory_row_names_the_row_and_field() -> None:
    pandas = pytest.importorskip("pandas", reason=without("pandas"))
    frame = pandas.DataFrame([*ROWS, {**ROWS[0], "question_id": "x", "latency_ms": "slow"}])
    with pytest.raises(DatasetRowError, match=r"row 3, field 'latency_ms'"):
        vera.evaluate(frame)
    report = vera.evaluate(frame, skip_invalid=True)
    assert report.counts["scored"] == 2 and len(report.invalid_rows) == 1


def test_metrics_and_judges_by_name() -> None:
    report = vera.evaluate(ROWS, metrics=["faithfulness", "hallucination_rate"], judge="offline")
    assert list(report.metric_summary) == ["faithfulness", "hallucination_rate"]
    assert report.metrics["hallucination_rate"] == 0.5
    learned = vera.evaluate(ROWS, judge="offline:learned")
    assert learned.judge == "offline:learned"
    assert all(c.entailment is not None for s in learned.samples for c in s.claims)


def test_unknown_names_raise_at_once_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'faithfulness'"):
        vera.evaluate(ROWS, metrics=["faithfulnes"])
    with pytest.raises(ConfigError, match=r"did you mean 'offline'"):
        vera.evaluate(ROWS, judge="ofline")
    with pytest.raises(ConfigError, match=r"unknown baseline 'smart-rag'"):
        vera.evaluate("technical", baselines=["smart-rag"], quick=True)


def test_a_threshold_by_name_sets_the_pass_mark_of_higher_is_better_metrics() -> None:
    with pytest.warns(vera.GateWarning, match="faithfulness: mean 0.500 is below 0.900"):
        report = vera.evaluate(ROWS, metrics=["faithfulness", "hallucination_rate"], threshold=0.9)
    assert report.metric_summary["faithfulness"].threshold == 0.9
    # A rate of bad things keeps its own mark: --threshold never loosens it.
    assert report.metric_summary["hallucination_rate"].threshold == 0.0


def test_baselines_from_python_compare_on_the_same_samples() -> None:
    report = vera.evaluate("technical", metrics=["faithfulness"], baselines=["naive-rag"])
    assert report.pipeline == "vera"
    assert report.baseline_comparison is not None
    paired = report.baseline_comparison.significance["naive_rag"]["faithfulness"]
    assert paired.paired_samples == report.counts["scored"] == 20


def test_to_pandas_from_a_named_run() -> None:
    pytest.importorskip("pandas", reason=without("pandas"))
    report = vera.evaluate(ROWS, metrics=["faithfulness", "hallucination_rate"])
    frame = report.to_pandas()
    assert list(frame["id"]) == ["p", "w"]
    assert_copied_passes_and_wrong_number_fails(report)
    assert list(frame["faithfulness"]) == [s.scores["faithfulness"] for s in report.samples]
    claims = report.claims_to_pandas()
    assert set(claims["verdict"]) == {"FULLY_SUPPORTED", "CONTRADICTED"}


def test_a_plan_round_trips_through_json_and_runs_the_same() -> None:
    plan = build_plan(
        dataset=DatasetRef(source="example"),
        metrics=["faithfulness", "grounding_precision"],
        threshold=0.7,
        settings=vera.Settings(history=False),
        quick=True,
        group_by=("topic",),
    )
    again = RunPlan.model_validate_json(plan.model_dump_json())
    assert again == plan
    assert again.metrics[0] == MetricSpec(name="faithfulness", options={"threshold": 0.7})
    first, second = run_plan(plan).report, run_plan(again).report
    assert first.metrics == second.metrics and first.counts["scored"] == 10
    assert plan.gated and not build_plan(settings=vera.Settings()).gated


def test_a_plan_with_bindings_uses_the_objects_given(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    plan = build_plan(dataset=DatasetRef(source=str(data)), settings=vera.Settings(history=False))
    seen: list[str] = []

    class Listener(vera.RunObserver):
        def sample_finished(self, result: vera.SampleResult) -> None:
            seen.append(result.id)

    result = run_plan(plan, Bindings(judge=vera.judges.OfflineJudge()), observer=Listener())
    assert sorted(seen) == ["p", "w"] and result.run_id is None
    # Row w contradicts its context: the answer-verdict gate fails it, as vera eval would.
    assert not result.passed and result.gate_failures[0].startswith("unfaithful answers: 1 of 2")


# Python = CLI (issue 28): the same options, the same verdict, the same exit code.


def _rows_file(tmp_path: Path, rows: list[dict[str, object]], name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.slow
def test_a_failed_threshold_is_visible_from_python_with_the_cli_exit_code(tmp_path: Path) -> None:
    """Row w contradicts its context: faithfulness 0.99 fails. `vera.evaluate` used to return
    a bare report, so the failed gate looked like a pass; `vera eval` exits 1."""
    path = _rows_file(tmp_path, ROWS)
    result = vera.run_evaluation(path, threshold=0.99)
    assert result.gated and not result.passed
    assert result.exit_code == 1
    assert any("faithfulness" in failure for failure in result.gate_failures)

    cli = run_vera(tmp_path, "eval", "-d", str(path), "--threshold", "0.99", "--no-history")
    assert cli.returncode == result.exit_code, cli.stdout + cli.stderr

    with pytest.warns(vera.GateWarning, match="exit 1.*faithfulness"):
        report = vera.evaluate(path, threshold=0.99)
    assert report.metrics["faithfulness"] == result.report.metrics["faithfulness"]

    # Row w's answer is unfaithful: a threshold of 0 passes the mean, not the answer verdict.
    unfaithful = vera.run_evaluation(path, threshold=0.0)
    assert unfaithful.exit_code == 1 and unfaithful.gate_failures[0].startswith("unfaithful")
    passing = vera.run_evaluation(path, threshold=0.0, max_unfaithful=1)
    assert passing.exit_code == 0 and passing.passed and passing.gated


def test_a_regression_from_python_fails_the_gate_with_exit_code_1(tmp_path: Path) -> None:
    """A run whose answers all copy their context, then the same plan with answers that all
    contradict it: the second fails the regression gate against the first, from Python."""
    history = tmp_path / "runs.sqlite"
    good = [
        {
            "id": f"s{i}",
            "query": f"What is the code of box {i}?",
            "response": f"The code of box {i} is {100 + i}.",
            "contexts": [f"The code of box {i} is {100 + i}."],
        }
        for i in range(20)
    ]
    bad = [dict(row, response=f"The code of box {i} is {900 + i}.") for i, row in enumerate(good)]
    first = vera.run_evaluation(_rows_file(tmp_path, good), history=history, regression=True)
    assert first.exit_code == 0 and first.run_id is not None
    second = vera.run_evaluation(
        _rows_file(tmp_path, bad),
        history=history,
        regression=True,
        baseline_run=first.run_id,
        any_plan=True,
    )
    assert second.compared_with == first.run_id
    assert second.exit_code == 1, second.gate_failures
    assert second.gate_failures


def test_an_unknown_keyword_names_the_closest_option() -> None:
    for function in (vera.evaluate, vera.run_evaluation, vera.plan_evaluation):
        with pytest.raises(TypeError, match=r"'threshhold'.*did you mean 'threshold'"):
            function(ROWS, threshhold=0.8)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'metric'.*did you mean 'metrics'"):
        vera.evaluate(ROWS, metric=["faithfulness"])  # type: ignore[call-arg]


def test_every_settings_flag_of_vera_eval_is_a_typed_option() -> None:
    """A setting `vera eval` takes from a flag can be given from Python under its name."""
    OPTION_NAMES = frozenset(vera.EvaluateOptions.__annotations__)
    from vera._plan import SETTING_USES

    keywords = {name for name, use in SETTING_USES.items() if use.keyword}
    assert keywords <= OPTION_NAMES
    plan, _ = vera.plan_evaluation(ROWS, max_errors="10%", cache=False, judge_samples=3)
    assert plan.settings.max_errors == "10%"
    assert plan.settings.cache is False and plan.settings.judge_samples == 3


@pytest.mark.slow
def test_the_default_metrics_are_the_same_in_the_cli_and_python(tmp_path: Path) -> None:
    from vera._plan import DEFAULT_METRICS

    report = vera.evaluate("example", quick=True)
    assert tuple(report.metric_summary) == DEFAULT_METRICS
    assert tuple(m.name for m in RunPlan().metrics) == DEFAULT_METRICS
    assert tuple(m.name for m in build_plan().metrics) == DEFAULT_METRICS
    cli = run_vera(tmp_path, "eval", "--quick", "--no-history", "-o", "r.json")
    assert cli.returncode == 1, cli.stderr  # the example plants unfaithful answers
    written = json.loads((tmp_path / "r.json").read_text())
    assert tuple(written["metric_summary"]) == DEFAULT_METRICS


def test_reports_are_written_from_python_as_the_cli_writes_them(tmp_path: Path) -> None:
    result = vera.run_evaluation(ROWS, reports={"json": tmp_path / "r.json"})
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["metrics"]["faithfulness"] == result.report.metrics["faithfulness"]


FLAG_IN_PYTHON = {
    "dataset": "data",
    "metric": "metrics",
    "judge": "judge",
    "output": "reports",
    "html": "reports",
    "markdown": "reports",
    "junit": "reports",
    "report": "reports",
    "max_tokens": "judge_max_tokens",
    "prompts_dir": "judge_prompts_dir",
    "baseline": "baselines",
    "top_k": "retrieval",
    "documents": "retrieval",
    "chunk_size": "retrieval",
    "chunk_overlap": "retrieval",
    "no_history": "history",
    "history_path": "history",
    "no_cache": "cache",
    "field": "fields",
    # Not a run's option: a function of their own (docs/python.md, "Plans").
    "resume": "stored_plan",
    "dry_run": "estimate_plan",
}
"""`vera eval` flags whose Python keyword has another name; every other flag is an option
of the same name."""


def test_every_flag_of_vera_eval_has_its_python_keyword() -> None:
    """A flag added to `vera eval` fails here until Python can do it too."""
    OPTION_NAMES = frozenset(vera.EvaluateOptions.__annotations__)
    from vera.cli._eval_flags import EvalFlags

    keywords = OPTION_NAMES | {"data", "metrics", "judge", "stored_plan", "estimate_plan"}
    missing = {
        field.name: FLAG_IN_PYTHON.get(field.name, field.name)
        for field in dataclasses.fields(EvalFlags)
        if FLAG_IN_PYTHON.get(field.name, field.name) not in keywords
    }
    assert missing == {}


def test_the_async_forms_give_the_same_verdict(tmp_path: Path) -> None:
    path = _rows_file(tmp_path, ROWS)
    result = asyncio.run(vera.arun_evaluation(path, threshold=0.99))
    assert result.exit_code == 1 and result.gate_failures
    with pytest.warns(vera.GateWarning, match="exit 1"):
        report = asyncio.run(vera.aevaluate(path, threshold=0.99))
    assert report.metrics["faithfulness"] == result.report.metrics["faithfulness"]
