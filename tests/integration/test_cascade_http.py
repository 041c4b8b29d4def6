"""`vera eval --judge cascade --cascade-judge openai:…` end to end: the CLI (in process), the real
OpenAI SDK, real HTTP to a scripted server on 127.0.0.1 that plays the LLM judge.

The cascade's first judge is the real offline judge with its learned support model; which
claims it leaves uncertain is worked out here with the same judge.
"""

from __future__ import annotations

import asyncio
import json
import re
from itertools import islice
from pathlib import Path

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_reply, section
from typer.testing import CliRunner

from vera import load_dataset
from vera.cli import app
from vera.judges import OfflineJudge


def _claims_asked(request: Recorded) -> list[str]:
    prompt = request.json["messages"][-1]["content"]
    listed = section(prompt, "claims")
    return [text for _, text in re.findall(r"^(\d+)\. (.*)$", listed, flags=re.M)]


def _supported(request: Recorded) -> Reply:
    """Every claim asked about FULLY_SUPPORTED, citing the context sentence closest to it (a
    supporting verdict must cite evidence that is there)."""
    reply = scripted_reply(request.json["messages"][-1]["content"])
    for verdict in reply["verdicts"]:
        verdict["verdict"] = "FULLY_SUPPORTED"
    return ok_openai(json.dumps(reply), prompt_tokens=500, completion_tokens=50)


def test_cascade_sends_only_uncertain_claims_to_the_llm(
    loopback: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    monkeypatch.chdir(tmp_path)
    loopback.default = _supported
    # What the offline judge leaves uncertain (0.2 < P(supported) < 0.9) on the quick run.
    uncertain: list[str] = []
    total = 0
    first = OfflineJudge(learned=True)
    for sample in islice(load_dataset("example"), 10):
        claims = asyncio.run(first.extract_claims(sample.response or ""))
        total += len(claims)
        found = asyncio.run(first.verify_claims(claims, sample.context_texts))
        for claim, verdict in zip(claims, found, strict=True):
            assert verdict.entailment is not None
            if 0.2 < verdict.entailment < 0.9:
                uncertain.append(claim.text)
    assert 0 < len(uncertain) < total

    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--quick",
            "--judge",
            "cascade",
            "--cascade-judge",
            "openai:gpt-4o-mini",
            "--judge-base-url",
            loopback.openai_url,
            "--judge-mode",
            "per_claim",
            "--no-cache",
            "--no-history",
            "-o",
            "r.json",
            "--markdown",
            "r.md",
            "--html",
            "r.html",
        ],
    )
    assert result.exit_code == 0, result.output

    # per_claim: one verification request per claim sent, and no extraction request at all.
    asked = [text for request in loopback.requests for text in _claims_asked(request)]
    assert len(loopback.requests) == len(uncertain) < total
    assert sorted(asked) == sorted(uncertain)

    report = json.loads((tmp_path / "r.json").read_text())
    assert report["judge"] == "cascade(offline:learned → openai:gpt-4o-mini)"
    details = report["judge_details"]
    assert (details["claims"], details["claims_sent"]) == (total, len(uncertain))
    assert details["share_sent"] == pytest.approx(len(uncertain) / total)
    assert details["calls_saved"] == total - len(uncertain)  # one request per claim decided
    assert (details["low"], details["high"]) == (0.2, 0.9)
    assert details["usage"]["calls"] == len(uncertain)
    assert details["openai:gpt-4o-mini"]["mode"] == "per_claim"
    assert details["openai:gpt-4o-mini"]["usage"] == details["usage"]
    # The LLM's verdicts were used for the claims it was asked about: all supported.
    verdicts = {c["text"]: c for s in report["samples"] for c in s["claims"]}
    for text in uncertain:
        assert verdicts[text]["verdict"] == "FULLY_SUPPORTED"
        assert verdicts[text]["reason"].startswith("openai:gpt-4o-mini: ")

    share = f"{len(uncertain) / total:.0%}"
    line = (
        f"Cascade: {len(uncertain)} of {total} claims ({share}) sent to openai:gpt-4o-mini; "
        f"{total - len(uncertain)} LLM verification calls saved"
    )
    assert line in " ".join(result.output.split())  # the console wraps long lines
    assert line in (tmp_path / "r.md").read_text()
    assert line in (tmp_path / "r.html").read_text()
