"""Your own RAG system as a pipeline: a Python callable, and an HTTP endpoint on 127.0.0.1
(the scripted loopback server plays the user's service)."""

import json
import sys
from pathlib import Path

import pytest
from tests.support.loopback import LoopbackServer, Recorded, Reply

import vera
from vera import ConfigError, SampleResult, Verdict
from vera.pipelines import UserPipelineError
from vera.pipelines._user import load_user_pipeline

WHITEBOX = "a callable's answer of a type no text comes from"

ANSWER = {
    "answer": "Paris is the capital of France.",
    "contexts": ["Paris is the capital of France."],
}


def assert_copied_answer_passes(result: SampleResult) -> None:
    """The pipeline's answer is its context's words: each claim supported, and faithfulness
    (the probability that all are) passes well clear of its threshold."""
    assert result.status.value == "scored", result.error
    assert result.claims and all(c.verdict is Verdict.FULLY_SUPPORTED for c in result.claims)
    faithfulness = result.results["faithfulness"]
    assert faithfulness.passed is True
    assert faithfulness.score is not None and faithfulness.score >= 0.9


def test_a_callable_answers_sync_or_async(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_rag.py").write_text(
        "def answer(query):\n"
        "    fact = 'Paris is in France.'\n"
        "    return {'response': fact, 'contexts': [{'text': fact, 'id': 'd1'}]}\n"
        "async def answer_async(query):\n"
        "    return 'Plain text about ' + query + '.'\n"
        "not_callable = 3\n"
    )  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    sample = vera.Sample(id="q", query="Where is Paris?")
    report = vera.evaluate([sample], pipeline=load_user_pipeline("my_rag:answer"))
    assert_copied_answer_passes(report.samples[0])
    assert report.pipeline == "my_rag:answer"
    plain = vera.evaluate([sample], pipeline=load_user_pipeline("my_rag:answer_async"))
    assert plain.samples[0].status.value == "scored"
    with pytest.raises(ConfigError, match="no callable 'not_callable'"):
        load_user_pipeline("my_rag:not_callable")
    with pytest.raises(ConfigError, match="no module 'no_such_module_xyz' in the current folder"):
        load_user_pipeline("no_such_module_xyz:f")
    sys.modules.pop("my_rag", None)


def test_an_http_pipeline_is_posted_the_query(loopback: LoopbackServer) -> None:
    loopback.default = lambda _: Reply(
        body=json.dumps(ANSWER).encode(), headers={"Content-Type": "application/json"}
    )
    pipeline = load_user_pipeline(f"{loopback.url}/rag")
    report = vera.evaluate([vera.Sample(id="q", query="Capital of France?")], pipeline=pipeline)
    assert_copied_answer_passes(report.samples[0])
    request: Recorded = loopback.requests[0]
    assert request.path == "/rag" and request.json == {"query": "Capital of France?"}


def test_a_broken_endpoint_fails_its_sample_only(loopback: LoopbackServer) -> None:
    loopback.default = lambda _: Reply(status=500, body=b"oops")
    pipeline = load_user_pipeline(f"{loopback.url}/rag")
    report = vera.evaluate([vera.Sample(id="q", query="x")], pipeline=pipeline)
    assert report.samples[0].status.value == "error"
    assert "HTTP 500" in (report.samples[0].error or "")
    with pytest.raises(UserPipelineError, match="string or a mapping"):
        from vera.pipelines import RagState
        from vera.pipelines._user import _read_answer

        _read_answer(RagState(query="q"), 42)
