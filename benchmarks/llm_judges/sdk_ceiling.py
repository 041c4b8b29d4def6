"""How many chat completions a second the official OpenAI SDK alone sends, with no framework.

Why: at 0 ms server latency a framework's samples/s is bounded by what its HTTP client costs
per call. This sends VERA's real verification request through `AsyncOpenAI` (16 in flight,
as VERA does) to the simulated server, and the same body through bare httpx, so the SDK's
share of VERA's per-sample time can be read off: at 2 calls per sample, no SDK-based framework
can exceed half the SDK's calls/s.

    benchmarks/llm_judges/.venv/bin/python benchmarks/llm_judges/sdk_ceiling.py --calls 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import openai
import openai.resources
from server_speed import _vera_verify_body
from synth import generate

HERE = Path(__file__).resolve().parent


async def _rate(call: Callable[[bytes], Awaitable[None]], bodies: list[bytes], n: int) -> float:
    slots = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with slots:
            await call(bodies[i % len(bodies)])

    await asyncio.gather(*(one(i) for i in range(64)))  # warm the connections
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - started)


async def measure(url: str, calls: int) -> dict[str, float]:
    bodies = [_vera_verify_body(s) for s in generate(50, seed=1)]
    client = openai.AsyncOpenAI(api_key="sk-bench", base_url=f"{url}/v1", max_retries=0)
    raw = httpx.AsyncClient(base_url=url, headers={"Authorization": "Bearer sk-bench"})

    async def via_sdk(body: bytes) -> None:
        request = json.loads(body)
        await client.chat.completions.create(
            model=request["model"],
            messages=request["messages"],
            extra_body={"response_format": request["response_format"]},
        )

    async def via_httpx(body: bytes) -> None:
        response = await raw.post(
            "/v1/chat/completions", content=body, headers={"Content-Type": "application/json"}
        )
        response.json()

    try:
        return {
            "openai SDK": await _rate(via_sdk, bodies, calls),
            "bare httpx": await _rate(via_httpx, bodies, calls),
        }
    finally:
        await raw.aclose()
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8798)
    args = parser.parse_args()
    can_pin = hasattr(os, "sched_setaffinity")
    pin_server = (lambda: os.sched_setaffinity(0, {1})) if can_pin else None
    server = subprocess.Popen(
        [sys.executable, str(HERE / "sim_server.py"), "--port", str(args.port)],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=pin_server,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the banner: the server is listening
        if can_pin:
            os.sched_setaffinity(0, {0})
        rates = asyncio.run(measure(f"http://127.0.0.1:{args.port}", args.calls))
        for name, rate in rates.items():
            print(f"{name}: {rate:,.0f} calls/s, so at most {rate / 2:,.0f} samples/s at 2 calls")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
