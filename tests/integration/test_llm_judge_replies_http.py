"""LLMJudge over the real OpenAI SDK against a scripted server on 127.0.0.1: what the judge
does with the bad replies real models give. Each test scripts the server's replies (fakes of a
model's answers) in order and asserts what the judge made of them and how many calls it took.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, error, ok_openai, reset
from tests.support.scripted import section

from vera import Claim, JudgeResponseError, Verdict
from vera.judges import LLMJudge
from vera.providers import ManagedChatModel
from vera.providers._cache import ResponseCache
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the providers' own clients, retries, cache and batches"

CONTEXTS = ["Refunds are issued to the original card.", "The refund window is 30 days."]
CLAIMS = [Claim("c1", "The refund window is 60 days."), Claim("c2", "Refunds go to the card.")]


def reply(payload: Any, **kwargs: Any) -> Any:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return ok_openai(text, **kwargs)


def verdicts(*rows: tuple[int, str] | tuple[int, str, str]) -> dict[str, Any]:
    # Claim n cites the sentence about CLAIMS[n - 1] (2.1 the window, 1.1 the card) unless
    # the row names one.
    cited = {1: "2.1", 2: "1.1"}
    return {
        "verdicts": [
            {"claim": row[0], "verdict": row[1], "sentence": (*row, cited.get(row[0], "1.1"))[2]}
            for row in rows
        ]
    }


def judge_for(loopback: LoopbackServer, cache: Path | None = None, **options: Any) -> LLMJudge:
    model = OpenAIChatModel("gpt-test", base_url=loopback.openai_url, timeout=2)

    async def no_wait(_: float) -> None:
        return None

    managed = ManagedChatModel(
        model,
        retry=RetryPolicy(max_attempts=4),
        cache=ResponseCache(cache) if cache else None,
        sleep=no_wait,
    )
    return LLMJudge(managed, **options)


async def test_wrong_verdict_name_is_reasked_with_the_error(loopback: LoopbackServer) -> None:
    loopback.script(
        reply(verdicts((1, "MOSTLY_TRUE"), (2, "SUPPORTED"))),
        reply(verdicts((1, "CONTRADICTED"), (2, "SUPPORTED"))),
    )
    result = await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]
    assert loopback.request_count == 2
    reask = loopback.requests[1].json["messages"]
    assert reask[-2]["role"] == "assistant" and "MOSTLY_TRUE" in reask[-2]["content"]
    assert "not valid" in reask[-1]["content"] and "MOSTLY_TRUE" in reask[-1]["content"]


async def test_missing_verdict_is_reasked_alone_and_extra_ones_dropped(
    loopback: LoopbackServer,
) -> None:
    loopback.script(
        reply(verdicts((1, "CONTRADICTED"), (7, "SUPPORTED"))),
        reply(verdicts((1, "FULLY_SUPPORTED", "1.1"))),
    )
    result = await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]
    second_prompt = loopback.requests[1].json["messages"][-1]["content"]
    assert "1. Refunds go to the card." in second_prompt
    assert "refund window is 60" not in section(second_prompt, "claims")


async def test_fenced_json_in_a_plain_reply_is_read(loopback: LoopbackServer) -> None:
    fenced = "Here you go:\n```json\n" + json.dumps(verdicts((1, "no"), (2, "yes"))) + "\n```"
    loopback.script(reply(fenced))
    result = await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]


async def test_malformed_json_twice_is_an_error_for_that_call(loopback: LoopbackServer) -> None:
    loopback.script(reply('{"verdicts": [{"claim": 1,'), reply("I cannot help with that."))
    with pytest.raises(JudgeResponseError, match="invalid twice"):
        await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert loopback.request_count == 2


async def test_truncated_reply_splits_the_claims(loopback: LoopbackServer) -> None:
    loopback.script(
        reply('{"verdicts": [{"claim": 1, "verdict": "CONTRA', finish_reason="length"),
        reply(verdicts((1, "CONTRADICTED"))),
        reply(verdicts((1, "SUPPORTED", "1.1"))),
    )
    result = await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]
    sizes = [
        section(r.json["messages"][-1]["content"], "claims").count("\n") + 1
        for r in loopback.requests
    ]
    assert sizes == [2, 1, 1]


async def test_429_500_and_reset_are_retried_then_answered(loopback: LoopbackServer) -> None:
    loopback.script(
        error(429, headers={"retry-after": "1"}),
        error(500),
        reset(),
        reply(verdicts((1, "no"), (2, "yes"))),
    )
    result = await judge_for(loopback).verify_claims(CLAIMS, CONTEXTS)
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]
    assert loopback.request_count == 4


async def test_cached_judge_makes_no_request_the_second_time(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.script(reply(verdicts((1, "no"), (2, "yes"))))
    cache = tmp_path / "cache.sqlite"
    first = await judge_for(loopback, cache).verify_claims(CLAIMS, CONTEXTS)
    second = await judge_for(loopback, cache).verify_claims(CLAIMS, CONTEXTS)
    assert first == second and loopback.request_count == 1
