"""Run history: a run killed mid-way resumes without redoing or losing finished samples;
runs can be listed, shown, compared and their reports written again.

`crashy_rag.answer` is a pipeline written for these tests: it counts its calls in a file and,
when told to, kills its own process (like a machine going down) at the N-th query.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import vera
from vera.render._html import read_samples

WHITEBOX = "the HTML report's stored samples, read back"

SOURCE = str(Path(vera.__file__).parent.parent)
"""The tree this test imports VERA from, for the `vera` it runs to use the same."""

PIPELINE = """
import os, pathlib
def answer(query):
    counter = pathlib.Path(os.environ["CALLS_FILE"])
    calls = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(calls))
    if os.environ.get("CRASH_AT") and calls == int(os.environ["CRASH_AT"]):
        os._exit(137)
    return {"response": query + " is a fact.", "contexts": [query + " is a fact."]}
"""


def vera(
    tmp_path: Path, *args: str, crash_at: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), SOURCE]),
        "CALLS_FILE": str(tmp_path / "calls.txt"),
    }  # fmt: skip
    if crash_at is not None:
        env["CRASH_AT"] = str(crash_at)
    return subprocess.run(
        [sys.executable, "-m", "vera", *args], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def calls(tmp_path: Path) -> int:
    return int((tmp_path / "calls.txt").read_text())


def test_a_killed_run_resumes_without_redoing_or_losing_work(tmp_path: Path) -> None:
    (tmp_path / "crashy_rag.py").write_text(PIPELINE)
    rows = [{"id": f"q{i}", "query": f"Fact number {i}"} for i in range(10)]
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ("eval", "--dataset", "d.jsonl", "--pipeline", "crashy_rag:answer", "--concurrency", "1")
    killed = vera(tmp_path, *args, crash_at=7)
    assert killed.returncode == 137
    run_id = killed.stderr.split("Run ", 1)[1].split()[0]
    listed = vera(tmp_path, "runs", "list")
    assert run_id in listed.stdout and "running" in listed.stdout
    assert calls(tmp_path) == 7  # six answered and stored, the seventh killed the process

    resumed = vera(tmp_path, "eval", "--resume", run_id, "-o", "r.json")
    assert resumed.returncode == 2  # the history never chooses the code to run
    assert "--pipeline: stored 'crashy_rag:answer', not given" in resumed.stderr
    assert calls(tmp_path) == 7
    named = ("--pipeline", "crashy_rag:answer")
    resumed = vera(tmp_path, "eval", "--resume", run_id, *named, "-o", "r.json")
    assert resumed.returncode == 0, resumed.stderr
    assert calls(tmp_path) == 7 + 4  # only q6..q9 again: nothing finished is redone
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["samples"]] == [f"q{i}" for i in range(10)]
    assert report["counts"]["scored"] == 10
    # Every answer repeats its context word for word: each scores near 1 and passes.
    assert report["metrics"]["faithfulness"] >= 0.9
    assert all(s["results"]["faithfulness"]["passed"] for s in report["samples"])

    shown = vera(tmp_path, "runs", "show", run_id[:12])
    assert "finished" in shown.stdout and "crashy_rag:answer" in shown.stdout
    again = vera(tmp_path, "report", run_id, "-o", "again.json")
    assert again.returncode == 0
    assert json.loads((tmp_path / "again.json").read_text()) == report


def test_compare_two_stored_runs(tmp_path: Path) -> None:
    good = {
        "id": "a",
        "query": "q",
        "response": "Paris is in France.",
        "contexts": ["Paris is in France."],
    }
    bad = {**good, "response": "Paris is in Spain."}
    # The same dataset file, before and after the system's answers changed.
    (tmp_path / "one.jsonl").write_text(json.dumps(good) + "\n")
    first = vera(tmp_path, "eval", "--dataset", "one.jsonl", "-o", "first.json")
    (tmp_path / "one.jsonl").write_text(json.dumps(bad) + "\n")
    second = vera(tmp_path, "eval", "--dataset", "one.jsonl", "-o", "second.json")
    ids = [r.stderr.split("Run ", 1)[1].split()[0] for r in (first, second)]
    before, after = (
        json.loads((tmp_path / name).read_text())["samples"][0]["scores"]["faithfulness"]
        for name in ("first.json", "second.json")
    )
    assert before >= 0.9 and after < 0.5  # the copied fact, then the contradicted one
    compared = vera(tmp_path, "compare", *ids)
    assert compared.returncode == 0, compared.stderr
    change = (after - before) / before * 100
    assert "faithfulness" in compared.stdout and f"{change:+.1f} %" in compared.stdout
    assert "1 paired samples" in compared.stdout
    assert f"a · faithfulness {before:.3f} -> {after:.3f}" in compared.stdout
    missing = vera(tmp_path, "compare", ids[0], "nope")
    assert missing.returncode == 2 and "no run 'nope'" in missing.stderr
    none = vera(tmp_path, "eval", "--dataset", "one.jsonl", "--no-history")
    assert "Run " not in none.stderr


def test_html_reports_from_eval_and_from_the_store(tmp_path: Path) -> None:
    (tmp_path / "crashy_rag.py").write_text(PIPELINE)
    # Whole runs: a --quick run is left out of its dataset's trend (issue 44).
    first = vera(tmp_path, "eval", "-d", "example", "--html", "one.html")
    second = vera(tmp_path, "eval", "-d", "example", "--html", "two.html")
    # The example's unfaithful answers fail the answer gate; both runs are stored all the same.
    assert first.returncode == 1 and second.returncode == 1, second.stderr
    page = (tmp_path / "two.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert "verdict-contradicted" in page or "CONTRADICTED" in page
    assert "Trend" in page and "Trend" not in (tmp_path / "one.html").read_text()
    run_id = second.stderr.split("Run ", 1)[1].split()[0]
    again = vera(tmp_path, "report", run_id, "--format", "html", "-o", "again.html")
    assert again.returncode == 0, again.stderr
    # The page rendered from the store holds the same samples, claims and spans as the one the
    # run wrote (both streamed their results from the history).
    details = read_samples(page)["details"]
    assert details and read_samples((tmp_path / "again.html").read_text())["details"] == details


def test_regression_gate_fails_only_on_a_significant_drop(tmp_path: Path) -> None:
    fact = "The refund window is 30 days."

    def write(wrong: int) -> None:
        rows = [
            {"id": f"s{i}", "query": "q", "contexts": [fact],
             "response": "The refund window is 90 days." if i < wrong else fact}
            for i in range(24)
        ]  # fmt: skip
        (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    # Wrong answers are unfaithful: tolerated here, so that the regression gate alone decides.
    tolerate = ("--max-unfaithful", "100%")
    write(0)
    first = vera(tmp_path, "eval", "--dataset", "d.jsonl", "--regression", *tolerate)
    assert first.returncode == 0, first.stderr  # nothing to compare with yet
    write(1)
    slight = vera(
        tmp_path, "eval", "--dataset", "d.jsonl", "--regression", "-o", "slight.json", *tolerate
    )
    assert slight.returncode == 0, slight.stderr  # one sample worse: within the noise
    assert "no significant drop against run" in slight.stdout
    write(12)
    worse = vera(
        tmp_path, "eval", "--dataset", "d.jsonl", "--regression", "-o", "worse.json", *tolerate
    )
    assert worse.returncode == 1
    slight_mean, worse_mean = (
        json.loads((tmp_path / name).read_text())["metrics"]["faithfulness"]
        for name in ("slight.json", "worse.json")
    )
    assert worse_mean < slight_mean
    assert f"faithfulness: {slight_mean:.3f} -> {worse_mean:.3f} against run" in worse.stderr
    first_id = first.stderr.split("Run ", 1)[1].split()[0]
    explicit = vera(tmp_path, "eval", "--dataset", "d.jsonl", "--baseline-run", first_id, *tolerate)
    assert explicit.returncode == 1 and f"against run {first_id}" in explicit.stderr
