"""Issue 44's "done means": a newcomer's first hour, scripted. The README's commands in the
order a new user meets them, in a fresh folder, with no key; wherever a command prints a hint,
the hint is followed literally and must work.

(The walk runs `vera` from this interpreter's environment. It sits among the unit tests so that
`.ci/run` runs it first in a fresh virtual environment with the README's `pip install -e
'.[test]'` alone, as a newcomer's machine has it.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support.cli import run_vera

# Each test starts `vera` in subprocesses: out of the quick loop (CONTRIBUTING.md).
pytestmark = pytest.mark.slow


README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _vera(folder: Path, command: str, *codes: int) -> tuple[str, str]:
    """Run a `vera ...` command line as printed; its stdout and stderr, whitespace-joined."""
    done = run_vera(folder, *command.split()[1:], COLUMNS="100")
    assert done.returncode in (codes or (0,)), (command, done.stdout[-2000:], done.stderr)
    return " ".join(done.stdout.split()), " ".join(done.stderr.split())


def _readme_has(command: str) -> str:
    assert command in README, command
    return command


def test_the_first_hour(tmp_path: Path) -> None:
    # 1. The quick start, then a gate that fails and says where every sample is.
    # Exit 1: three of the first ten example answers carry a planted unsupported claim.
    _vera(tmp_path, _readme_has("vera eval --quick"), 1)
    said, _ = _vera(tmp_path, "vera eval -d example --threshold 0.9", 1)
    hint = re.search(r"\(-o (report\.json) or -o (report\.html); from the run history, (vera "
                     r"report RUN_ID -o report\.html)\)", said)  # fmt: skip
    assert hint is not None, said
    _vera(tmp_path, f"vera eval -d example --threshold 0.9 -o {hint[2]}", 1)
    assert (tmp_path / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
    run_id = re.search(r"(\d{8}-\d{6}-[0-9a-f]{6})", _vera(tmp_path, "vera runs list")[0])
    assert run_id is not None
    _vera(tmp_path, hint[3].replace("RUN_ID", run_id[1]).replace("report.html", "again.html"))
    assert (tmp_path / "again.html").exists()

    # 2. A typo in a bundled name: "did you mean" gives the flag to use.
    _, said = _vera(tmp_path, "vera eval --dataset exmaple --no-history", 2)
    meant = re.search(r"\((--dataset \w+)\)", said)
    assert meant is not None, said
    _vera(tmp_path, f"vera eval {meant[1]} --quick --no-history", 1)

    # 3. Conversations, as threads; the commands they close with.
    said, _ = _vera(tmp_path, _readme_has("vera conversations conversations"), 0, 1)
    closing = said.split("Turn run stored as ", 1)[1].split(": ", 1)[1].split(" Faithful turns")[0]
    for command in closing.split("; ")[:2]:
        _vera(tmp_path, command)

    # 4. The baseline comparison the docs show (docs/pipelines.md): the system and baselines differ.
    said, _ = _vera(tmp_path, _readme_has(
        "vera eval --dataset example --baseline naive-rag --baseline simple-verification"
    ), 1)  # fmt: skip
    assert "system 0.762 · naive_rag 1.000, change -23.8 % worse" in said

    # 5. A file whose columns VERA does not know: the hint's flags, followed, score it.
    rows = [
        {"prompt": "How long is the refund window?", "output": "Refunds take 30 days.",
         "docs": ["Refunds take 30 days from the purchase."]},
    ]  # fmt: skip
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, said = _vera(tmp_path, "vera eval -d mine.jsonl", 2)
    flags = re.search(r"map it: ((?:--field \S+ ?)+)", said)
    assert flags is not None, said
    _vera(tmp_path, f"vera eval -d mine.jsonl {flags[1].strip()} -o mine.json")
    assert json.loads((tmp_path / "mine.json").read_text())["counts"]["scored"] == 1

    # 6. A test set from documents without a key, then evaluated against a baseline.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "policy.md").write_text(
        "Refunds are accepted within 30 days of purchase. Express shipping costs 12 euros "
        "and takes 2 business days. Gift cards cannot be refunded once they are redeemed.\n"
    )
    _vera(tmp_path, "vera generate --documents docs --generator extractive --n 3 -o generated.json")
    _vera(tmp_path, "vera eval --dataset generated.json --baseline naive-rag")
