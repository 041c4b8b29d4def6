"""A real HTTP server on 127.0.0.1 that plays OpenAI or Anthropic, from a script.

The provider SDKs are exercised for real (their HTTP client, parsing and error classes); only
the far end is fake. Replies are consumed in the order scripted; once the script runs out,
`server.default(request)` answers.

    server.script(ok_openai('{"a": 1}'), error(429, headers={"retry-after": "2"}))
    server.script(with_headers(ok_openai("hi"), {"x-ratelimit-limit-requests": "60"}))
    model = OpenAIChatModel("m", api_key="k", base_url=server.openai_url)
"""

from __future__ import annotations

import email.parser
import itertools
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "BatchApis",
    "LoopbackServer",
    "Recorded",
    "Reply",
    "delay",
    "error",
    "malformed",
    "ok_anthropic_text",
    "ok_anthropic_tool",
    "ok_openai",
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
        self.batches = BatchApis(self)
        """Both providers' batch APIs (`vera.providers._batch`), answered from `default`."""
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

    def _next_reply(self, request: Recorded) -> Reply:
        if self.batches.handles(request.path):
            with self._lock:
                self.requests.append(request)
            return self.batches.reply(request)
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
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(reply.body)
        self.close_connection = True

    def _reset(self) -> None:
        # Linger 0 turns close() into an RST. The makefile() wrappers hold the fd open, so
        # they are closed first or the socket would only be closed (with a FIN) later.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.rfile.close()
        self.wfile.close()
        self.connection.close()


_OPENAI_ENDED = ("completed", "failed", "expired", "cancelled")


@dataclass
class _Batch:
    """One batch the server holds: its lines (custom_id, body), how often it was polled, how
    it ends, and the results once it has."""

    id: str
    dialect: str  # "openai" or "anthropic"
    lines: list[tuple[str, Any]]
    input_file_id: str = ""
    polls: int = 0
    status: str = "in_progress"
    ending: str = "completed"  # or "expired"
    answered_before_end: int | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None


class BatchApis:
    """OpenAI's Batch API (`/v1/files`, `/v1/batches`, file content) and Anthropic's Message
    Batches (`/v1/messages/batches`, results), as the official SDKs call them.

    A batch stays in progress for `polls_to_end` retrieves, then ends; each of its requests is
    answered by `answer(dialect, custom_id, body)` (by default the server's `default` reply for
    the endpoint). `hold` keeps every batch in progress (a run killed while batches are
    pending); `expire_next(answered=k)` makes the next batch expire with only its first `k`
    requests answered. `received` lists every custom_id ever submitted, to count duplicates.
    """

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.polls_to_end = 1
        self.hold = False
        self.answer: Callable[[str, str, Any], Reply] | None = None
        self.received: list[str] = []
        self.created: list[str] = []
        self.failing_polls = 0
        """The next this many looks at a batch are answered 503."""
        self._batches: dict[str, _Batch] = {}
        self._files: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self._expire: list[int] = []
        self._lock = threading.Lock()

    def expire_next(self, *, answered: int = 0) -> None:
        """The next batch created expires, its first `answered` requests answered."""
        self._expire.append(answered)

    def handles(self, path: str) -> bool:
        """Whether `path` is a batch endpoint."""
        return path.startswith(("/v1/files", "/v1/batches", "/v1/messages/batches"))

    def reply(self, request: Recorded) -> Reply:
        with self._lock:
            return self._route(request)

    def _route(self, request: Recorded) -> Reply:
        parts = request.path.strip("/").split("/")
        post = request.method == "POST"
        if parts[:2] == ["v1", "files"]:
            if post and len(parts) == 2:
                return self._upload(request)
            if len(parts) == 4 and parts[3] == "content":
                return Reply(body=self._files.get(parts[2], b""), headers={})
        if parts[:2] == ["v1", "batches"]:
            if post and len(parts) == 2:
                return self._create_openai(request.json)
            return self._batch_call(parts[2], parts[3:], "openai")
        if parts[:3] == ["v1", "messages", "batches"]:
            if post and len(parts) == 3:
                return self._create_anthropic(request.json)
            return self._batch_call(parts[3], parts[4:], "anthropic")
        return error(404, {"error": {"message": f"no route {request.path}"}})

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # -- creating ------------------------------------------------------------------------

    def _upload(self, request: Recorded) -> Reply:
        head = f"content-type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + request.raw)
        data = b""
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
        file_id = self._next_id("file")
        self._files[file_id] = data
        return _json_reply(_openai_file(file_id, len(data)))

    def _create_openai(self, body: Any) -> Reply:
        data = self._files.get(body["input_file_id"])
        if data is None:
            return error(404, {"error": {"message": "no such file"}})
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        batch = self._new("openai", [(x["custom_id"], x["body"]) for x in lines])
        batch.input_file_id = body["input_file_id"]
        batch.status = "validating"
        return _json_reply(self._openai_view(batch))

    def _create_anthropic(self, body: Any) -> Reply:
        batch = self._new("anthropic", [(r["custom_id"], r["params"]) for r in body["requests"]])
        return _json_reply(self._anthropic_view(batch))

    def _new(self, dialect: str, lines: list[tuple[str, Any]]) -> _Batch:
        batch = _Batch(
            id=self._next_id("batch" if dialect == "openai" else "msgbatch"),
            dialect=dialect,
            lines=lines,
        )
        if self._expire:
            batch.ending = "expired"
            batch.answered_before_end = self._expire.pop(0)
        self._batches[batch.id] = batch
        self.created.append(batch.id)
        self.received.extend(custom_id for custom_id, _ in lines)
        return batch

    # -- polling, results, cancel ----------------------------------------------------------

    def _batch_call(self, batch_id: str, rest: list[str], dialect: str) -> Reply:
        if not rest and self.failing_polls > 0:
            self.failing_polls -= 1
            return error(503)
        batch = self._batches.get(batch_id)
        if batch is None or batch.dialect != dialect:
            return error(404, {"error": {"message": f"no batch {batch_id}"}})
        if rest == ["cancel"]:
            self._end(batch, "cancelled")
        elif rest == ["results"]:
            text = "".join(json.dumps(line) + "\n" for line in batch.results)
            return Reply(body=text.encode(), headers={"content-type": "application/binary"})
        elif not self._ended(batch):
            batch.polls += 1
            if batch.polls > self.polls_to_end and not self.hold:
                self._end(batch, batch.ending)
            elif batch.status == "validating":
                batch.status = "in_progress"
        view = self._openai_view if dialect == "openai" else self._anthropic_view
        return _json_reply(view(batch))

    def _ended(self, batch: _Batch) -> bool:
        return batch.status in _OPENAI_ENDED or batch.status == "ended"

    def _end(self, batch: _Batch, how: str) -> None:
        """Answer the batch's requests (all, or the first few of an expired or cancelled one)
        and file the results."""
        if self._ended(batch):
            return
        answered = len(batch.lines)
        if how != "completed":
            answered = batch.answered_before_end or 0
        outputs, errors = [], []
        for index, (custom_id, body) in enumerate(batch.lines):
            if index < answered:
                reply = self._answer(batch.dialect, custom_id, body)
                line = _result_line(batch.dialect, custom_id, reply)
            else:
                line = _unanswered_line(batch.dialect, custom_id, how)
            ok = (line.get("response") or {}).get("status_code") == 200 or (
                (line.get("result") or {}).get("type") == "succeeded"
            )
            (outputs if ok else errors).append(line)
        if batch.dialect == "anthropic":
            batch.results = outputs + errors
            batch.status = "ended"
            batch.ending = how
            return
        batch.results = outputs + errors
        batch.status = how
        if outputs:
            batch.output_file_id = self._file(outputs)
        if errors:
            batch.error_file_id = self._file(errors)

    def _file(self, lines: list[dict[str, Any]]) -> str:
        file_id = self._next_id("file")
        self._files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    def _answer(self, dialect: str, custom_id: str, body: Any) -> Reply:
        if self.answer is not None:
            return self.answer(dialect, custom_id, body)
        path = "/v1/chat/completions" if dialect == "openai" else "/v1/messages"
        return self.server.default(Recorded("POST", path, {}, body))

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        done = [x for x in batch.results if (x.get("response") or {}).get("status_code") == 200]
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(time.time()),
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "request_counts": {
                "total": len(batch.lines),
                "completed": len(done),
                "failed": len(batch.results) - len(done),
            },
        }

    def _anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for line in batch.results:
            counts[line["result"]["type"]] += 1
        counts["processing"] = len(batch.lines) - len(batch.results)
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": (
                f"{self.server.url}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }


def _openai_file(file_id: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def _result_line(dialect: str, custom_id: str, reply: Reply) -> dict[str, Any]:
    body = json.loads(reply.body) if reply.body else None
    if dialect == "openai":
        return {
            "id": f"resp_{custom_id[:8]}",
            "custom_id": custom_id,
            "response": {"status_code": reply.status, "request_id": "req", "body": body},
            "error": None,
        }
    if reply.status == 200:
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": body}}
    inner = (body or {}).get("error") or {}
    kind = {429: "rate_limit_error"}.get(
        reply.status, "invalid_request_error" if reply.status < 500 else "api_error"
    )
    return {
        "custom_id": custom_id,
        "result": {
            "type": "errored",
            "error": {
                "type": "error",
                "error": {"type": kind, "message": inner.get("message", "scripted")},
            },
        },
    }


def _unanswered_line(dialect: str, custom_id: str, how: str) -> dict[str, Any]:
    if dialect == "openai":
        code = "batch_expired" if how == "expired" else "batch_cancelled"
        return {
            "id": f"resp_{custom_id[:8]}",
            "custom_id": custom_id,
            "response": None,
            "error": {"code": code, "message": f"the batch {how} first"},
        }
    kind = "expired" if how == "expired" else "canceled"
    return {"custom_id": custom_id, "result": {"type": kind}}
