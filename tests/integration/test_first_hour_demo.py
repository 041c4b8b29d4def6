"""Issue 44, item 2: the baseline comparison the docs show (the README's command, its output in
docs/pipelines.md) shows something without a key, and is the output the command prints."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import run_vera

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PIPELINES = ROOT / "docs" / "pipelines.md"
COMMAND = "vera eval --dataset example --baseline naive-rag --baseline simple-verification"


def _shown_comparison() -> list[str]:
    """The lines of docs/pipelines.md's ```text block that shows the comparison."""
    assert COMMAND in README.read_text(encoding="utf-8")
    text = PIPELINES.read_text(encoding="utf-8")
    assert COMMAND in text
    block = text.split("```text\nthis run against the baselines\n", 1)[1].split("```", 1)[0]
    return ["this run against the baselines", *block.strip().splitlines()]


def test_the_shown_comparison_differs_offline_and_is_what_vera_prints(tmp_path: Path) -> None:
    done = run_vera(tmp_path, *COMMAND.split()[1:], COLUMNS="100")  # as a terminal shows it
    # The system's planted unfaithful answers fail the answer gate (--max-unfaithful 0).
    assert done.returncode == 1, done.stderr
    printed = [" ".join(line.split()) for line in done.stdout.splitlines()]
    for line in _shown_comparison():
        assert " ".join(line.split()) in printed, line
    assert "+0.0 %" not in done.stdout  # the system and the baselines differ
    assert "Note: offline" not in done.stderr


def test_baselines_that_tie_by_construction_say_why(tmp_path: Path) -> None:
    args = ("eval", "--dataset", "legal", "--quick", "--no-history")
    tied = run_vera(tmp_path, *args, "--baseline", "naive-rag", "--baseline", "simple-verification")
    assert tied.returncode == 0, tied.stderr
    said = " ".join(tied.stderr.split())
    assert "faithful by construction" in said
    assert COMMAND in said
