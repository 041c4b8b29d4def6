"""A simulated OpenAI chat-completions server on 127.0.0.1, shared by every framework.

Why a hand-written asyncio HTTP/1.1 server: it has no dependencies, keeps connections alive,
sleeps the simulated latency without holding a thread, and answers several thousand requests
a second on one core, so at 0 ms latency the frameworks, not the server, are measured.

- POST /v1/chat/completions: a JSON reply built by `replies.py` for the detected prompt, as
  message content (response_format json_schema / json_object / none) or as a tool call when
  the request forces a tool (Instructor's TOOLS mode). `usage` counts tokens with one rule.
- Rate limit (--rps-limit): a token bucket refilled at that rate, holding --burst-s seconds
  of requests and starting full. A request finding it empty gets 429 at once, with a
  `Retry-After` header in whole seconds and an OpenAI-style error body; it costs no tokens.
  Every chat reply, 429s included, states the limit as OpenAI does: `x-ratelimit-limit-requests`
  (per minute), `x-ratelimit-remaining-requests` (what is left in the bucket) and
  `x-ratelimit-reset-requests` (until the bucket is full again, as "20ms" or "1.5s").
  `--no-ratelimit-headers` leaves them out, as servers that state no limit do.
- Prompt caching as OpenAI documents it: a request whose first 1,024 prompt tokens or more are
  identical to an earlier request's is served that prefix from cache, in 128-token steps
  (1,024, 1,152, 1,280, ...), reported in `usage.prompt_tokens_details.cached_tokens`. The
  prompt is read in the order OpenAI caches it: the JSON schema or tool definitions, then the
  messages in order. /reset empties the cache, so no framework inherits another's.
- POST /v1/messages: Anthropic's Messages API, the reply as a forced tool call, with its
  caching rules: only a prefix ending at a `cache_control` breakpoint is cached, only when it
  reaches the model's minimum length (1,024 tokens; 2,048 for Haiku 3.x; 4,096 for Haiku 4.5);
  the longest earlier-written breakpoint prefix is read (`cache_read_input_tokens`), the
  prompt up to the last breakpoint beyond it is written (`cache_creation_input_tokens`), and
  `input_tokens` counts the rest. Prefix order: tools, system, messages.
- GET /v1/models, GET /stats, POST or GET /reset.
- The OpenAI Batch API and Anthropic Message Batches (`tests/support/batch_apis.py`, the same
  simulation the loopback tests use): a batch ends --batch-s seconds after it was created
  (answered all at once, with no simulated latency: a batch's latency is its wait), each
  request answered as the chat endpoint would answer it. POST /batches/hold and
  /batches/release; after POST /batches/hold-after-end the batches created once one batch has
  ended are held (a run's second wave), how benchmarks/batch_resume.py kills a run with
  batches pending and others done. POST /batches/stall-create {"seconds": S} answers each
  batch create S seconds after the batch exists (a kill then leaves it unrecorded). /stats
  says whether any request was sent twice.

    python benchmarks/llm_judges/sim_server.py --port 8765 --latency-ms 200 --rps-limit 50
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import sys
import time
import uuid
from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replies import reply_for
from tokens import make_encoder

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.support
from tests.support.batch_apis import BatchApis

encode_tokens, TOKEN_RULE = make_encoder()
MESSAGE_OVERHEAD = 3  # tokens OpenAI adds around each message, and once to prime the reply


def count_tokens(text: str) -> int:
    return len(encode_tokens(text))


class PrefixCache:
    """OpenAI's automatic prompt caching: the longest earlier-seen prefix of a prompt, of at
    least `minimum` tokens and counted in `step`-token increments, is a cache hit."""

    def __init__(self, minimum: int = 1024, step: int = 128) -> None:
        self.minimum = minimum
        self.step = step
        self.seen: set[bytes] = set()

    def hit(self, tokens: list[int]) -> int:
        """Cached tokens for this prompt; every cacheable prefix of it is remembered."""
        digest = hashlib.blake2b(digest_size=16)
        cached = 0
        start = 0
        for end in range(self.minimum, len(tokens) + 1, self.step):
            digest.update(array("q", tokens[start:end]).tobytes())
            start = end
            key = digest.digest()
            if key in self.seen:  # the digest covers the whole prefix up to `end`
                cached = end
            self.seen.add(key)
        return cached


_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    411: "Length Required",
    429: "Too Many Requests",
}


class TokenBucket:
    """`rate` requests per second on average, bursts of up to `capacity`."""

    def __init__(self, rate: float, capacity: float) -> None:
        self.rate = rate
        self.capacity = max(1.0, capacity)
        self.tokens = self.capacity
        self.stamp = time.monotonic()

    def take(self) -> float:
        """0 if the request may pass, else the seconds until it could."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate

    def headers(self) -> dict[str, str]:
        """The limit as OpenAI states it: per minute, what is left, and when it is whole."""
        return {
            "x-ratelimit-limit-requests": f"{self.rate * 60:g}",
            "x-ratelimit-remaining-requests": str(int(self.tokens)),
            "x-ratelimit-reset-requests": _duration((self.capacity - self.tokens) / self.rate),
        }


def _duration(seconds: float) -> str:
    """`seconds` in the form OpenAI's reset headers use: "20ms", "1.5s"."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"


@dataclass(frozen=True)
class Answered:
    """A batch request's answer: a status and a JSON body."""

    status: int
    text: str

    @property
    def body(self) -> bytes:
        return self.text.encode()


def _as_openai(params: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic request as the chat endpoint's: the system prompt a message, the tool a
    function."""
    messages = list(params.get("messages") or [])
    if params.get("system"):
        system = params["system"]
        text = system if isinstance(system, str) else _text(system)
        messages.insert(0, {"role": "system", "content": text})
    request: dict[str, Any] = {"model": params.get("model"), "messages": messages}
    tools = params.get("tools") or []
    if tools:
        request["tools"] = [
            {"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"]}}
            for t in tools
        ]
        request["tool_choice"] = {"type": "function", "function": {"name": tools[0]["name"]}}
    return request


def _as_message(reply: dict[str, Any]) -> dict[str, Any]:
    """A chat completion as a Messages API reply."""
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    if calls:
        function = calls[0]["function"]
        content = [
            {
                "type": "tool_use",
                "id": calls[0]["id"],
                "name": function["name"],
                "input": json.loads(function["arguments"]),
            }
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": message.get("content") or ""}]
        stop = "end_turn"
    usage = reply["usage"]
    return {
        "id": reply["id"].replace("chatcmpl", "msg"),
        "type": "message",
        "role": "assistant",
        "model": reply["model"],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }


class Simulator:
    """Counters, the limit and the reply logic; independent of HTTP."""

    def __init__(
        self,
        latency_s: float,
        rps_limit: float | None,
        burst_s: float,
        dump: str | None = None,
        *,
        limit_headers: bool = True,
    ) -> None:
        self.dump = open(dump, "a", encoding="utf-8") if dump else None  # noqa: SIM115
        self.latency_s = latency_s
        self.rps_limit = rps_limit
        self.burst_s = burst_s
        self.limit_headers = limit_headers
        self.reset()

    def reset(self) -> None:
        self.bucket = (
            TokenBucket(self.rps_limit, self.rps_limit * self.burst_s) if self.rps_limit else None
        )
        self.requests = 0
        self.rate_limited = 0
        self.errors = 0
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.anthropic_read_tokens = 0
        self.cache_write_tokens = 0
        self.completion_tokens = 0
        self.prefix_cache = PrefixCache()
        self.breakpoint_cache = BreakpointCache()
        self.kinds: Counter[str] = Counter()
        self.kind_tokens: Counter[str] = Counter()
        self.first: float | None = None
        self.last: float | None = None

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "ok": self.requests - self.rate_limited - self.errors,
            "rate_limited": self.rate_limited,
            "errors": self.errors,
            "connections": self.connections,
            "max_in_flight": self.max_in_flight,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "anthropic_read_tokens": self.anthropic_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "completion_tokens": self.completion_tokens,
            "kinds": dict(self.kinds),
            "kind_tokens": dict(self.kind_tokens),
            "active_s": (self.last - self.first) if self.first and self.last else 0.0,
            "latency_ms": self.latency_s * 1000,
            "rps_limit": self.rps_limit,
            "burst": self.bucket.capacity if self.bucket else None,
            "limit_headers": self.limit_headers and self.bucket is not None,
            "token_rule": TOKEN_RULE,
        }

    async def chat(
        self, body: bytes, anthropic: bool = False
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        self.requests += 1
        now = time.monotonic()
        self.first = self.first or now
        headers: dict[str, str] = {}
        if self.bucket is not None:
            wait = self.bucket.take()
            # Stated when the request is admitted, as a real server counts it.
            headers = self.bucket.headers() if self.limit_headers else {}
            if wait > 0:
                self.rate_limited += 1
                self.last = now
                message = f"Rate limit reached: {self.rps_limit:g} requests per second."
                error = {"message": message, "type": "requests", "code": "rate_limit_exceeded"}
                headers["Retry-After"] = str(max(1, math.ceil(wait)))
                return 429, {"error": error}, headers
        try:
            request = json.loads(body)
            reply = self._message(request) if anthropic else self._complete(request)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.errors += 1
            error = {"message": f"bad request: {exc}", "type": "invalid_request_error"}
            return 400, {"error": error}, {}
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        self.last = time.monotonic()
        return 200, reply, headers

    def batch_answer(self, dialect: str, custom_id: str, body: Any) -> Answered:
        """One request of a batch, answered as the chat endpoint answers it (an Anthropic one
        through the same prompt as a chat request, the reply as a Messages API tool call),
        counted with the interactive requests."""
        self.requests += 1
        self.first = self.first or time.monotonic()
        try:
            reply = self._complete(body if dialect == "openai" else _as_openai(body))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.errors += 1
            return Answered(400, json.dumps({"error": {"message": f"bad request: {exc}"}}))
        self.last = time.monotonic()
        return Answered(200, json.dumps(reply if dialect == "openai" else _as_message(reply)))

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        texts = [_text(m.get("content")) for m in request["messages"]]
        response_format = request.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema")
        tool = _forced_tool(request)
        if tool is not None:
            schema = tool.get("parameters")
        kind, data = reply_for(texts, schema)
        content = json.dumps(data, ensure_ascii=False)
        tokens = _prompt_tokens(texts, response_format.get("json_schema"), request.get("tools"))
        prompt_tokens = len(tokens) + MESSAGE_OVERHEAD
        cached = self.prefix_cache.hit(tokens)
        n = int(request.get("n") or 1)
        completion_tokens = count_tokens(content) * n
        self.prompt_tokens += prompt_tokens
        self.cached_tokens += cached
        self.completion_tokens += completion_tokens
        self.kinds[kind] += 1
        self.kind_tokens[kind] += prompt_tokens + completion_tokens
        if self.dump is not None:
            self.dump.write(json.dumps({"kind": kind, "request": request, "reply": data}) + "\n")
            self.dump.flush()
        if tool is not None:
            call = {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": tool.get("name", "reply"), "arguments": content},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": content}
            finish = "stop"
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "gpt-4o-mini"),
            "system_fingerprint": "fp_sim",
            "choices": [
                {"index": i, "message": message, "logprobs": None, "finish_reason": finish}
                for i in range(n)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }

    def _message(self, request: dict[str, Any]) -> dict[str, Any]:
        """An Anthropic Messages reply: the JSON as the input of the forced tool."""
        tools = request.get("tools") or []
        tokens: list[int] = encode_tokens(json.dumps(tools)) if tools else []
        breakpoints: list[int] = []
        texts: list[str] = []
        system = request.get("system") or []
        blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
        for block in blocks:
            tokens += encode_tokens(str(block.get("text", "")))
            texts.append(str(block.get("text", "")))
            if block.get("cache_control"):
                breakpoints.append(len(tokens))
        for message in request["messages"]:
            content = message.get("content")
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            tokens += [-1] * MESSAGE_OVERHEAD
            for part in parts:
                tokens += encode_tokens(str(part.get("text", "")))
                if part.get("cache_control"):
                    breakpoints.append(len(tokens))
            texts.append(_text(content))
        tool = tools[0] if tools else {}
        kind, data = reply_for(texts, tool.get("input_schema"))
        read, written = self.breakpoint_cache.use(
            tokens, breakpoints, anthropic_minimum(str(request.get("model", "")))
        )
        output_tokens = count_tokens(json.dumps(data, ensure_ascii=False))
        self.prompt_tokens += len(tokens)
        self.anthropic_read_tokens += read
        self.cache_write_tokens += written
        self.completion_tokens += output_tokens
        self.kinds[kind] += 1
        self.kind_tokens[kind] += len(tokens) + output_tokens
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-haiku-4-5"),
            "content": [
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": tool.get("name", "reply"),
                    "input": data,
                }
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": len(tokens) - read - written,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written,
            },
        }


def _prompt_tokens(texts: list[str], *extras: Any) -> list[int]:
    """The prompt as OpenAI caches it: schemas and tool definitions (billed as prompt tokens
    too), then each message behind its overhead tokens (a marker no text can produce)."""
    tokens: list[int] = []
    for extra in extras:
        if extra:
            tokens += encode_tokens(json.dumps(extra))
    for text in texts:
        tokens += [-1] * MESSAGE_OVERHEAD
        tokens += encode_tokens(text)
    return tokens


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _forced_tool(request: dict[str, Any]) -> dict[str, Any] | None:
    """The function definition the request makes the model call, if any."""
    tools = [t.get("function", {}) for t in request.get("tools") or []]
    if not tools:
        return None
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        return next((t for t in tools if t.get("name") == name), tools[0])
    return tools[0] if choice in ("required", "auto", None) else None


# Anthropic caches no prefix shorter than this (its prompt-caching docs), by model family.
_ANTHROPIC_MINIMUM = (("haiku-4", 4096), ("opus-4-5", 4096), ("haiku", 2048))


def anthropic_minimum(model: str) -> int:
    return next((n for key, n in _ANTHROPIC_MINIMUM if key in model.lower()), 1024)


class BreakpointCache:
    """Anthropic's explicit prompt caching: prefixes ending at `cache_control` breakpoints."""

    def __init__(self) -> None:
        self.written: set[bytes] = set()

    def use(self, tokens: list[int], breakpoints: list[int], minimum: int) -> tuple[int, int]:
        """(tokens read, tokens written) for a prompt with breakpoints after those lengths."""
        cacheable = sorted(b for b in set(breakpoints) if b >= minimum)
        keys = {b: hashlib.blake2b(array("q", tokens[:b]).tobytes(), digest_size=16).digest()
                for b in cacheable}  # fmt: skip
        read = max((b for b in cacheable if keys[b] in self.written), default=0)
        last = cacheable[-1] if cacheable else 0
        written = last - read if last > read else 0
        self.written.update(keys.values())
        return read, written


class HttpServer:
    """Minimal HTTP/1.1 with keep-alive over asyncio streams; bodies need Content-Length."""

    def __init__(self, sim: Simulator, batch_s: float = 1.0) -> None:
        self.sim = sim
        # Ended by time alone: the first look after batch_s seconds ends a batch.
        self.batches = BatchApis(sim.batch_answer, polls_to_end=0, batch_s=batch_s)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.sim.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    key, _, value = raw.decode("latin-1").partition(":")
                    headers[key.strip().lower()] = value.strip()
                if "chunked" in headers.get("transfer-encoding", ""):
                    await self._send(writer, 411, {"error": {"message": "send Content-Length"}})
                    break
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                status, payload, extra = await self.route(
                    method, target.split("?")[0], body, headers
                )
                await self._send(writer, status, payload, extra)
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def route(
        self, method: str, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        path = path.rstrip("/")
        if method == "POST" and path.endswith("/chat/completions"):
            return await self.sim.chat(body)
        if self.batches.handles(path):
            routed = self.batches.route(method, path, headers or {}, body)
            if self.batches.create_delay and self.batches.is_create(method, path):
                await asyncio.sleep(self.batches.create_delay)  # created, not yet answered
            return routed
        if method == "POST" and path == "/batches/stall-create":
            self.batches.create_delay = float(json.loads(body or b"{}").get("seconds", 0))
            return 200, {"create_delay": self.batches.create_delay}, {}
        if method == "POST" and path in ("/batches/hold", "/batches/hold-after-end"):
            self.batches.hold = path == "/batches/hold"
            self.batches.hold_after_end = path == "/batches/hold-after-end"
            return 200, {"hold": self.batches.hold, "after_end": self.batches.hold_after_end}, {}
        if method == "POST" and path == "/batches/release":
            self.batches.release()
            return 200, {"hold": False}, {}
        if method == "POST" and path.endswith("/v1/messages"):
            return await self.sim.chat(body, anthropic=True)
        if path == "/stats":
            return 200, self.sim.stats() | self.batches.stats(), {}
        if path == "/reset":
            self.sim.reset()
            return 200, {"reset": True}, {}
        if method == "GET" and path.endswith("/models"):
            model = {"id": "gpt-4o-mini", "object": "model", "created": 0, "owned_by": "sim"}
            return 200, {"object": "list", "data": [model]}, {}
        return 404, {"error": {"message": f"no route {method} {path}"}}, {}

    @staticmethod
    async def _send(
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        extra: dict[str, str] | None = None,
    ) -> None:
        # Bytes are a file's content (a batch's output), sent as they are.
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            "Connection: keep-alive",
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()


async def serve(port: int, sim: Simulator, batch_s: float = 1.0) -> None:
    handler = HttpServer(sim, batch_s).handle
    server = await asyncio.start_server(handler, "127.0.0.1", port, backlog=1024)
    limit = f"{sim.rps_limit:g} req/s" if sim.rps_limit else "no limit"
    if sim.rps_limit and not sim.limit_headers:
        limit += " (not stated in headers)"
    print(
        f"sim server on http://127.0.0.1:{port}/v1: {sim.latency_s * 1000:g} ms, {limit}, "
        f"tokens by {TOKEN_RULE}",
        flush=True,
    )
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--rps-limit", type=float, default=None)
    parser.add_argument(
        "--burst-s",
        type=float,
        default=0.2,
        help="bucket size in seconds of the limit (default 0.2)",
    )
    parser.add_argument("--dump", help="append every request and reply to this JSONL file")
    parser.add_argument(
        "--batch-s", type=float, default=1.0, help="seconds until a batch ends (default 1)"
    )
    parser.add_argument(
        "--no-ratelimit-headers",
        action="store_true",
        help="do not state the limit in x-ratelimit-* headers",
    )
    args = parser.parse_args()
    sim = Simulator(
        args.latency_ms / 1000,
        args.rps_limit,
        args.burst_s,
        args.dump,
        limit_headers=not args.no_ratelimit_headers,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, sim, args.batch_s))


if __name__ == "__main__":
    main()
