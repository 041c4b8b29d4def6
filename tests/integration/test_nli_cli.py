"""`vera eval --judge nli:PATH` as a user runs it: a subprocess, a real model folder on disk."""

import json
import subprocess
import sys
from pathlib import Path

from tests.support.tiny_nli import build_model


def test_eval_with_a_local_nli_model(tmp_path: Path) -> None:
    model = build_model(tmp_path / "tiny-nli")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vera",
            "eval",
            "--quick",
            "--judge",
            f"nli:{model}",
            "--no-history",
            "-o",
            "r.json",
            "--markdown",
            "r.md",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "COLUMNS": "200",
            "NO_COLOR": "1",
            "HF_HUB_OFFLINE": "1",  # the model is on disk; nothing may be fetched
        },
    )
    # The tiny test model's verdicts leave most answers with an unsupported claim, which the
    # answer gate fails (exit 1); the run itself completes and writes its reports.
    assert result.returncode == 1, result.stderr
    assert "unfaithful answers:" in result.stderr
    assert "judge: nli" in " ".join(result.stdout.split())  # a long model path wraps the title
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["judge"] == f"nli:{model}"  # the full spec, so two runs can be told apart
    details = report["judge_details"]
    assert details["model"] == str(model) and details["device"] in {"cpu", "cuda"}
    assert details["entailment_label"] == "entailment" and details["pairs_scored"] > 0
    assert report["counts"]["scored"] == 10 and report["counts"]["errors"] == 0
    claims = [c for s in report["samples"] for c in s["claims"]]
    assert claims and all(c["reason"].startswith(("entailment", "best", "contra")) for c in claims)
    assert "Judge `nli:" in (tmp_path / "r.md").read_text()
