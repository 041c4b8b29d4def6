"""A real HTTP server on 127.0.0.1 that plays OpenAI or Anthropic, from a script.

The provider SDKs are exercised for real (their HTTP client, parsing and error classes); only
the far end is fake. Replies are consumed in the order scripted; once the script runs out,
`server.default(request)` answers.

    server.script(ok_openai('{"a": 1}'), error(429, headers={"retry-after": "2"}))
    server.script(with_headers(ok_openai("hi"), {"x-ratelimit-limit-requests": "60"}))
    model = OpenAIChatModel("m", api_key="k", base_url=server.openai_url)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.batch_apis import BatchApis

__all__ = [
    "BatchApis",
    "LoopbackServer",
    "Recorded",
    "Reply",
    "delay",
    "error",
    "malformed",
    "models_list",
    "ok_anthropic_text",
    "ok_anthropic_tool",
    "ok_openai",
    "refusing_json_schema",
    "reset",
    "with_headers",
]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, headers and body, after `delay_s`, or a dropped socket."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    reset: bool = False


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it. `headers` keys are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    raw: bytes = b""


def _json_reply(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        body=json.dumps(payload).encode(),
        headers={"content-type": "application/json", **(headers or {})},
    )


def ok_openai(
    content: str | None,
    *,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    cached_tokens: int | None = None,
    finish_reason: str = "stop",
    model: str = "loopback-model",
) -> Reply:
    """A chat-completions reply whose message content is `content`."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return _json_reply(
        {
            "id": "chatcmpl-loopback",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": usage,
        }
    )


def _anthropic_message(
    content: list[dict[str, Any]],
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int | None,
    stop_reason: str,
    model: str,
    cache_creation_input_tokens: int | None = None,
) -> Reply:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read_input_tokens is not None:
        usage["cache_read_input_tokens"] = cache_read_input_tokens
    if cache_creation_input_tokens is not None:
        usage["cache_creation_input_tokens"] = cache_creation_input_tokens
    return _json_reply(
        {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
    )


def ok_anthropic_tool(
    input: dict[str, Any],
    *,
    name: str = "response",
    text: str | None = None,
    input_tokens: int = 13,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = None,
    cache_creation_input_tokens: int | None = None,
    stop_reason: str = "tool_use",
    model: str = "loopback-claude",
) -> Reply:
    """A messages reply that calls tool `name` with `input` (after `text`, if given)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": "toolu_loopback", "name": name, "input": input})
    return _anthropic_message(
        blocks,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        stop_reason=stop_reason,
        model=model,
    )


def ok_anthropic_text(
    text: str,
    *,
    input_tokens: int = 13,
    output_tokens: int = 5,
    cache_read_input_tokens: int | None = None,
    stop_reason: str = "end_turn",
    model: str = "loopback-claude",
) -> Reply:
    """A messages reply with one text block."""
    return _anthropic_message(
        [{"type": "text", "text": text}],
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        stop_reason=stop_reason,
        model=model,
    )


def error(status: int, body_json: Any = None, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error; the body defaults to the OpenAI/Anthropic-style {"error": {...}}."""
    if body_json is None:
        body_json = {"error": {"message": f"scripted error {status}", "type": "loopback_error"}}
    return _json_reply(body_json, status=status, headers=headers)


def with_headers(reply: Reply, headers: dict[str, str]) -> Reply:
    """`reply` with `headers` added, such as a provider's rate-limit headers."""
    return replace(reply, headers={**reply.headers, **headers})


def delay(seconds: float, then: Reply | None = None) -> Reply:
    """`then` (a plain OpenAI reply by default), sent after `seconds`."""
    return replace(then if then is not None else ok_openai("late"), delay_s=seconds)


def reset() -> Reply:
    """Read the request, then drop the connection with a TCP RST and no response."""
    return Reply(reset=True)


def malformed(raw_text: str, *, content_type: str = "application/json") -> Reply:
    """A 200 whose body is `raw_text` verbatim, though it claims to be JSON."""
    return Reply(body=raw_text.encode(), headers={"content-type": content_type})


LLAMA_CPP_PYTHON_REFUSAL = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': "
    "\"'text' or 'json_object'\"}}]"
)
"""What llama-cpp-python's server says to `response_format` json_schema (with HTTP 500)."""


def refusing_json_schema(
    answer: Callable[[Recorded], Reply], *, status: int = 500, json_object: bool = True
) -> Callable[[Recorded], Reply]:
    """A server default that answers like llama-cpp-python's server: `response_format`
    json_schema is refused with HTTP `status` naming the field (and json_object too unless
    `json_object`); any other request is answered by `answer`."""

    def serve(request: Recorded) -> Reply:
        body = request.json if isinstance(request.json, dict) else {}
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema" or (kind == "json_object" and not json_object):
            message = LLAMA_CPP_PYTHON_REFUSAL.replace("json_schema", str(kind))
            return error(status, {"error": {"message": message, "type": "internal_server_error"}})
        return answer(request)

    return serve


def models_list(*ids: str, **fields: Any) -> Callable[[Recorded], Reply]:
    """A GET .../models answer listing `ids`, each entry with `fields` (`max_model_len`...)."""
    entries = [{"id": i, "object": "model", "owned_by": "me", **fields} for i in ids]
    return lambda request: _json_reply({"object": "list", "data": entries})


def default_reply(request: Recorded) -> Reply:
    """What an unscripted request gets: a short success in the dialect of its path."""
    if request.path.endswith("/messages"):
        return ok_anthropic_text("ok")
    if request.path.endswith("/chat/completions"):
        return ok_openai("ok")
    return error(404, {"error": {"message": f"no route {request.path}"}})


class LoopbackServer:
    """The server plus its script and the requests it received. Use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.default: Callable[[Recorded], Reply] = default_reply
        self.batches = BatchApis(self._batch_answer, base_url=lambda: self.url)
        """Both providers' batch APIs (`tests.support.batch_apis`), answered from `default`."""
        self.keep_alive = False
        """Keep each connection open for the client's next request, as uvicorn-based servers
        (llama-cpp-python's, vLLM's) do; by default every reply closes its connection."""
        self.models: Callable[[Recorded], Reply] = default_reply
        """What GET .../models answers (404 by default: a server without the list)."""
        self.props: Callable[[Recorded], Reply] = default_reply
        """What GET /props answers (llama.cpp's server settings; 404 by default)."""
        self.model_queries: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            # A short poll keeps shutdown, and so each test's teardown, quick.
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="loopback-http",
            daemon=True,
        )

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The server's root, e.g. http://127.0.0.1:54321."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """A base URL for the OpenAI SDK (it appends /chat/completions)."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """A base URL for the Anthropic SDK (it appends /v1/messages)."""
        return self.url

    @property
    def request_count(self) -> int:
        """How many requests arrived so far."""
        with self._lock:
            return len(self.requests)

    def script(self, *replies: Reply) -> None:
        """Queue `replies`, answered in order before the default takes over."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> LoopbackServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any delayed reply, and close the socket."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _batch_answer(self, dialect: str, custom_id: str, body: Any) -> Reply:
        """A batch's request answered as its endpoint would answer it: by `default`."""
        path = "/v1/chat/completions" if dialect == "openai" else "/v1/messages"
        return self.default(Recorded("POST", path, {}, body))

    def _next_reply(self, request: Recorded) -> Reply:
        if request.method == "GET" and request.path.endswith(("/models", "/props")):
            # A local judge's readiness check asks these before its first call; they are kept
            # apart from the scripted calls and `requests`, so they answer in every test alike.
            with self._lock:
                self.model_queries.append(request)
            return self.models(request) if request.path.endswith("/models") else self.props(request)
        if self.batches.handles(request.path):
            with self._lock:
                self.requests.append(request)
            status, body, headers = self.batches.route(
                request.method, request.path, request.headers, request.raw
            )
            if self.batches.create_delay and self.batches.is_create(request.method, request.path):
                self._stopping.wait(self.batches.create_delay)  # created, not yet answered
            return Reply(status=status, body=body, headers=headers)
        with self._lock:
            self.requests.append(request)
            scripted = self._script.popleft() if self._script else None
        return scripted if scripted is not None else self.default(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that time out or are reset mid-reply are the point of several tests.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = self.path.split("?", 1)[0]
        recorded = Recorded(
            method=self.command,
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            json=body,
            raw=raw,
        )
        reply = owner._next_reply(recorded)
        if reply.delay_s and owner._stopping.wait(reply.delay_s):
            return
        if reply.reset:
            self._reset()
            return
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(reply.body)))
        if not owner.keep_alive:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(reply.body)
        self.close_connection = not owner.keep_alive

    def setup(self) -> None:
        super().setup()
        if self.server.owner.keep_alive:  # HTTP/1.1: the connection stays open for the next
            self.protocol_version = "HTTP/1.1"

    def _reset(self) -> None:
        # Linger 0 turns close() into an RST. The makefile() wrappers hold the fd open, so
        # they are closed first or the socket would only be closed (with a FIN) later.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.rfile.close()
        self.wfile.close()
        self.connection.close()
