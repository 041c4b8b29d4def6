"""Both providers' batch APIs, simulated in memory, for every fake server of the repository:
the loopback server of the tests (`tests.support.loopback`) and the benchmarks' simulated
provider (`benchmarks/llm_judges/sim_server.py`). Standard library only, so the benchmarks'
own virtual environment imports it too.

- OpenAI: POST /v1/files (multipart JSONL, purpose "batch"), POST /v1/batches (its
  `metadata` kept), GET /v1/batches (newest first), GET /v1/batches/{id}, POST
  /v1/batches/{id}/cancel, GET /v1/files/{id}/content (output and error files).
- Anthropic: POST /v1/messages/batches, GET /v1/messages/batches (newest first), GET
  /v1/messages/batches/{id}, POST .../cancel, GET .../results (JSONL).

Each request of a batch is answered, when the batch ends, by `answer(dialect, custom_id,
body)` where set, else by the server's `default` answerer: anything with a `status` and a
JSON `body` (bytes), as the endpoint would answer the same request.

A batch ends when it is looked at (retrieved) once it has been looked at more than
`polls_to_end` times and `batch_s` seconds have passed since it was created; never while
`hold` is set or it is `held`. With `hold_after_end`, the batches created once one batch has
ended are held (a run's second wave), until `release()`. `expire_next(answered=k)` makes the
next batch expire with only its first k requests answered; `failing_polls` answers the next
retrieves 503. `received` lists every custom_id ever submitted, so a request sent twice shows.
`create_delay` is how long the server waits, the batch already created, before it answers a
create (each server sleeps it, see `is_create`): the window in which a kill leaves a batch
created but not recorded. `mangle(lines)` rewrites the result lines of each batch that ends
(one output line per request, JSON text), to serve broken, missing or repeated lines.
"""

from __future__ import annotations

import email.parser
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Answer", "BatchApis", "Routed"]

Routed = tuple[int, bytes, dict[str, str]]
"""A batch endpoint's reply: status, body, headers."""

_OPENAI_ENDED = ("completed", "failed", "expired", "cancelled")
_JSON = {"content-type": "application/json"}


class Answer(Protocol):
    """One request's answer, as the endpoint would give it (a loopback `Reply` is one)."""

    @property
    def status(self) -> int: ...

    @property
    def body(self) -> bytes: ...


Answerer = Callable[[str, str, Any], Answer]


@dataclass
class _Batch:
    """One batch held: its lines (custom_id, body), how often it was looked at, how it ends,
    and the results once it has."""

    id: str
    dialect: str  # "openai" or "anthropic"
    lines: list[tuple[str, Any]]
    created: float
    created_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)
    input_file_id: str = ""
    polls: int = 0
    status: str = "in_progress"
    ending: str = "completed"  # or "expired"
    answered_before_end: int | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    served: list[str] = field(default_factory=list)
    """The result lines as served (Anthropic's results), after `BatchApis.mangle`."""
    output_file_id: str | None = None
    error_file_id: str | None = None


def _json(payload: Any, status: int = 200) -> Routed:
    return status, json.dumps(payload).encode(), dict(_JSON)


def _error(status: int, message: str) -> Routed:
    return _json({"error": {"message": message}}, status)


class BatchApis:
    """Batches held in memory, answered by `default` (or `answer`, where set)."""

    def __init__(
        self,
        default: Answerer,
        *,
        base_url: Callable[[], str] = lambda: "",
        polls_to_end: int = 1,
        batch_s: float = 0.0,
    ) -> None:
        self.default = default
        self.base_url = base_url
        self.polls_to_end = polls_to_end
        self.batch_s = batch_s
        self.hold = False
        self.hold_after_end = False
        self.held: set[str] = set()
        self.answer: Answerer | None = None
        self.received: list[str] = []
        self.created: list[str] = []
        self.failing_polls = 0
        """The next this many looks at a batch are answered 503."""
        self.create_delay = 0.0
        self.refuse_list: int | None = None
        """A status every list of batches is answered with (a server without the endpoint)."""
        self.downloads = 0
        """Result files (OpenAI) and results (Anthropic) served so far."""
        self.mangle: Callable[[list[str]], list[str]] | None = None
        self._batches: dict[str, _Batch] = {}
        self._files: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self._expire: list[int] = []
        self._lock = threading.Lock()

    def expire_next(self, *, answered: int = 0) -> None:
        """The next batch created expires, its first `answered` requests answered."""
        self._expire.append(answered)

    def release(self) -> None:
        """End every hold: the batches held may end when next looked at."""
        self.hold = self.hold_after_end = False
        self.held.clear()

    def is_create(self, method: str, path: str) -> bool:
        """Whether this request creates a batch (the server then sleeps `create_delay`)."""
        return method == "POST" and path.split("?")[0].rstrip("/") in (
            "/v1/batches",
            "/v1/messages/batches",
        )

    def handles(self, path: str) -> bool:
        """Whether `path` is a batch endpoint."""
        return path.startswith(("/v1/files", "/v1/batches", "/v1/messages/batches"))

    def stats(self) -> dict[str, Any]:
        """Batches by state, requests received, and how many custom_ids came more than once."""
        states = Counter(b.status for b in self._batches.values())
        return {
            "batches": len(self._batches),
            "batch_states": dict(states),
            "batch_requests": len(self.received),
            "batch_requests_sent_twice": sum(1 for n in Counter(self.received).values() if n > 1),
            "batch_distinct_requests": len(set(self.received)),
            "batch_downloads": self.downloads,
        }

    def route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Routed:
        """The reply to a request for a batch endpoint (see `handles`)."""
        with self._lock:
            return self._route(method, path.split("?")[0].rstrip("/"), headers, raw)

    def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Routed:
        parts = path.strip("/").split("/")
        post = method == "POST"
        if parts[:2] == ["v1", "files"]:
            if post and len(parts) == 2:
                return self._upload(headers, raw)
            if len(parts) == 4 and parts[3] == "content":
                self.downloads += 1
                return 200, self._files.get(parts[2], b""), {}
        if parts[:2] == ["v1", "batches"] and len(parts) >= 2:
            if post and len(parts) == 2:
                return self._create_openai(json.loads(raw))
            if len(parts) == 2:
                return (
                    self._list("openai") if not self.refuse_list else _error(self.refuse_list, "no")
                )
            if len(parts) > 2:
                return self._batch_call(parts[2], parts[3:], "openai")
        if parts[:3] == ["v1", "messages", "batches"]:
            if post and len(parts) == 3:
                return self._create_anthropic(json.loads(raw))
            if len(parts) == 3:
                return (
                    self._list("anthropic")
                    if not self.refuse_list
                    else _error(self.refuse_list, "no")
                )
            if len(parts) > 3:
                return self._batch_call(parts[3], parts[4:], "anthropic")
        return _error(404, f"no route {method} {path}")

    def _list(self, dialect: str) -> Routed:
        """Every batch of the dialect, newest first, on one page."""
        mine = [b for b in reversed(self._batches.values()) if b.dialect == dialect]
        view = self._openai_view if dialect == "openai" else self._anthropic_view
        data = [view(b) for b in mine]
        first = data[0]["id"] if data else None
        last = data[-1]["id"] if data else None
        page: dict[str, Any] = {"data": data, "has_more": False, "first_id": first}
        page["last_id"] = last
        if dialect == "openai":
            page["object"] = "list"
        return _json(page)

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # -- creating ------------------------------------------------------------------------

    def _upload(self, headers: dict[str, str], raw: bytes) -> Routed:
        head = f"content-type: {headers.get('content-type', '')}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + raw)
        data = b""
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
        file_id = self._next_id("file")
        self._files[file_id] = data
        return _json(_openai_file(file_id, len(data)))

    def _create_openai(self, body: Any) -> Routed:
        data = self._files.get(body.get("input_file_id", ""))
        if data is None:
            return _error(404, "no such file")
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        batch = self._new("openai", [(x["custom_id"], x["body"]) for x in lines])
        batch.input_file_id = body["input_file_id"]
        batch.metadata = dict(body.get("metadata") or {})
        batch.status = "validating"
        return _json(self._openai_view(batch))

    def _create_anthropic(self, body: Any) -> Routed:
        batch = self._new("anthropic", [(r["custom_id"], r["params"]) for r in body["requests"]])
        return _json(self._anthropic_view(batch))

    def _new(self, dialect: str, lines: list[tuple[str, Any]]) -> _Batch:
        prefix = "batch" if dialect == "openai" else "msgbatch"
        batch = _Batch(self._next_id(prefix), dialect, lines, time.monotonic())
        if self._expire:
            batch.ending = "expired"
            batch.answered_before_end = self._expire.pop(0)
        if self.hold_after_end and any(self._ended(b) for b in self._batches.values()):
            self.held.add(batch.id)
        self._batches[batch.id] = batch
        self.created.append(batch.id)
        self.received.extend(custom_id for custom_id, _ in lines)
        return batch

    # -- polling, results, cancel ----------------------------------------------------------

    def _batch_call(self, batch_id: str, rest: list[str], dialect: str) -> Routed:
        if not rest and self.failing_polls > 0:
            self.failing_polls -= 1
            return _error(503, "overloaded")
        batch = self._batches.get(batch_id)
        if batch is None or batch.dialect != dialect:
            return _error(404, f"no batch {batch_id}")
        if rest == ["cancel"]:
            self._end(batch, "cancelled")
        elif rest == ["results"]:
            self.downloads += 1
            text = "".join(line + "\n" for line in batch.served)
            return 200, text.encode(), {"content-type": "application/binary"}
        elif not self._ended(batch):
            batch.polls += 1
            if self._due(batch):
                self._end(batch, batch.ending)
            elif batch.status == "validating":
                batch.status = "in_progress"
        view = self._openai_view if dialect == "openai" else self._anthropic_view
        return _json(view(batch))

    def _due(self, batch: _Batch) -> bool:
        if self.hold or batch.id in self.held or batch.polls <= self.polls_to_end:
            return False
        return time.monotonic() - batch.created >= self.batch_s

    def _ended(self, batch: _Batch) -> bool:
        return batch.status in _OPENAI_ENDED or batch.status == "ended"

    def _end(self, batch: _Batch, how: str) -> None:
        """Answer the batch's requests (all, or the first few of an expired or cancelled one)
        and file the results."""
        if self._ended(batch):
            return
        answered = len(batch.lines) if how == "completed" else batch.answered_before_end or 0
        outputs, errors = [], []
        for index, (custom_id, body) in enumerate(batch.lines):
            if index < answered:
                line = _result_line(batch.dialect, custom_id, self._answer(batch, custom_id, body))
            else:
                line = _unanswered_line(batch.dialect, custom_id, how)
            ok = (line.get("response") or {}).get("status_code") == 200 or (
                (line.get("result") or {}).get("type") == "succeeded"
            )
            (outputs if ok else errors).append(line)
        batch.results = outputs + errors
        batch.ending = how
        served = [json.dumps(x) for x in outputs]
        if self.mangle is not None:
            served = self.mangle(served)
        if batch.dialect == "anthropic":
            batch.status = "ended"
            batch.served = [*served, *(json.dumps(x) for x in errors)]
            return
        batch.status = how
        if served:
            batch.output_file_id = self._file(served)
        if errors:
            batch.error_file_id = self._file([json.dumps(x) for x in errors])

    def _answer(self, batch: _Batch, custom_id: str, body: Any) -> Answer:
        return (self.answer or self.default)(batch.dialect, custom_id, body)

    def _file(self, lines: list[str]) -> str:
        file_id = self._next_id("file")
        self._files[file_id] = "".join(x + "\n" for x in lines).encode()
        return file_id

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        done = [x for x in batch.results if (x.get("response") or {}).get("status_code") == 200]
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(batch.created_at),
            "metadata": batch.metadata,
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
        results = f"{self.base_url()}/v1/messages/batches/{batch.id}/results"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "created_at": _iso(batch.created_at),
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": results if ended else None,
        }


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


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


def _result_line(dialect: str, custom_id: str, reply: Answer) -> dict[str, Any]:
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
