"""The OpenAI Batch API (`/v1/files`, `/v1/batches`) for `BatchingChatModel`, through the SDK.

A batch is a JSONL file of chat-completions requests, uploaded with purpose "batch"; when the
batch ends its output file holds one line per answered request and its error file one per
failed or unanswered one, each with the request's `custom_id`. The batch's metadata holds
VERA's request hash (`vera_request_hash`), by which a resumed run finds a batch it created but
never recorded (`find`). Each result line is read on its own: an unreadable one costs only its
request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

from pydantic import ValidationError

from vera.providers._base import (
    ChatRequest,
    ChatResponse,
    RetryableProviderError,
)
from vera.providers._batch import BatchResults, BatchStatus, Outcome, Unanswered, read_result_line
from vera.providers._http import server_message, status_error
from vera.providers._openai import OpenAIChatModel, _messages, _sampling

_ENDPOINT: Final = "/v1/chat/completions"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_UNANSWERED_CODES = frozenset({"batch_expired", "batch_cancelled"})
_TAG: Final = "vera_request_hash"


class OpenAIBatchBackend:
    """`BatchBackend` for an `OpenAIChatModel` (and servers that speak its batch API)."""

    def __init__(self, adapter: OpenAIChatModel) -> None:
        self.adapter = adapter

    def line(self, key: str, request: ChatRequest) -> dict[str, Any]:
        """One request of the input file, the body as the interactive call sends it."""
        adapter = self.adapter
        body: dict[str, Any] = {
            "model": adapter.model,
            "messages": _messages(request),
            **_sampling(adapter.model, request),
            **adapter._response_format(request),
        }
        return {"custom_id": key, "method": "POST", "url": _ENDPOINT, "body": body}

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], tag: str) -> str:
        data = "".join(json.dumps(self.line(k, r), ensure_ascii=False) + "\n" for k, r in items)
        async with self._translated():
            client = self.adapter._get_client()
            uploaded = await client.files.create(
                file=("vera-batch.jsonl", data.encode("utf-8")), purpose="batch"
            )
            batch = await client.batches.create(
                input_file_id=uploaded.id,
                endpoint=_ENDPOINT,
                completion_window="24h",
                metadata={"source": "vera", _TAG: tag},
            )
        batch_id: str = batch.id
        return batch_id

    async def find(self, tag: str, since: float, count: int) -> list[str]:
        found: list[str] = []
        async with self._translated():
            # Newest first: the walk stops at the first batch older than the intent.
            async for batch in self.adapter._get_client().batches.list(limit=100):
                if batch.created_at < since:
                    break
                if (batch.metadata or {}).get(_TAG) == tag:
                    found.append(batch.id)
        return found

    async def status(self, batch_id: str) -> BatchStatus:
        async with self._translated():
            batch = await self.adapter._get_client().batches.retrieve(batch_id)
        counts = batch.request_counts
        return BatchStatus(
            status=batch.status,
            ended=batch.status in _ENDED,
            succeeded=counts.completed if counts else 0,
            failed=counts.failed if counts else 0,
            total=counts.total if counts else 0,
        )

    async def results(self, batch_id: str) -> BatchResults:
        results = BatchResults(batch_id)
        async with self._translated():
            client = self.adapter._get_client()
            batch = await client.batches.retrieve(batch_id)
            # The output file first: of two lines for one id, the first good one wins.
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    content = await client.files.content(file_id)
                    self._read_lines(content.text, results)
        return results

    def _read_lines(self, text: str, results: BatchResults) -> None:
        """The lines of an output or error file by `custom_id`; an expired or cancelled
        request's line becomes `Unanswered`, an unreadable one a problem of `results`."""
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            line = read_result_line(raw)
            if isinstance(line, str):
                results.unreadable(number, line)
                continue
            key = line["custom_id"]
            error = line.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            if code in _UNANSWERED_CODES:
                results.add(key, Unanswered(f"the batch ended unanswered ({code})"), False)
                continue
            why = self._malformed(line)
            if why is not None:
                results.unreadable(number, why, key)
            else:
                results.add(key, line, self.succeeded(line))

    def _malformed(self, line: dict[str, Any]) -> str | None:
        """Why a line with an id has not the shape of a result line, or None."""
        response, error = line.get("response"), line.get("error")
        if response is None:
            return None if isinstance(error, dict) else "neither a response nor an error"
        if not isinstance(response, dict):
            return "'response' is not an object"
        if response.get("status_code") != 200:
            status = response.get("status_code")
            return None if isinstance(status, int) else "'response.status_code' is not a number"
        try:
            self.adapter._sdk.types.chat.ChatCompletion.model_validate(response.get("body"))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "body"
            return f"'response.body.{field}': {first['msg']}"
        return None

    def succeeded(self, outcome: Outcome) -> bool:
        response = outcome.get("response") if isinstance(outcome, dict) else None
        return isinstance(response, dict) and response.get("status_code") == 200

    def response(self, request: ChatRequest, outcome: Outcome) -> ChatResponse:
        adapter = self.adapter
        response = outcome.get("response") or {}
        body = response.get("body")
        status = response.get("status_code")
        if status == 200 and isinstance(body, dict):
            completion = adapter._sdk.types.chat.ChatCompletion.model_validate(body)
            return adapter._response(request, completion, None)
        error = outcome.get("error")
        error = error if isinstance(error, dict) else {}
        if not isinstance(status, int):
            raise RetryableProviderError(
                f"OpenAI batch request failed: {error.get('message') or 'no reply'}"
            )
        raise status_error(
            provider="OpenAI",
            status=status,
            message=server_message(body, str(error.get("message") or "batch request failed")),
            headers={},
            key_env=adapter.key_env,
        )

    @asynccontextmanager
    async def _translated(self) -> AsyncIterator[None]:
        """SDK failures as VERA's errors, as the interactive calls translate them."""
        with self.adapter.sdk_errors():
            yield
