"""Seed 000's acceptance table holds with every judge: faithfulness is the seeds' mean of
verdict weights whoever gives the verdicts, and `faithfulness_probability` is there for the
judges that give claim probabilities and not applicable, saying why, for those that do not.

The rows are clear-cut, so any reasonable judge agrees on them: a supported claim is copied from
a context, an unsupported one is about something no context mentions. The judges are real: the
offline judges, an NLI judge on a tiny BERT (`tests.support.tiny_nli`, wired so that a claim
saying "zebra" is entailed and any other scores about a third), an LLM judge over the real
OpenAI SDK to a scripted server on 127.0.0.1, and a cascade of the learned offline judge and
that LLM.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import section

import vera
from vera import Settings
from vera.judges import Judge, create_judge
from vera.metrics import MetricStatus

CONTEXTS = ["The zebra is in the town hall.", "The refund window is 30 days."]
COPIED = "The zebra is in the town hall."
INVENTED = "Napoleon built 12 volcanoes on Jupiter in 1805."
INVENTED_TOO = "Volcanoes erupted near Lisbon in 1755."
FILLER = "I hope this helps!"

# Seed 000: all supported 1.0, half 0.5, none 0.0, no claims 1.0 (vacuously faithful).
ROWS = {
    "all": (COPIED, 1.0),
    "half": (f"{COPIED} {INVENTED}", 0.5),
    "none": (f"{INVENTED} {INVENTED_TOO}", 0.0),
    "no_claims": (FILLER, 1.0),
}
METRICS = ["faithfulness", "faithfulness_probability"]


def _samples() -> list[vera.Sample]:
    return [
        vera.Sample(id=name, query="Where is the zebra?", response=response, contexts=CONTEXTS)
        for name, (response, _) in ROWS.items()
    ]


def _copying_llm(request: Recorded) -> Reply:
    """A scripted model: its claims are the answer's sentences (none in a pleasantry), and a
    claim is supported exactly when a context holds it word for word."""
    prompt = request.json["messages"][-1]["content"]
    if "<claims>" not in prompt:
        # The extraction prompt shows the answer one numbered sentence a line ("1 ...").
        lines = section(prompt, "answer").splitlines()
        answer = " ".join(re.sub(r"^\d+ ", "", line) for line in lines)
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", answer.strip()) if s and s != FILLER]
        claims = [{"number": i, "text": s} for i, s in enumerate(sentences, 1)]
        return ok_openai(json.dumps({"claims": claims}))
    contexts = section(prompt, "contexts")
    listed = re.findall(r"^(\d+)\. (.*)$", section(prompt, "claims"), flags=re.M)
    verdicts = [
        {
            "claim": int(n),
            "verdict": "FULLY_SUPPORTED" if text in contexts else "NO_EVIDENCE",
            "context": 1,
            "quote": text if text in contexts else "",
            "reason": "scripted: copied" if text in contexts else "scripted: not in any context",
        }
        for n, text in listed
    ]
    return ok_openai(json.dumps({"verdicts": verdicts}))


def _judge(kind: str, tmp_path: Path, loopback: LoopbackServer) -> Judge:
    llm = {"judge_base_url": loopback.openai_url, "cache": False}
    if kind == "nli":
        from tests.support.tiny_nli import build_model

        return create_judge(f"nli:{build_model(tmp_path / 'nli', claim_zebra=True)}")
    if kind == "llm":
        return create_judge("openai:gpt-4o-mini", Settings(**llm))
    if kind == "cascade":
        return create_judge("cascade", Settings(cascade_judge="openai:gpt-4o-mini", **llm))
    return create_judge(kind)


@pytest.mark.parametrize("kind", ["offline", "offline:learned", "nli", "cascade", "llm"])
def test_seed_000_table_holds_with_every_judge(
    kind: str, tmp_path: Path, loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    loopback.default = _copying_llm
    judge = _judge(kind, tmp_path, loopback)

    report = vera.evaluate(_samples(), METRICS, judge)

    results = {r.id: r for r in report.samples}
    for name, (_, expected) in ROWS.items():
        faithfulness = results[name].results["faithfulness"]
        assert faithfulness.score == expected, (name, faithfulness.reason)
        # The sub-scores agree with the headline they sit beside.
        assert faithfulness.sub_scores["lenient"] == expected
        assert faithfulness.sub_scores["strict"] <= expected
    assert results["no_claims"].results["faithfulness"].status is MetricStatus.NO_CLAIMS
    probability = {name: results[name].results["faithfulness_probability"] for name in ROWS}
    assert probability["no_claims"].score == 1.0
    assert probability["no_claims"].status is MetricStatus.NO_CLAIMS
    if kind == "llm":
        for name in ("all", "half", "none"):
            found = probability[name]
            assert found.status is MetricStatus.NOT_APPLICABLE and found.score is None
            assert found.passed is None
            assert found.reason.startswith("judge openai:gpt-4o-mini gives no claim probabilities")
        return
    scores = {name: probability[name].score for name in ("all", "half", "none")}
    assert all(s is not None and 0.0 <= s <= 1.0 for s in scores.values()), scores
    assert all(probability[n].status is MetricStatus.OK for n in scores)
    # It ranks as the rows are: the copied answer above the half-invented one above the
    # invented one (not an acceptance figure: each judge has its own scale).
    all_, half, none = scores["all"], scores["half"], scores["none"]
    assert all_ is not None and half is not None and none is not None
    assert all_ > half >= none, scores
