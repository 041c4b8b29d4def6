"""The run core end to end (issue 13): `vera eval` as a user runs it, the real OpenAI SDK over
real HTTP to a scripted model on 127.0.0.1 (`tests.support.scripted`, a fake that splits
answers at full stops and contradicts claims holding "60").

- an LLM judge with two baselines at concurrency 16 scores and pairs every baseline sample
  (one event loop: the provider limiter never meets a second loop);
- a run killed with SIGKILL and resumed goes on with its own prompts, cache and budget;
- the dry run counts the calls of every pass, checked against the server's own count;
- a plugin metric is listed by `vera metrics` and taken by `-m all`;
- the judge that ran is recorded by its full spec.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer, Recorded, Reply
from tests.support.plugin import write_plugin
from tests.support.scripted import GeneratorScript, scripted_openai

import vera
from vera import Settings
from vera.judges._prompts import load_prompt

WHITEBOX = "the judges' own prompts, matrix and checks"

JUDGE = "openai:gpt-4o-mini"


KEYS = {"OPENAI_API_KEY": "sk-test-never-shown"}


def vera_cli(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return run_vera(tmp_path, *args, **KEYS, **extra)


def test_llm_judge_with_two_baselines_at_concurrency_16_scores_and_pairs_every_sample(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    result = vera_cli(
        tmp_path, "eval", "-d", "legal", "--quick", "--judge", JUDGE,
        "--judge-base-url", loopback.openai_url, "--baseline", "naive-rag",
        "--baseline", "simple-verification", "--concurrency", "16", "--no-cache",
        "--no-history", "-o", "r.json", "--max-unfaithful", "100%",
    )  # fmt: skip
    # (--max-unfaithful 100%: the scripted judge contradicts every claim with a 60 in it, and
    # this test is about scoring and pairing baselines, not the answer gate.)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["scored"] == 10 and report["counts"]["errors"] == 0
    block = report["baseline_comparison"]
    for baseline in ("naive_rag", "simple_verification"):
        assert block[baseline]["faithfulness"] is not None
        assert block["significance"][baseline]["faithfulness"]["paired_samples"] == 10

    # The same run from Python, through the same plan and run core.
    python = vera.evaluate(
        "legal",
        judge=JUDGE,
        baselines=["naive-rag", "simple-verification"],
        quick=True,
        concurrency=16,
        settings=Settings(judge_base_url=loopback.openai_url, cache=False),
    )
    assert python.counts["scored"] == 10
    assert python.baseline_comparison is not None
    for baseline in ("naive_rag", "simple_verification"):
        paired = python.baseline_comparison.comparison(baseline, "faithfulness")
        assert paired is not None and paired.paired_samples == 10


MARKER = "CUSTOM PROMPT IN USE."


def custom_prompts(folder: Path) -> Path:
    """Copies of the two batched-mode prompts with their own versions and a marker the server
    can see in every request."""
    folder.mkdir()
    for name in ("extract_claims", "verify_claims"):
        prompt = load_prompt(name)
        text = (
            f'version = "{name}/custom-7"\n'
            f"system = {json.dumps(MARKER + ' ' + prompt.system)}\n"
            f"user = {json.dumps(prompt.user)}\n"
        )
        (folder / f"{name}.toml").write_text(text, encoding="utf-8")
    return folder


def file_hash(folder: Path, name: str) -> str:
    return hashlib.sha256((folder / f"{name}.toml").read_bytes()).hexdigest()[:12]


def stored_results(history: Path) -> int:
    if not history.exists():
        return 0
    with sqlite3.connect(history) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_a_killed_run_resumes_with_its_own_prompts_cache_and_budget(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    def slow(request: Recorded) -> Reply:
        return replace(scripted_openai(request), delay_s=0.15)

    loopback.default = slow
    rows = [
        {"id": f"s{i}", "query": "q", "response": f"Fact {i} holds. Another {i} holds.",
         "contexts": [f"Fact {i} holds. Another {i} holds."]}
        for i in range(24)
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    prompts = custom_prompts(tmp_path / "prompts")
    history = tmp_path / "runs.sqlite"
    args = [
        "-m", "vera", "eval", "-d", "d.jsonl", "--judge", JUDGE, "--judge-base-url",
        loopback.openai_url, "--prompts-dir", str(prompts), "--cache-path", "cache.sqlite",
        "--max-cost", "7.5", "--concurrency", "2", "--history", str(history),
    ]  # fmt: skip
    # PYTHONPATH kept: the killed run and its resume import the same `vera` (a worktree's src/).
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **KEYS}
    environment["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    process = subprocess.Popen(
        [sys.executable, *args], cwd=tmp_path, env=environment,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while stored_results(history) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    finished_before = stored_results(history)
    assert 6 <= finished_before < len(rows), "the run must be killed mid-way"
    requests_before = loopback.request_count
    with sqlite3.connect(history) as db:
        run_id, options = db.execute("SELECT id, options FROM runs").fetchone()
    plan = json.loads(options)
    assert plan["settings"]["judge_prompts_dir"] == str(prompts)
    assert plan["settings"]["cache_path"] == "cache.sqlite"
    assert plan["settings"]["max_cost"] == 7.5

    resumed = vera_cli(
        tmp_path, "eval", "--resume", run_id, "--history", str(history), "-o", "r.json",
        # A stored run never chooses files of code or prompts, nor where the key goes.
        "--prompts-dir", str(prompts), "--judge-base-url", loopback.openai_url,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["scored"] == len(rows)
    # A replaced prompt is versioned by its content too, so no copy can pass for another.
    assert report["judge_details"]["prompt_versions"] == {
        "extract_claims": f"extract_claims/custom-7+sha256:{file_hash(prompts, 'extract_claims')}",
        "verify_claims": f"verify_claims/custom-7+sha256:{file_hash(prompts, 'verify_claims')}",
        "rate_relevance": "rate_relevance/2",
    }
    # Every request, before and after the kill, carried the custom prompt.
    systems = [r.json["messages"][0]["content"] for r in loopback.requests]
    assert all(text.startswith(MARKER) for text in systems)
    # Only unfinished samples were judged again: two calls each, and the in-flight ones
    # (at most the concurrency) may be asked once more.
    redone = loopback.request_count - requests_before
    left = len(rows) - finished_before
    assert 2 * left - 2 * 2 <= redone <= 2 * left
    usage = report["judge_details"]["usage"]
    assert usage["calls"] - usage["cached_calls"] == redone  # the resumed process's own calls


def dry_run_calls(result: subprocess.CompletedProcess[str]) -> int:
    found = re.search(r"(\d+) calls", " ".join(result.stdout.split()))
    assert found, result.stdout
    return int(found.group(1))


@pytest.mark.parametrize(
    ("pipeline", "baseline", "invented"),
    [
        ("naive-rag", "simple-verification", None),
        # The generator invents a contradicted figure, so the vera baseline revises every
        # answer: the dry run's revision count (an upper bound) is then exact.
        ("vera", "naive-rag", "The contract also pays 60 euros a day."),
    ],
)
def test_dry_run_counts_the_calls_of_pipelines_and_baselines(
    loopback: LoopbackServer, tmp_path: Path, pipeline: str, baseline: str, invented: str | None
) -> None:
    loopback.default = GeneratorScript(invented=invented)
    args = (
        "eval", "-d", "legal", "--quick", "--judge", JUDGE, "--judge-base-url",
        loopback.openai_url, "--generator", JUDGE, "--pipeline", pipeline, "--baseline",
        baseline, "--no-cache", "--no-history", "--max-unfaithful", "100%",
    )  # fmt: skip
    dry = vera_cli(tmp_path, *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert loopback.request_count == 0, "a dry run calls nothing"
    estimated = dry_run_calls(dry)
    assert f"{pipeline}: 10 samples" in dry.stdout and f"{baseline}: 10 samples" in dry.stdout
    real = vera_cli(tmp_path, *args, "-o", "r.json")
    assert real.returncode == 0, real.stderr
    made = loopback.request_count
    assert made > 40
    assert abs(estimated - made) <= 0.05 * made, (estimated, made)


def test_a_plugin_metric_is_listed_and_taken_by_all(tmp_path: Path) -> None:
    site = write_plugin(tmp_path / "site")
    listing = vera_cli(tmp_path, "metrics", PYTHONPATH=str(site))
    assert listing.returncode == 0, listing.stderr
    assert "plugin_metric" in listing.stdout and "faithfulness" in listing.stdout
    result = vera_cli(
        tmp_path, "eval", "--quick", "-m", "all", "--no-history", "-o", "r.json",
        PYTHONPATH=str(site),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # unfaithful answers: gate
    report = json.loads((tmp_path / "r.json").read_text())
    assert "plugin_metric" in report["metric_summary"]
    assert report["metric_summary"]["plugin_metric"]["scored"] > 0


def test_the_judge_is_recorded_by_its_full_spec_everywhere(tmp_path: Path) -> None:
    result = vera_cli(
        tmp_path, "eval", "--quick", "--judge", "offline:learned", "-o", "r.json",
        "--markdown", "r.md", "--html", "r.html", "--junit", "r.xml",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # unfaithful answers: gate
    assert "judge: offline:learned" in result.stdout
    assert json.loads((tmp_path / "r.json").read_text())["judge"] == "offline:learned"
    assert "Judge `offline:learned`" in (tmp_path / "r.md").read_text()
    assert "offline:learned" in (tmp_path / "r.html").read_text()
    with sqlite3.connect(tmp_path / ".vera" / "runs.sqlite") as db:
        (stored,) = db.execute("SELECT json_extract(report, '$.judge') FROM runs").fetchone()
    assert stored == "offline:learned"
