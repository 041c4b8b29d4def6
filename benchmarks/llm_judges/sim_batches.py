"""The two providers' batch APIs for `sim_server.py`, answered by its `Simulator`.

- OpenAI: POST /v1/files (multipart JSONL, purpose "batch"), POST /v1/batches, GET
  /v1/batches/{id}, POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content (output and
  error files).
- Anthropic: POST /v1/messages/batches, GET /v1/messages/batches/{id}, POST .../cancel, GET
  .../results (JSONL). Each request is answered as the chat endpoint would answer the same
  prompt, the reply turned into a Messages API tool call.

A batch ends `batch_s` seconds after it was created (answered all at once, with no simulated
latency: a batch's latency is its wait). While held (`POST /batches/hold`, undone by `POST
/batches/release`) no batch ends; after `POST /batches/hold-after-end` the batches created once
one batch has ended are held (the second wave of a run): how the benchmark kills a run with
batches pending and others done. Every
`custom_id` received is counted, so `GET /stats` says whether any request was sent twice.
"""

from __future__ import annotations

import email.parser
import itertools
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Reply = tuple[int, Any, dict[str, str]]
_OPENAI_ENDED = ("completed", "expired", "cancelled")


@dataclass
class _Batch:
    id: str
    dialect: str
    lines: list[tuple[str, dict[str, Any]]]
    created: float
    input_file_id: str = ""
    status: str = "in_progress"
    results: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None


class BatchApis:
    """Batches held in memory; `sim` answers their requests."""

    def __init__(self, sim: Any, batch_s: float = 1.0) -> None:
        self.sim = sim
        self.batch_s = batch_s
        self.hold = False
        self.hold_after_end = False
        self.held: set[str] = set()
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, bytes] = {}
        self.received: Counter[str] = Counter()
        self.ids = itertools.count(1)

    def stats(self) -> dict[str, Any]:
        states = Counter(b.status for b in self.batches.values())
        return {
            "batches": len(self.batches),
            "batch_states": dict(states),
            "batch_requests": sum(self.received.values()),
            "batch_requests_sent_twice": sum(1 for n in self.received.values() if n > 1),
        }

    def route(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply | None:
        """The reply to a batch endpoint, or None for another path."""
        parts = path.strip("/").split("/")
        post = method == "POST"
        if parts[:1] == ["batches"] and parts[1:] in (["hold"], ["release"], ["hold-after-end"]):
            self.hold = parts[1] == "hold"
            self.hold_after_end = parts[1] == "hold-after-end"
            if parts[1] == "release":
                self.held.clear()
            return 200, {"hold": self.hold, "hold_after_end": self.hold_after_end}, {}
        if parts[:2] == ["v1", "files"]:
            if post and len(parts) == 2:
                return self._upload(headers, body)
            if len(parts) == 4 and parts[3] == "content":
                return 200, self.files.get(parts[2], b""), {}
        if parts[:2] == ["v1", "batches"]:
            if post and len(parts) == 2:
                return self._create_openai(json.loads(body))
            return self._call(parts[2], parts[3:], "openai")
        if parts[:3] == ["v1", "messages", "batches"]:
            if post and len(parts) == 3:
                return self._create_anthropic(json.loads(body))
            return self._call(parts[3], parts[4:], "anthropic")
        return None

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):08d}"

    def _upload(self, headers: dict[str, str], body: bytes) -> Reply:
        head = f"content-type: {headers.get('content-type', '')}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + body)
        data = b""
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
        file_id = self._id("file")
        self.files[file_id] = data
        info = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time())}
        info |= {"filename": "batch.jsonl", "purpose": "batch", "status": "processed"}
        return 200, info, {}

    def _create_openai(self, body: dict[str, Any]) -> Reply:
        data = self.files.get(body.get("input_file_id", ""))
        if data is None:
            return 404, {"error": {"message": "no such file"}}, {}
        lines = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
        batch = self._new("openai", [(x["custom_id"], x["body"]) for x in lines])
        batch.input_file_id = body["input_file_id"]
        return 200, self._openai_view(batch), {}

    def _create_anthropic(self, body: dict[str, Any]) -> Reply:
        batch = self._new("anthropic", [(r["custom_id"], r["params"]) for r in body["requests"]])
        return 200, self._anthropic_view(batch), {}

    def _new(self, dialect: str, lines: list[tuple[str, dict[str, Any]]]) -> _Batch:
        prefix = "batch" if dialect == "openai" else "msgbatch"
        batch = _Batch(self._id(prefix), dialect, lines, time.monotonic())
        ended = any(b.status != "in_progress" for b in self.batches.values())
        if self.hold_after_end and ended:
            self.held.add(batch.id)
        self.batches[batch.id] = batch
        self.received.update(custom_id for custom_id, _ in lines)
        return batch

    def _call(self, batch_id: str, rest: list[str], dialect: str) -> Reply:
        batch = self.batches.get(batch_id)
        if batch is None or batch.dialect != dialect:
            return 404, {"error": {"message": f"no batch {batch_id}"}}, {}
        if rest == ["results"]:
            text = "".join(json.dumps(x) + "\n" for x in batch.results)
            return 200, text.encode(), {}
        if rest == ["cancel"]:
            self._end(batch, cancelled=True)
        elif self._due(batch):
            self._end(batch)
        view = self._openai_view if dialect == "openai" else self._anthropic_view
        return 200, view(batch), {}

    def _due(self, batch: _Batch) -> bool:
        waited = time.monotonic() - batch.created
        held = self.hold or batch.id in self.held
        return batch.status == "in_progress" and not held and waited >= self.batch_s

    def _end(self, batch: _Batch, *, cancelled: bool = False) -> None:
        if batch.status != "in_progress":
            return
        for custom_id, request in batch.lines:
            if cancelled:
                batch.results.append(_cancelled(batch.dialect, custom_id))
            elif batch.dialect == "openai":
                batch.results.append(self._openai_line(custom_id, request))
            else:
                batch.results.append(self._anthropic_line(custom_id, request))
        if batch.dialect == "anthropic":
            batch.status = "ended"
            return
        batch.status = "cancelled" if cancelled else "completed"
        ok = [x for x in batch.results if (x.get("response") or {}).get("status_code") == 200]
        failed = [x for x in batch.results if x not in ok]
        batch.output_file_id = self._file(ok) if ok else None
        batch.error_file_id = self._file(failed) if failed else None

    def _file(self, lines: list[dict[str, Any]]) -> str:
        file_id = self._id("file")
        self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    def _openai_line(self, custom_id: str, request: dict[str, Any]) -> dict[str, Any]:
        status, reply = self._answer(request)
        response = {"status_code": status, "request_id": custom_id[:16], "body": reply}
        return {"id": f"resp_{custom_id[:12]}", "custom_id": custom_id, "response": response}

    def _anthropic_line(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        status, reply = self._answer(_as_openai(params))
        if status != 200:
            error = {"type": "invalid_request_error", "message": str(reply)}
            result = {"type": "errored", "error": {"type": "error", "error": error}}
            return {"custom_id": custom_id, "result": result}
        return {
            "custom_id": custom_id,
            "result": {"type": "succeeded", "message": _as_message(reply)},
        }

    def _answer(self, request: dict[str, Any]) -> tuple[int, Any]:
        self.sim.requests += 1
        self.sim.first = self.sim.first or time.monotonic()
        try:
            reply = self.sim._complete(request)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.sim.errors += 1
            return 400, {"error": {"message": f"bad request: {exc}"}}
        self.sim.last = time.monotonic()
        return 200, reply

    def _openai_view(self, batch: _Batch) -> dict[str, Any]:
        done = len(batch.results)
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
            "request_counts": {"total": len(batch.lines), "completed": done, "failed": 0},
        }

    def _anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        counts = Counter(x["result"]["type"] for x in batch.results)
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": {
                "processing": len(batch.lines) - len(batch.results),
                **{k: counts.get(k, 0) for k in ("succeeded", "errored", "canceled", "expired")},
            },
            "created_at": "2026-01-01T00:00:00Z",
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": "2026-01-01T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"/v1/messages/batches/{batch.id}/results" if ended else None,
        }


def _cancelled(dialect: str, custom_id: str) -> dict[str, Any]:
    if dialect == "anthropic":
        return {"custom_id": custom_id, "result": {"type": "canceled"}}
    error = {"code": "batch_cancelled", "message": "the batch was cancelled first"}
    return {
        "id": f"resp_{custom_id[:12]}",
        "custom_id": custom_id,
        "response": None,
        "error": error,
    }


def _as_openai(params: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic request as the chat endpoint's: the system prompt a message, the tool a
    function."""
    messages = list(params.get("messages") or [])
    if params.get("system"):
        messages.insert(0, {"role": "system", "content": params["system"]})
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
