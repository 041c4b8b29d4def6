"""Input that could mislead and output that could be abused (issue 14): Markdown that a dataset
cannot break out of, comparisons that refuse what does not pair, pipelines found where the user
is, and documents that never leave their folder."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from tests.support.cli import run_vera

import vera
from vera._baselines import load_documents
from vera.render._markdown import render_markdown

WHITEBOX = "the baselines' own parts"


def vera_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_vera(tmp_path, *args, timeout=120)


def test_markdown_cannot_be_broken_out_of_by_ids_or_text() -> None:
    hostile = "a` <img src=x onerror=alert(1)> ![x](https://evil.example/p.png) **bold**"
    report = vera.evaluate(
        [
            {
                "id": "id`` with ``` backticks",
                "response": f"The window is 60 days. {hostile}",
                "contexts": ["The window is 30 days."],
            }
        ],
        threshold=0.9,
    )
    text = render_markdown(report, gate_failures=["faithfulness: mean below 0.900"])
    line = next(line for line in text.splitlines() if "backticks" in line)
    # The id sits in a code span whose fence is longer than any backtick run inside it.
    assert "```` id`` with ``` backticks ````" in line or "````id`` with ``` backticks````" in line
    assert "<img" not in text and "&lt;img" in text
    assert "![x]" not in text and r"!\[x\]" in text  # the image cannot form
    assert "**bold**" not in text


def test_compare_refuses_runs_of_different_datasets_and_says_what_is_paired(
    tmp_path: Path,
) -> None:
    for dataset in ("example", "legal"):
        args = ["eval", "-d", dataset, "--quick", "--history", "h.sqlite"]
        if dataset == "legal":
            args += ["--pipeline", "naive-rag"]
        # 1: the unfaithful answers fail the answer gate; the run is stored all the same.
        assert vera_cli(tmp_path, *args).returncode in (0, 1)
    result = vera_cli(tmp_path, "runs", "list", "--history", "h.sqlite")
    example_run, legal_run = sorted(re.findall(r"\d{8}-\d{6}-[0-9a-f]{6}", result.stdout))
    refused = vera_cli(tmp_path, "compare", example_run, legal_run, "--history", "h.sqlite")
    assert refused.returncode == 2
    assert "do not pair" in refused.stderr and "--any-dataset" in refused.stderr
    forced = vera_cli(
        tmp_path, "compare", example_run, legal_run, "--history", "h.sqlite", "--any-dataset"
    )
    assert forced.returncode == 0
    assert "0 paired samples" in forced.stdout and "nothing paired" in forced.stdout
    assert "No sample id is in both runs" in forced.stderr


PIPELINE = """
def answer(query):
    return {"answer": "Paris is in France.", "contexts": ["Paris is in France."]}
"""


def test_a_pipeline_module_in_the_current_folder_is_found(tmp_path: Path) -> None:
    (tmp_path / "my_rag.py").write_text(PIPELINE)
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "a", "query": "Where is Paris?"}) + "\n")
    result = vera_cli(tmp_path, "eval", "-d", "q.jsonl", "--pipeline", "my_rag:answer")
    assert result.returncode == 0, result.stderr
    missing = vera_cli(tmp_path, "eval", "-d", "q.jsonl", "--pipeline", "their_rag:answer")
    assert missing.returncode == 2
    said = " ".join(missing.stderr.split())
    assert "no module 'their_rag' in the current folder" in said and "PYTHONPATH" in said


def test_documents_never_follow_a_link_out_of_their_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("The password is hunter2.")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("Refunds take 30 days.")
    (folder / "linked.txt").symlink_to(secret)
    (folder / "inside.md").symlink_to(folder / "guide.md")
    with pytest.warns(UserWarning, match=r"linked.txt: skipped, a link to .*secret.txt"):
        documents = load_documents(folder)
    assert sorted(d.id or "" for d in documents) == ["guide.md", "inside.md"]
    assert all("hunter2" not in d.text for d in documents)
