"""`vera eval` as a user runs it: a subprocess, real files, real exit codes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vera import load_dataset


def vera(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"}
    # Kept, so the subprocess imports the `vera` the tests import (a worktree's src/).
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


GOOD = {
    "id": "good",
    "query": "Where is Paris?",
    "response": "Paris is in France.",
    "contexts": ["Paris is the capital of France."],
    "category": "fact_single",
}
BAD = {
    "id": "bad",
    "query": "How long?",
    "response": "You have 60 days to return the item.",
    "contexts": ["The refund window is 30 days."],
    "category": "fact_single",
}


def test_quick_runs_the_bundled_example_and_writes_the_report(tmp_path: Path) -> None:
    result = vera("eval", "--quick", "--output", "out/report.json", cwd=tmp_path)
    # The example plants errors: by default no unfaithful answer passes, so it exits 1.
    assert result.returncode == 1, result.stderr
    assert "unfaithful answers: 3 of 10 answers have" in result.stderr
    assert "faithfulness" in result.stdout and "Report written to" in result.stdout
    report = json.loads((tmp_path / "out/report.json").read_text())
    # Seed 001's top-level shape, plus the samples.
    for key in ("dataset", "timestamp", "queries_evaluated", "metrics", "per_category_breakdown"):
        assert key in report
    assert report["dataset"] == "example"
    assert report["judge"] == "offline"
    assert len(report["samples"]) == 10
    assert report["queries_evaluated"] == 10
    assert 0.0 <= report["metrics"]["faithfulness"] <= 1.0
    assert sum(c["count"] for c in report["per_category_breakdown"].values()) == 10
    first_ids = [s.id for s in list(load_dataset("example"))[:10]]
    assert [s["id"] for s in report["samples"]] == first_ids
    for s in report["samples"]:
        assert s["status"] == "scored"
        assert set(s["scores"]) == {"faithfulness"}
        assert s["results"]["faithfulness"]["reason"]
        for claim in s["claims"]:
            assert claim["verdict"] in {
                "FULLY_SUPPORTED",
                "PARTIALLY_SUPPORTED",
                "NO_EVIDENCE",
                "CONTRADICTED",
            }
            start, end = claim["span"]
            assert claim["id"] in s["results"]["faithfulness"]["claim_weights"]
            assert end > start


def test_report_json_equals_to_dict(tmp_path: Path) -> None:
    import vera as api

    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, BAD])
    result = vera("eval", "--dataset", str(path), "--output", "r.json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # BAD's answer is unfaithful
    written = json.loads((tmp_path / "r.json").read_text())
    in_process = api.evaluate(api.load_dataset(path)).to_dict()
    written.pop("timestamp"), in_process.pop("timestamp")
    # The file shows each sample's contexts, read back from the dataset (issue 44); the
    # results themselves carry only what a pipeline retrieved.
    shown = [[c["text"] for c in s.pop("contexts")] for s in written["samples"]]
    assert shown == [GOOD["contexts"], BAD["contexts"]]
    assert [s.pop("contexts") for s in in_process["samples"]] == [[], []]
    assert written == in_process
    results = {s["id"]: s["results"]["faithfulness"] for s in written["samples"]}
    # Faithfulness is the seeds' share of supported claims: the copied fact 1.0, the wrong
    # number (its one claim CONTRADICTED) 0.0.
    assert results["good"]["score"] == 1.0 and results["good"]["passed"] is True
    assert results["bad"]["score"] == 0.0 and results["bad"]["passed"] is False


def test_threshold_gate_exit_codes(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, BAD])
    failing = vera(
        "eval", "--dataset", str(path), "--threshold", "0.8", "-o", "r.json", cwd=tmp_path
    )
    assert failing.returncode == 1
    report = json.loads((tmp_path / "r.json").read_text())
    scores = [s["scores"]["faithfulness"] for s in report["samples"]]
    mean = sum(scores) / len(scores)
    # One copied fact (1.0) and one wrong number (0.0): a mean below 0.8.
    assert mean < 0.8 and report["metric_summary"]["faithfulness"]["mean"] == pytest.approx(mean)
    assert f"faithfulness: mean {mean:.3f} is below 0.800" in failing.stderr
    # A mean that meets the threshold exactly passes the gate (BAD's unfaithful answer
    # tolerated, so that the mean's gate alone decides).
    at_mean = repr(report["metric_summary"]["faithfulness"]["mean"])
    passing = vera(
        "eval", "--dataset", str(path), "--threshold", at_mean, "--max-unfaithful", "1",
        cwd=tmp_path,
    )  # fmt: skip
    assert passing.returncode == 0, passing.stderr
    assert "Gate passed" in passing.stdout


def test_bad_row_exits_2_naming_file_line_and_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {"id": "x", "response": ["not", "text"]}])
    result = vera("eval", "--dataset", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert f"{path}: line 2, field 'response'" in result.stderr
    assert "Traceback" not in result.stderr


def test_skip_invalid_records_rows_in_the_report(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {"id": "x", "response": 3}, BAD])
    result = vera("eval", "--dataset", str(path), "--skip-invalid", "-o", "r.json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # BAD's answer is unfaithful
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["samples"]] == ["good", "bad"]
    assert report["invalid_rows"][0]["location"] == "line 2"
    assert report["invalid_rows"][0]["field"] == "response"
    assert report["counts"]["invalid_rows"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "missing.jsonl"], "dataset file not found: missing.jsonl"),
        (["--dataset", "notes.txt"], "unknown dataset format '.txt'"),
        (["--dataset", "d.jsonl", "--metric", "nope"], "unknown metric 'nope'"),
        (["--dataset", "d.jsonl", "--judge", "nope"], "unknown judge 'nope'"),
        ([], "give --dataset PATH, or --quick"),
        (["--quick", "--threshold", "1.5"], "--threshold"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    write_jsonl(tmp_path / "d.jsonl", [GOOD])
    (tmp_path / "notes.txt").write_text("hi")
    result = vera("eval", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())


def test_rows_without_response_need_a_pipeline(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "src/vera/datasets/examples/legal_mini.json"
    result = vera("eval", "--dataset", str(example), "-o", "r.json", cwd=tmp_path)
    # Both scored answers have an unsupported claim: the answer gate fails.
    assert result.returncode == 1, result.stderr
    assert "unfaithful answers: 2 of 2 answers have" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    statuses = [s["status"] for s in report["samples"]]
    assert statuses.count("needs_pipeline") == 4 and statuses.count("scored") == 2
    assert "need a pipeline" in result.stdout


def test_version_and_help(tmp_path: Path) -> None:
    assert vera("--version", cwd=tmp_path).stdout.startswith("vera ")
    help_text = vera("eval", "--help", cwd=tmp_path).stdout
    for flag in (
        "--dataset",
        "--metric",
        "--output",
        "--quick",
        "--threshold",
        "--judge",
        "--skip-invalid",
    ):
        assert flag in help_text


def test_lower_is_better_metrics_gate_in_their_direction(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, BAD])
    args = ("eval", "--dataset", str(path), "-m", "faithfulness", "-m", "hallucination_rate")
    result = vera(*args, "--threshold", "0.5", cwd=tmp_path)
    # faithfulness 0.5 meets 0.5; one of two claims contradicted gives a rate of 0.5, above
    # hallucination_rate's own threshold of 0, which --threshold does not loosen.
    assert result.returncode == 1
    assert "hallucination_rate: mean 0.500 is above 0.000" in result.stderr
    assert "faithfulness" not in result.stderr


def test_all_metrics_group_by_and_metrics_listing(tmp_path: Path) -> None:
    rows = [{**GOOD, "metadata": {"team": "a"}}, {**BAD, "id": "bad", "metadata": {"team": "b"}}]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    result = vera(
        "eval", "--dataset", str(path), "-m", "all", "--group-by", "team", "-o", "r.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # BAD's answer is unfaithful
    report = json.loads((tmp_path / "r.json").read_text())
    assert set(report["metric_summary"]) == set(vera_metrics())
    # Seed 001's extra keys ride in the metrics block beside the means.
    assert set(report["metrics"]) == set(vera_metrics()) | {"f1_score"}
    team = report["breakdowns"]["team"]
    scores = {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]}
    # One sample per team: each team's mean is its sample's score.
    assert team["a"]["faithfulness"]["mean"] == pytest.approx(scores["good"])
    assert team["b"]["faithfulness"]["mean"] == pytest.approx(scores["bad"])
    assert team["a"]["faithfulness"]["mean"] == 1.0 and team["b"]["faithfulness"]["mean"] == 0.0
    # The offline judge gives claim probabilities: faithfulness_probability ranks the two.
    probability = {s["id"]: s["scores"]["faithfulness_probability"] for s in report["samples"]}
    assert probability["good"] >= 0.9 and probability["bad"] < 0.5
    summary = report["metric_summary"]["faithfulness"]
    assert summary["ci_low"] <= summary["mean"] <= summary["ci_high"]
    assert summary["sub_scores"]["contradiction_rate"]["mean"] == 0.5
    assert report["metric_summary"]["grounding_recall"]["not_applicable"] == 2
    listing = vera("metrics", cwd=tmp_path)
    assert listing.returncode == 0
    assert all(name in listing.stdout for name in vera_metrics())


def vera_metrics() -> list[str]:
    from vera.metrics import METRIC_REGISTRY

    return METRIC_REGISTRY.builtin_names()


def test_baselines_side_by_side_with_laws_on_bundled_data(tmp_path: Path) -> None:
    result = vera(
        "eval", "--dataset", "technical", "--baseline", "naive-rag", "--baseline",
        "simple-verification", "-m", "faithfulness", "-m", "citation_accuracy",
        "--check-laws", "-o", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["pipeline"] == "vera" and report["counts"]["scored"] == 20
    block = report["baseline_comparison"]
    assert set(block["improvement_over_baseline"]) == {"naive_rag", "simple_verification"}
    assert set(block["naive_rag"]) == {"faithfulness", "citation_accuracy"}
    significance = block["significance"]["naive_rag"]["faithfulness"]
    assert significance["paired_samples"] == 20 and 0 < significance["p_value"] <= 1
    assert report["categorical_tests"] == {
        "functor_identity": "PASS",
        "functor_composition": "PASS",
        "natural_transformation_distribution": "PASS",
    }
    steps = report["samples"][0]["steps"]
    assert [s["name"] for s in steps] == ["retrieve:bm25@3", "generate:extractive", "verify@0.80"]
    assert "against the baselines" in result.stdout and "Pipeline laws" in result.stdout


def test_datasets_list_and_unknown_baseline(tmp_path: Path) -> None:
    listing = vera("datasets", "list", cwd=tmp_path)
    assert listing.returncode == 0
    for name in ("example", "legal", "research", "technical"):
        assert name in listing.stdout
    bad = vera("eval", "--dataset", "legal", "--baseline", "smart-rag", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown baseline 'smart-rag'" in bad.stderr


def test_a_folder_of_documents_is_the_corpus(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "auth.md").write_text(
        "# Auth\n\nEvery request needs an API key in the Authorization header.\n"
    )
    (docs / "limits.txt").write_text("Each account may send 100 requests per minute.\n")
    (docs / "image.png").write_bytes(b"\x89PNG")
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [{"id": "q1", "query": "How many requests per minute may an account send?"}],
    )
    result = vera(
        "eval", "--dataset", str(path), "--documents", str(docs), "--pipeline", "vera",
        "-o", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    sample = json.loads((tmp_path / "r.json").read_text())["samples"][0]
    assert sample["status"] == "scored" and sample["scores"]["faithfulness"] >= 0.9
    assert sample["results"]["faithfulness"]["passed"] is True
    assert "100 requests per minute" in sample["claims"][0]["text"]
    missing = vera("eval", "--dataset", str(path), "--documents", "nope", "--pipeline", "vera",
                   cwd=tmp_path)  # fmt: skip
    assert missing.returncode == 2 and "not a folder of documents" in missing.stderr


def test_junit_and_markdown_outputs(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    hostile = {**BAD, "id": "x<&>", "category": "fact|single"}
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, hostile])
    result = vera(
        "eval", "--dataset", str(path), "--threshold", "0.8",
        "--junit", "out/junit.xml", "--markdown", "out/summary.md", "-o", "out/r.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    mean = report["metric_summary"]["faithfulness"]["mean"]
    bad = next(s["scores"]["faithfulness"] for s in report["samples"] if s["id"] == "x<&>")
    assert mean < 0.8 and bad < 0.5
    suites = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    names = [s.get("name") for s in suites.findall("testsuite")]
    assert names == ["vera.answer_verdict", "vera.faithfulness"]
    answers = suites.find("testsuite[@name='vera.answer_verdict']")
    assert answers is not None and (answers.get("tests"), answers.get("failures")) == ("2", "1")
    unfaithful = answers.find("testcase[@name='x<&>']/failure")
    assert unfaithful is not None
    assert (unfaithful.get("message") or "").startswith("unfaithful answer: 1 of 1 claim is")
    suite = suites.find("testsuite[@name='vera.faithfulness']")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failed = suite.find("testcase[@name='x<&>']/failure")
    assert failed is not None and "60 days" in (failed.text or "")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"| faithfulness | {mean:.3f} |" in summary
    assert "**Gate failed:**" in summary and "below 0.800" in summary
    assert f"`x<&>` faithfulness {bad:.3f}" in summary


def test_offline_learned_threshold_is_a_flag_that_moves_the_verdicts(tmp_path: Path) -> None:
    def claims(*flags: str, judge: str = "offline:learned") -> list[dict[str, object]]:
        out = f"{len(flags)}-{judge}.json"
        result = vera("eval", "--quick", "--judge", judge, *flags, "--output", out, cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        report = json.loads((tmp_path / out).read_text())
        return [c for s in report["samples"] for c in s["claims"]]

    def fully(found: list[dict[str, object]]) -> set[str]:
        return {str(c["text"]) for c in found if c["verdict"] == "FULLY_SUPPORTED"}

    default = claims()
    assert all(isinstance(c["entailment"], float) for c in default)  # kept in the JSON report
    lenient = claims("--offline-min-support", "0")
    strict = claims("--offline-min-support", "1", "--no-history")
    assert fully(strict) <= fully(default) <= fully(lenient)
    assert fully(strict) != fully(lenient)
    # The probability decides, but for claims whose words a context window holds: at 1 only
    # those are fully supported (as the lexical judge finds them), at 0 all with a context is.
    assert fully(strict) and fully(strict) <= fully(claims("--no-history", judge="offline"))
    assert all(c["verdict"] == "FULLY_SUPPORTED" for c in lenient if c["entailment"])
    bad = vera("eval", "--quick", "--offline-min-support", "1.5", cwd=tmp_path)
    assert bad.returncode == 2 and "--offline-min-support" in bad.stderr
