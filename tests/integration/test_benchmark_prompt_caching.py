"""The LLM-judge benchmark's simulated server applies each provider's caching rules, driven over
real HTTP by the real `openai` and `anthropic` SDKs (benchmarks/llm_judges/sim_server.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parents[2] / "benchmarks" / "llm_judges"
WORD = "alpha "


@pytest.fixture(scope="module")
def sim() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "sim_server.py"), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    assert proc.stdout is not None and proc.stdout.readline()  # the banner: it listens
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as response:
        return dict(json.load(response))


def test_openai_caches_identical_prefixes_of_1024_tokens_in_128_token_steps(sim: str) -> None:
    from openai import OpenAI

    client = OpenAI(api_key="k", base_url=f"{sim}/v1", max_retries=0)

    def usage(user: str) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of one request."""
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "system", "content": "s"}, {"role": "user", "content": user}],
        )
        assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
        return reply.usage.prompt_tokens, int(reply.usage.prompt_tokens_details.cached_tokens or 0)

    shared = WORD * 1500
    assert usage(shared + "first question")[1] == 0  # nothing seen yet
    prompt, hit = usage(shared + "second question")
    # The shared part is cached up to the last 128-token step inside it, never past it (the
    # differing tail is a few tokens under either counting rule).
    assert hit >= 1024 and hit % 128 == 0
    assert prompt - 128 - 10 < hit < prompt
    assert usage(WORD * 600 + "short")[1] == 0  # under 1,024 tokens: never cached
    assert stats(sim)["cached_tokens"] == hit


def test_anthropic_caches_only_at_breakpoints_of_the_minimum_length(sim: str) -> None:
    from anthropic import Anthropic

    client = Anthropic(api_key="k", base_url=sim, max_retries=0)
    tool = {"name": "r", "input_schema": {"type": "object", "properties": {}}}

    def usage(
        prefix: str, rest: str, *, mark: bool = True, model: str = "claude-sonnet-4-5"
    ) -> Any:
        first: dict[str, Any] = {"type": "text", "text": prefix}
        if mark:
            first["cache_control"] = {"type": "ephemeral"}
        message = client.messages.create(
            model=model,
            max_tokens=100,
            tools=[tool],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "r"},
            messages=[{"role": "user", "content": [first, {"type": "text", "text": rest}]}],
        )
        return message.usage

    long = WORD * 1500
    written = usage(long, "first")
    assert written.cache_read_input_tokens == 0 and written.cache_creation_input_tokens > 1500
    read = usage(long, "second")
    assert read.cache_read_input_tokens == written.cache_creation_input_tokens
    assert read.cache_creation_input_tokens == 0
    # No breakpoint, no cache; a prefix under the model's minimum (Haiku 4.5: 4,096), neither.
    unmarked = usage(long, "third", mark=False)
    assert unmarked.cache_read_input_tokens == unmarked.cache_creation_input_tokens == 0
    short = usage(long, "fourth", model="claude-haiku-4-5")
    assert short.cache_read_input_tokens == short.cache_creation_input_tokens == 0
