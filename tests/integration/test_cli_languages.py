"""`vera eval` in any language, the CLI in a subprocess: the bundled multilingual example with
a breakdown by language, a forced language the offline judge cannot read, and a sample in one
it cannot read."""

import json
import os
import subprocess
import sys
from pathlib import Path


def vera(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1", "HOME": str(cwd)}
    if "PYTHONPATH" in os.environ:  # a source checkout run without installing it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_multilingual_example_breaks_down_by_language(tmp_path: Path) -> None:
    run = vera("eval", "-d", "multilingual", "--group-by", "language", "-o", "r.json",
               "--no-history", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 1, run.stderr  # the example's planted errors, in ten languages
    assert "By language" in run.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    languages = {s["language"] for s in report["samples"]}
    assert languages == {"en", "de", "fr", "es", "pt", "it", "nl", "ja", "zh", "ko"}
    assert set(report["breakdowns"]["language"]) == languages


def test_a_language_the_offline_judge_cannot_read_is_bad_usage(tmp_path: Path) -> None:
    run = vera("eval", "-d", "multilingual", "--language", "pl", "--no-history", cwd=tmp_path)
    assert run.returncode == 2
    assert "does not read language 'pl'" in run.stderr
    assert "drop --language" in run.stderr


def test_a_sample_in_an_unread_language_leaves_the_run_incomplete(tmp_path: Path) -> None:
    row = {
        "id": "pl-1",
        "query": "Jaki jest okres zwrotu?",
        "response": "Okres zwrotu wynosi 60 dni od dostawy towaru.",
        "contexts": ["Okres zwrotu wynosi 60 dni od otrzymania towaru przez klienta."],
    }
    (tmp_path / "d.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n")
    run = vera("eval", "-d", "d.jsonl", "-o", "r.json", "--no-history", cwd=tmp_path)
    assert run.returncode == 3, run.stdout + run.stderr
    sample = json.loads((tmp_path / "r.json").read_text())["samples"][0]
    assert sample["status"] == "error"
    assert "unsupported_language" in str(sample["error"])
    assert "Polish (pl)" in str(sample["error"])
