"""The fault matrix of docs/reliability.md: each provider fault, for OpenAI and Anthropic, and
the outcome `vera eval` must give: samples scored, errored and skipped, none lost, the exit code
and the message that says what happened.

Each case is a real `vera eval` in a subprocess, its judge the real provider SDK talking to the
fault-injecting loopback server (`tests.support.faults`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reliability.runs import ENV, write_dataset
from tests.support import faults
from tests.support.faults import Handler, Provider, judge_args
from tests.support.loopback import LoopbackServer

SAMPLES = 12
FLAGS = ("--no-history", "--no-cache", "--retries", "2", "--timeout", "0.5", "--concurrency", "4")


@dataclass(frozen=True)
class Case:
    """One fault and what the run must come to."""

    fault: Callable[[Provider], Handler] | None
    exit_code: int
    scored: int | None
    message: str = ""
    """Text stderr must hold (lower-cased comparison)."""
    errors: int | None = None
    """None: whatever the fault allows, as long as nothing is lost."""


CASES = {
    "429 with Retry-After, then success": Case(
        lambda p: faults.rate_limited(retry_after=1, times=3, provider=p), 0, SAMPLES, errors=0
    ),
    "500 twice, then success": Case(
        lambda p: faults.server_error(times=2, provider=p), 0, SAMPLES, errors=0
    ),
    "500 on every call": Case(
        lambda p: faults.server_error(provider=p), 2, 0, "the first 8 calls to"
    ),
    "every call hangs past the timeout": Case(
        lambda p: faults.hang(5, provider=p), 2, 0, "raise --timeout"
    ),
    "every connection reset": Case(
        lambda p: faults.reset(provider=p), 2, 0, "check that the server is running"
    ),
    "401": Case(lambda p: faults.unauthorized(provider=p), 2, 0, "check the key"),
    "404": Case(lambda p: faults.not_found(provider=p), 2, 0, "check the model name"),
    "malformed JSON on every reply": Case(
        lambda p: faults.malformed_json(provider=p), 3, 0, "not complete json", errors=SAMPLES
    ),
    "a verdict missing once": Case(
        lambda p: faults.missing_verdicts(provider=p), 0, SAMPLES, errors=0
    ),
    "extra verdicts once": Case(lambda p: faults.extra_verdicts(provider=p), 0, SAMPLES, errors=0),
    "cut off at max_tokens once": Case(
        lambda p: faults.truncated(times=1, provider=p), 0, SAMPLES, errors=0
    ),
    "cut off at max_tokens on every reply": Case(
        lambda p: faults.truncated(provider=p), 3, 0, "raise --max-tokens", errors=SAMPLES
    ),
    "a wrong verdict label once": Case(
        lambda p: faults.wrong_labels(provider=p), 0, SAMPLES, errors=0
    ),
    "wrong verdict labels on every reply": Case(
        lambda p: faults.wrong_labels(times=None, provider=p), 3, 0, "mostly_true", SAMPLES
    ),
    "no claims extracted, twice": Case(
        lambda p: faults.empty_claims(provider=p), 3, 0, "extracted no claims", SAMPLES
    ),
    "unreachable server": Case(None, 2, 0, "could not reach"),
}


def _run(tmp_path: Path, provider: Provider, case: Case) -> subprocess.CompletedProcess[str]:
    write_dataset(tmp_path / "data.jsonl", SAMPLES)
    env = {**ENV, "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "test"}
    with LoopbackServer() as server:
        if case.fault is None:
            judge = (*judge_args(server, provider)[:3], faults.unreachable_url(provider))
        else:
            server.default = case.fault(provider)
            judge = judge_args(server, provider)
        return subprocess.run(
            [sys.executable, "-m", "vera", "eval", "-d", "data.jsonl", *judge, *FLAGS,
             "-o", "report.json"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", list(CASES))
def test_fault(tmp_path: Path, provider: Provider, name: str) -> None:
    case = CASES[name]
    result = _run(tmp_path, provider, case)
    assert result.returncode == case.exit_code, result.stderr
    assert "Traceback" not in result.stderr
    assert case.message.lower() in result.stderr.lower()
    report = json.loads((tmp_path / "report.json").read_text())
    ids = [sample["id"] for sample in report["samples"]]
    assert sorted(ids) == [f"s{i:02d}" for i in range(SAMPLES)]  # nothing lost, none twice
    counts = report["counts"]
    assert counts["scored"] + counts["errors"] + counts["skipped"] == SAMPLES
    if case.scored is not None:
        assert counts["scored"] == case.scored
    if case.errors is not None:
        assert counts["errors"] == case.errors
    if case.exit_code == 2 and case.scored == 0:
        assert report["stopped"] is not None  # a stop, with its reason in the report
        assert counts["skipped"] >= SAMPLES - 8 - 4  # at most the first calls and those in flight


def test_injected_instructions_are_data(tmp_path: Path) -> None:
    """A response that tries to close its tag and order a verdict is judged as an answer: its
    false claim is still contradicted, and the gate fails."""
    rows = [faults.injection()]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LoopbackServer() as server:
        server.default = faults.scripted("openai")
        result = subprocess.run(
            [sys.executable, "-m", "vera", "eval", "-d", "data.jsonl", *judge_args(server),
             *FLAGS, "--threshold", "0.99", "-o", "report.json"],
            cwd=tmp_path, env={**ENV, "HOME": str(tmp_path)}, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        prompts = [r.json["messages"][-1]["content"] for r in server.requests]
    assert result.returncode == 1, result.stderr
    claims = json.loads((tmp_path / "report.json").read_text())["samples"][0]["claims"]
    assert any(c["verdict"] == "CONTRADICTED" and "60" in c["text"] for c in claims)
    extraction = next(p for p in prompts if "<answer>" in p)
    assert extraction.count("</answer>") == 1  # only the prompt's own closing tag
    assert "&lt;/answer&gt;" in extraction
