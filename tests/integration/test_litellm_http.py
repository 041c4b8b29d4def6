"""`litellm:MODEL` judges: the real LiteLLM, over real HTTP, to the scripted server on 127.0.0.1.

LiteLLM's OpenAI-compatible route (`openai/...` with `judge_base_url`) reaches the loopback
server; nothing is mocked. The scripted model (`tests.support.scripted`) is a fake: it splits
the answer at full stops and marks a claim CONTRADICTED when it holds "60".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

# LiteLLM fetches its cost map from GitHub on import unless told to use its bundled copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from tests.integration.test_llm_judge_http import SAMPLES  # the same scripted samples
from tests.support.extras import without
from tests.support.loopback import LoopbackServer, error, ok_openai, with_headers
from tests.support.scripted import scripted_openai

import vera
from vera import Settings
from vera.judges._registry import create_managed_model
from vera.providers import (
    AuthenticationError,
    ChatRequest,
    Message,
    RateLimitError,
    RetryableProviderError,
    create_chat_model,
)
from vera.providers._base import MissingExtraError
from vera.providers._cache import cache_key
from vera.providers._litellm import LiteLLMChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

pytest.importorskip("litellm", reason=without("litellm"))

SECRET = "sk-dummy-litellm-0123456789abcdef"
DOC = Path(__file__).parents[2] / "docs" / "litellm.md"
STRUCTURED = ChatRequest(
    messages=(Message(role="user", content="Judge this."),),
    json_schema={"type": "object", "properties": {"verdict": {"type": "string"}}},
    schema_name="verdicts",
)


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def settings(loopback: LoopbackServer, tmp_path: Path, **changes: object) -> Settings:
    base = {"judge_base_url": loopback.openai_url, "cache_path": tmp_path / "cache.sqlite"}
    return Settings.model_validate({**base, "history": False, **changes})


def scores(report: vera.Report) -> dict[str, float | None]:
    return {s.id: s.scores.get("faithfulness") for s in report.samples}


def test_evaluate_scores_prices_by_vera_and_reruns_from_the_cache(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_openai
    judge = "litellm:openai/gpt-4o-mini"
    report = vera.evaluate(SAMPLES, judge=judge, settings=settings(loopback, tmp_path))
    assert scores(report) == {"a": 0.5, "b": 1.0}
    assert loopback.request_count == 4  # extract, then verify, per sample
    sent = loopback.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json["model"] == "gpt-4o-mini"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    # LiteLLM says gpt-4o-mini takes a JSON schema: the structured path.
    assert {r.json["response_format"]["type"] for r in loopback.requests} == {"json_schema"}
    usage = report.judge_details["usage"]
    # VERA's own price for openai:gpt-4o-mini comes before LiteLLM's.
    assert usage["cost_usd"] == pytest.approx(4 * (1000 * 0.15 + 100 * 0.60) / 1e6)
    assert list(usage["by_model"]) == [judge] and usage["unpriced_models"] == []
    assert SECRET not in report.model_dump_json()

    again = vera.evaluate(SAMPLES, judge=judge, settings=settings(loopback, tmp_path))
    assert loopback.request_count == 4  # a filled cache: no call at all
    assert scores(again) == scores(report)
    assert again.judge_details["usage"]["cached_calls"] == 4


def test_the_cache_key_names_the_litellm_provider_and_model(loopback: LoopbackServer) -> None:
    model = create_chat_model("litellm:openai/gpt-4o-mini", base_url=loopback.openai_url)
    assert (model.provider, model.model) == ("litellm", "openai/gpt-4o-mini")
    assert cache_key("litellm", "openai/gpt-4o-mini", STRUCTURED) != cache_key(
        "openai", "gpt-4o-mini", STRUCTURED
    )


def test_json_mode_fallback_and_litellms_price(loopback: LoopbackServer, tmp_path: Path) -> None:
    # gpt-3.5-turbo: no response-schema support in LiteLLM's map, and not in VERA's price table.
    loopback.default = scripted_openai
    judge = "litellm:openai/gpt-3.5-turbo"
    report = vera.evaluate(SAMPLES, judge=judge, settings=settings(loopback, tmp_path))
    assert scores(report) == {"a": 0.5, "b": 1.0}
    assert {r.json["response_format"]["type"] for r in loopback.requests} == {"json_object"}
    usage = report.judge_details["usage"]
    # LiteLLM's bundled price: $0.50 / $1.50 per million tokens.
    assert usage["cost_usd"] == pytest.approx(4 * (1000 * 0.5 + 100 * 1.5) / 1e6)
    assert usage["unpriced_models"] == []


def test_a_model_nobody_prices_is_listed_unpriced(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = scripted_openai
    judge = "litellm:openai/loopback-model"
    report = vera.evaluate(SAMPLES, judge=judge, settings=settings(loopback, tmp_path))
    assert scores(report) == {"a": 0.5, "b": 1.0}
    usage = report.judge_details["usage"]
    assert usage["unpriced_models"] == [judge] and usage["cost_usd"] == 0
    assert {r.json["response_format"]["type"] for r in loopback.requests} == {"json_object"}


async def test_rate_limit_maps_with_retry_after_and_headers(loopback: LoopbackServer) -> None:
    model = LiteLLMChatModel("openai/loopback-model", base_url=loopback.openai_url)
    loopback.script(error(429, headers={"retry-after": "2", "x-ratelimit-limit-requests": "60"}))
    with pytest.raises(RateLimitError) as caught:
        await model.complete(STRUCTURED)
    assert caught.value.status == 429 and caught.value.retry_after == 2.0
    assert caught.value.rate_limit is not None and caught.value.rate_limit.requests_limit == 60
    assert loopback.request_count == 1  # LiteLLM's own retries are off


async def test_a_429_is_retried_once_by_vera(loopback: LoopbackServer, tmp_path: Path) -> None:
    managed = create_managed_model(
        "litellm:openai/loopback-model", settings(loopback, tmp_path, cache=False)
    )
    loopback.script(
        error(429, headers={"retry-after": "0"}),
        with_headers(ok_openai('{"verdict": "yes"}'), {"x-ratelimit-limit-requests": "60"}),
    )
    response = await managed.complete(STRUCTURED)
    assert response.data == {"verdict": "yes"}
    assert loopback.request_count == 2 and managed.provider_calls == 2
    assert response.rate_limit is not None and response.rate_limit.requests_limit == 60


async def test_server_error_is_retryable_and_sent_once(loopback: LoopbackServer) -> None:
    model = LiteLLMChatModel("openai/loopback-model", base_url=loopback.openai_url)
    loopback.script(error(500))
    with pytest.raises(RetryableProviderError) as caught:
        await model.complete(STRUCTURED)
    assert caught.value.status == 500 and not isinstance(caught.value, RateLimitError)
    assert loopback.request_count == 1


async def test_bad_key_names_the_variable_not_the_key(loopback: LoopbackServer) -> None:
    model = LiteLLMChatModel("openai/loopback-model", base_url=loopback.openai_url)
    loopback.script(error(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    with pytest.raises(AuthenticationError) as caught:
        await model.complete(STRUCTURED)
    assert "OPENAI_API_KEY" in str(caught.value) and SECRET not in str(caught.value)
    assert SECRET not in repr(model)


def test_a_401_stops_the_run(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = lambda _: error(401, {"error": {"message": "Incorrect API key"}})
    report = vera.evaluate(
        SAMPLES,
        judge="litellm:openai/gpt-4o-mini",
        settings=settings(loopback, tmp_path, concurrency=1),
    )
    assert loopback.request_count == 1  # not retried, and no other sample started
    assert report.stopped is not None and report.stopped.planned is False
    assert "OPENAI_API_KEY" in str(report.stopped.reason)
    assert report.counts["skipped"] == 2


def test_a_500_is_retried_then_recorded(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = lambda _: error(500)
    report = vera.evaluate(
        SAMPLES[1:],
        judge="litellm:openai/gpt-4o-mini",
        settings=settings(loopback, tmp_path, retries=1, fail_fast=0),
    )
    assert loopback.request_count == 2  # the call and VERA's one retry; LiteLLM's none
    assert report.counts["errors"] == 1 and report.stopped is None
    assert "HTTP 500" in str(report.samples[0].error)


def test_cli_judge_litellm(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = scripted_openai
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("\n".join(json.dumps(s) for s in SAMPLES) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "vera", "eval", "--dataset", str(dataset), "-o", "r.json",
         "--judge", "litellm:openai/gpt-4o-mini", "--judge-base-url", loopback.openai_url,
         "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENAI_API_KEY": SECRET,
             "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    # Sample a has one unsupported claim of two: an unfaithful answer, which fails the gate.
    assert done.returncode == 1, done.stderr
    assert "unfaithful answers: 1 of 2" in " ".join(done.stderr.split())
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["judge"] == "litellm:openai/gpt-4o-mini"
    assert {s["id"]: s["scores"]["faithfulness"] for s in report["samples"]} == {"a": 0.5, "b": 1.0}
    assert SECRET not in done.stdout + done.stderr + (tmp_path / "r.json").read_text()


def test_import_vera_never_imports_litellm() -> None:
    code = (
        "import sys, vera, vera.judges, vera.providers; "
        "assert 'litellm' not in sys.modules, 'litellm imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_missing_litellm_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # makes `import litellm` fail
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'vera-eval[litellm]'")):
        create_chat_model("litellm:openai/gpt-4o-mini")


def test_the_docs_example_runs(
    loopback: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    loopback.default = scripted_openai
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VERA_JUDGE_BASE_URL", loopback.openai_url)
    monkeypatch.setenv("VERA_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(example, str(DOC), "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "{'faithfulness': 0.5}" in printed
    assert loopback.request_count == 2
