"""`vera eval`'s exit codes (docs/reliability.md): a run that measured nothing, or less than it
was asked to, never exits 0.

0 every sample scored and every gate holds; 1 a gate failed; 2 bad usage or input (nothing was
evaluated); 3 the run is incomplete (samples errored or were skipped beyond --max-errors, or
no sample could be scored).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.support.cli import run_vera

import vera
from vera import Settings

# A user pipeline that answers from its query, and fails on the query "boom".
PIPELINE = """
from vera.pipelines import RagState
from vera import Context


def answer(query):
    if query == "boom":
        raise RuntimeError("the retriever is down")
    return {"answer": f"{query} is true.", "contexts": [f"{query} is true."]}
"""


def vera_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_vera(tmp_path, "eval", "--no-history", *args, timeout=120)


def queries(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "q.jsonl"
    rows = [{"id": f"q{i}", "query": text} for i, text in enumerate(texts)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "my_rag.py").write_text(PIPELINE)
    return path


def test_an_errored_sample_makes_the_run_incomplete(tmp_path: Path) -> None:
    data = queries(tmp_path, "Paris", "boom", "Lyon", "Nice")
    args = ("-d", str(data), "--pipeline", "my_rag:answer", "-o", "r.json")
    result = vera_cli(tmp_path, *args)
    assert result.returncode == 3, result.stderr
    assert "Run incomplete:" in result.stderr
    assert "1 of 4 samples errored or were skipped (--max-errors allows 0)" in result.stderr
    # The report is still written: the three scored samples and the error.
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["counts"]["scored"], report["counts"]["errors"]) == (3, 1)
    assert vera_cli(tmp_path, *args, "--max-errors", "1").returncode == 0
    assert vera_cli(tmp_path, *args, "--max-errors", "25%").returncode == 0
    assert vera_cli(tmp_path, *args, "--max-errors", "20%").returncode == 3
    # A gate that holds does not hide an incomplete run.
    assert vera_cli(tmp_path, *args, "--threshold", "0.5").returncode == 3


def test_no_sample_scored_is_incomplete_even_with_a_generous_budget(tmp_path: Path) -> None:
    data = queries(tmp_path, "boom", "boom", "boom")
    result = vera_cli(tmp_path, "-d", str(data), "--pipeline", "my_rag:answer",
                      "--max-errors", "100%", "--threshold", "0.5")  # fmt: skip
    assert result.returncode == 3
    assert "no sample could be scored" in result.stderr
    assert "Gate passed" not in result.stdout


def test_nothing_to_measure_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    empty = vera_cli(tmp_path, "-d", "empty.jsonl", "--threshold", "0.5")
    assert empty.returncode == 2 and "no samples in empty.jsonl" in empty.stderr
    assert "Gate passed" not in empty.stdout
    (tmp_path / "q.jsonl").write_text('{"id": "a", "query": "Where is Paris?"}\n')
    unanswered = vera_cli(tmp_path, "-d", "q.jsonl")
    assert unanswered.returncode == 2
    assert "--pipeline" in unanswered.stderr and "--baseline" in unanswered.stderr


def test_fields_read_as_metadata_are_named(tmp_path: Path) -> None:
    rows = [{"id": "a", "query": "Where is Paris?", "answer_text": "In France.", "team": "x"}]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    unanswered = vera_cli(tmp_path, "-d", "q.jsonl")
    assert unanswered.returncode == 2
    said = " ".join(unanswered.stderr.split())
    assert "its column 'answer_text' holds the longest text" in said  # not 'team'
    assert "--field response=answer_text" in said
    rows[0]["response"] = "Paris is in France."
    rows[0]["contexts"] = ["Paris is the capital of France."]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    scored = vera_cli(tmp_path, "-d", "q.jsonl", "-o", "r.json")
    assert scored.returncode == 0, scored.stderr
    assert "Not VERA fields, kept as metadata: answer_text, team" in scored.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["unrecognised_fields"] == ["answer_text", "team"]


def test_every_row_invalid_under_skip_invalid_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": "a", "response": 3}\n{"id": "b", "response": []}\n')
    result = vera_cli(tmp_path, "-d", "d.jsonl", "--skip-invalid", "--threshold", "0.5")
    assert result.returncode == 3
    assert "no sample could be scored" in result.stderr


@pytest.mark.parametrize(
    ("max_errors", "samples", "allowed"),
    [("0", 10, 0), ("3", 10, 3), ("10%", 200, 20), ("2.5%", 200, 5), ("50%", 3, 1)],
)
def test_error_budget(max_errors: str, samples: int, allowed: int) -> None:
    assert Settings(max_errors=max_errors).error_budget(samples) == allowed


def test_a_malformed_budget_is_a_config_error() -> None:
    with pytest.raises(vera.ConfigError, match="max_errors"):
        Settings().merge({"max_errors": "a few"}, origin="command line")


def test_brackets_in_data_are_printed_as_text_never_as_markup(tmp_path: Path) -> None:
    rows = [
        {"id": "[bold]a[/bold]", "query": "Refund window?", "category": "[link=x]",
         "response": "[/INST] The refund window is 60 days.",
         "contexts": ["The refund window is 30 days."], "metadata": {"team": "[v2]"}},
        {"id": "b", "query": "q", "response": "[red]Paris is in France.[/red]",
         "contexts": ["Paris is in France."], "category": "[openai]"},
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = vera_cli(tmp_path, "-d", "d.jsonl", "--threshold", "0.9", "--group-by", "team",
                      "-o", "r.json")  # fmt: skip
    # A gate fails (exit 1), not a crash (MarkupError used to exit 1 with no report).
    assert result.returncode == 1, result.stderr
    assert "MarkupError" not in result.stderr and "Traceback" not in result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["scored"] == 2
    shown = result.stdout
    for text in ("[bold]a[/bold]", "[/INST] The refund window", "[link=x]", "[openai]", "[v2]"):
        assert text in shown, text
