"""How many chat completions a second the simulated server answers at 0 ms latency.

Why: the 0 ms scenario measures framework overhead only if the server is much faster than
every framework. The client here is a bare asyncio loop over raw keep-alive sockets, so it
costs far less than the server; it sends a real VERA verification prompt each time.

    python benchmarks/llm_judges/server_speed.py --requests 5000 --connections 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from synth import generate

HERE = Path(__file__).resolve().parent


def _vera_verify_body(sample: dict[str, Any]) -> bytes:
    contexts = "\n\n".join(f"[{i}] {c}" for i, c in enumerate(sample["contexts"], 1))
    claims = "\n".join(f"{i}. {s}" for i, s in enumerate(str(sample["response"]).split(". "), 1))
    prompt = (
        "For every numbered CLAIM below, give one verdict using only the numbered CONTEXTS:\n"
        f"...\n\nCONTEXTS:\n{contexts}\n\nCLAIMS:\n{claims}"
    )
    request = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a fact-checker."},
            {"role": "user", "content": prompt},
        ],
        "response_format": {"type": "json_object"},
    }
    return json.dumps(request).encode()


async def _worker(port: int, bodies: list[bytes], count: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for i in range(count):
        body = bodies[i % len(bodies)]
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
    writer.close()


async def measure(port: int, requests: int, connections: int) -> float:
    bodies = [_vera_verify_body(s) for s in generate(50, seed=1)]
    per = requests // connections
    started = time.perf_counter()
    await asyncio.gather(*(_worker(port, bodies, per) for _ in range(connections)))
    return per * connections / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--port", type=int, default=8799)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "sim_server.py"), "--port", str(args.port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the banner: the server is listening
        rate = asyncio.run(measure(args.port, args.requests, args.connections))
        print(f"{rate:,.0f} requests/s over {args.connections} keep-alive connections")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
