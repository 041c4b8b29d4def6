"""Cached prompt tokens priced at their own rates, read from the providers' usage fields over
real HTTP with the real `openai` and `anthropic` SDKs."""

from __future__ import annotations

import pytest
from tests.support.loopback import LoopbackServer, ok_anthropic_tool, ok_openai

from vera.providers import ChatRequest, ManagedChatModel, Message, Usage
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._openai import OpenAIChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

SECRET = "sk-test-0123456789abcdef"
REQUEST = ChatRequest(
    messages=(Message(role="system", content="Judge."), Message(role="user", content="This.")),
    json_schema={"type": "object", "properties": {"v": {"type": "string"}}},
    schema_name="verdicts",
)


async def test_openai_cached_tokens_cost_the_cached_rate(loopback: LoopbackServer) -> None:
    loopback.script(ok_openai('{"v": "x"}', prompt_tokens=2000, completion_tokens=100,
                              cached_tokens=1152))  # fmt: skip
    inner = OpenAIChatModel("gpt-4o-mini", api_key=SECRET, base_url=loopback.openai_url, timeout=5)
    model = ManagedChatModel(inner)
    await model.complete(REQUEST, label="verify_claims")
    summary = model.ledger.summary()
    # 848 fresh at $0.15, 1,152 cached at $0.075, 100 out at $0.60 per million.
    expected = (848 * 0.15 + 1152 * 0.075 + 100 * 0.60) / 1e6
    assert summary["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert summary["cached_prompt_tokens"] == 1152
    assert summary["cache_write_prompt_tokens"] == 0
    assert summary["cached_share"] == pytest.approx(1152 / 2000, abs=1e-4)


async def test_anthropic_cache_reads_and_writes_cost_their_rates(
    loopback: LoopbackServer,
) -> None:
    loopback.script(
        ok_anthropic_tool(
            {"v": "x"},
            name="verdicts",
            input_tokens=300,
            output_tokens=50,
            cache_read_input_tokens=2048,
            cache_creation_input_tokens=1200,
        )
    )
    inner = AnthropicChatModel(
        "claude-haiku-4-5-20251001", api_key=SECRET, base_url=loopback.anthropic_url, timeout=5
    )
    model = ManagedChatModel(inner)
    response = await model.complete(REQUEST)
    assert response.usage == Usage(
        prompt_tokens=300 + 2048 + 1200,
        completion_tokens=50,
        cached_prompt_tokens=2048,
        cache_write_prompt_tokens=1200,
    )
    # A dated model name is priced by its family: $1 input, $0.10 read, $1.25 write, $5 out.
    expected = (300 * 1.00 + 2048 * 0.10 + 1200 * 1.25 + 50 * 5.00) / 1e6
    summary = model.ledger.summary()
    assert summary["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert summary["cache_write_prompt_tokens"] == 1200
