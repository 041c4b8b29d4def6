"""`vera eval --judge PROVIDER:MODEL` end to end: the CLI in a subprocess, the real SDK, real
HTTP to a scripted server on 127.0.0.1 that plays the model.

The scripted model (`tests.support.scripted`) is a fake: it answers extraction by splitting the
answer at full stops and marks a claim CONTRADICTED when it holds "60", else supported.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.loopback import LoopbackServer, error
from tests.support.scripted import scripted_anthropic, scripted_openai

SAMPLES = [
    {
        "id": "a",
        "query": "Refund window?",
        "response": "The window is 60 days. Refunds go to the card.",
        "contexts": ["The refund window is 30 days.", "Refunds go to the original card."],
    },
    {
        "id": "b",
        "query": "Where is Paris?",
        "response": "Paris is in France.",
        "contexts": ["Paris is the capital of France."],
    },
]


def vera_eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`vera eval` over SAMPLES with `args`. Sample a's answer has one unsupported claim of
    two (faithfulness 0.5): an unfaithful answer, tolerated (`--max-unfaithful 1`) because
    these tests are about the judge's calls, not the answer gate."""
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("\n".join(json.dumps(s) for s in SAMPLES) + "\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "vera",
            "eval",
            "--dataset",
            str(dataset),
            "-o",
            "r.json",
            "--cache-path",
            str(tmp_path / "cache.sqlite"),
            "--max-unfaithful",
            "1",
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            # The same `vera` as the tests import (a worktree's src/), not another install.
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "HOME": str(tmp_path),
            "COLUMNS": "200",
            "OPENAI_API_KEY": "sk-secret-never-shown",
            "ANTHROPIC_API_KEY": "sk-ant-secret",
        },
    )


def test_openai_judge_scores_and_second_run_makes_zero_calls(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    # A hosted model on loopback: the compact replies a remote judge is asked for by default
    # (a judge on loopback is asked for reasoned ones unless told; test_reasoned_replies.py).
    args = (
        "--judge",
        "openai:gpt-4o-mini",
        "--judge-base-url",
        loopback.openai_url,
        "--judge-replies",
        "compact",
    )
    first = vera_eval(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert loopback.request_count == 4  # two calls per sample: extract, then verify all claims
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["judge"] == "openai:gpt-4o-mini"
    scores = {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]}
    assert scores == {"a": 0.5, "b": 1.0}
    usage = report["judge_details"]["usage"]
    assert (usage["calls"], usage["prompt_tokens"], usage["completion_tokens"]) == (4, 4000, 400)
    assert usage["cost_usd"] == 4 * (1000 * 0.15 + 100 * 0.60) / 1e6
    assert report["judge_details"]["prompt_versions"]["verify_claims"] == "verify_claims/6"
    assert "Judge calls: 4" in first.stdout
    text = (tmp_path / "r.json").read_text() + first.stdout + first.stderr
    assert "sk-secret-never-shown" not in text

    second = vera_eval(tmp_path, *args)
    assert second.returncode == 0, second.stderr
    assert loopback.request_count == 4  # the cached re-run made no request
    again = json.loads((tmp_path / "r.json").read_text())
    assert again["metrics"] == report["metrics"]
    assert again["judge_details"]["usage"]["cached_calls"] == 4

    third = vera_eval(tmp_path, *args, "--no-cache")
    assert third.returncode == 0 and loopback.request_count == 8


def test_anthropic_judge_over_tool_use(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = scripted_anthropic
    result = vera_eval(
        tmp_path,
        "--judge",
        "anthropic:claude-sonnet-4-5",
        "--judge-base-url",
        loopback.anthropic_url,
        "--no-cache",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]} == {"a": 0.5, "b": 1.0}
    assert all(r.path == "/v1/messages" for r in loopback.requests)


def test_unreachable_provider_fails_each_sample_not_the_run(tmp_path: Path) -> None:
    # Nothing listens on this port: every call is a refused connection, retried, then recorded.
    # --fail-fast 0 also turns off the readiness check a loopback server gets, which would
    # stop the run before its first call (tests/integration/test_local_judge_ready.py).
    result = vera_eval(
        tmp_path,
        "--judge",
        "openai:gpt-4o-mini",
        "--judge-base-url",
        "http://127.0.0.1:9/v1",
        "--no-cache",
        "--fail-fast",
        "0",
    )
    report = json.loads((tmp_path / "r.json").read_text())
    # Every sample errored: the run measured nothing, which is never a pass (exit 3).
    assert result.returncode == 3, result.stderr
    assert "no sample could be scored" in result.stderr
    assert report["counts"]["errors"] == 2
    assert "could not reach" in report["samples"][0]["error"]
    assert report["metrics"]["faithfulness"] is None


def test_dry_run_estimates_and_calls_nothing(loopback: LoopbackServer, tmp_path: Path) -> None:
    result = vera_eval(
        tmp_path,
        "--judge",
        "openai:gpt-4o-mini",
        "--judge-base-url",
        loopback.openai_url,
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    assert loopback.request_count == 0
    assert not (tmp_path / "r.json").exists()
    text = " ".join(result.stdout.split())
    assert "2 samples · 4 calls" in text and "No call was made" in text
    assert re.search(r"about \$0\.000\d+", text)


@pytest.mark.parametrize(
    ("mode", "calls"),
    [("single_call", 2), ("per_claim", 2 + 3), ("truths", 2 * 3)],
)
def test_judge_modes_over_http(
    loopback: LoopbackServer, tmp_path: Path, mode: str, calls: int
) -> None:
    loopback.default = scripted_openai
    result = vera_eval(
        tmp_path,
        "--judge",
        "openai:gpt-4o-mini",
        "--judge-base-url",
        loopback.openai_url,
        "--judge-mode",
        mode,
    )
    assert result.returncode == 0, result.stderr
    assert loopback.request_count == calls
    report = json.loads((tmp_path / "r.json").read_text())
    assert {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]} == {"a": 0.5, "b": 1.0}
    assert report["judge_details"]["mode"] == mode


def test_judge_samples_report_agreement(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = scripted_openai
    args = ["--judge", "openai:gpt-4o-mini", "--judge-base-url", loopback.openai_url]
    result = vera_eval(tmp_path, *args, "--judge-samples", "3", "--judge-temperature", "0.7")
    assert result.returncode == 0, result.stderr
    assert loopback.request_count == 2 * (1 + 3)
    temperatures = {r.json["temperature"] for r in loopback.requests}
    assert temperatures == {0.7}
    details = json.loads((tmp_path / "r.json").read_text())["judge_details"]
    assert details["samples"] == 3
    assert details["agreement"] == {"claims": 3, "mean": 1.0, "unanimous": 1.0}


def test_rejected_key_stops_the_run_at_once(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = lambda _: error(401, {"error": {"message": "Incorrect API key"}})
    result = vera_eval(
        tmp_path,
        "--judge",
        "openai:gpt-4o-mini",
        "--judge-base-url",
        loopback.openai_url,
        "--concurrency",
        "1",
    )
    assert result.returncode == 2
    assert loopback.request_count == 1  # not retried, and no other sample started
    assert "Run stopped" in result.stderr and "OPENAI_API_KEY" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["skipped"] == 2 and report["stopped"]["planned"] is False


def test_all_metrics_over_http_share_the_judge_calls(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    args = ["--judge", "openai:gpt-4o-mini", "--judge-base-url", loopback.openai_url]
    result = vera_eval(tmp_path, *args, "-m", "all")
    assert result.returncode == 0, result.stderr
    # No references: per sample, claims (2 calls) and relevance (1 call), nothing else.
    assert loopback.request_count == 2 * 3
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["metrics"]["context_relevance"] == 1.0
    assert report["metrics"]["hallucination_rate"] == 0.25
    by_label = report["judge_details"]["usage"]["by_label"]
    assert by_label["rate_relevance"]["calls"] == 2
