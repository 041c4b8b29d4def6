"""The OpenAI Batch API (`/v1/files`, `/v1/batches`) for `BatchingChatModel`, through the SDK.

A batch is a JSONL file of chat-completions requests, uploaded with purpose "batch"; when the
batch ends its output file holds one line per answered request and its error file one per
failed or unanswered one, each with the request's `custom_id`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, cast

from vera.providers._base import (
    ChatRequest,
    ChatResponse,
    RetryableProviderError,
    UnreadableReplyError,
)
from vera.providers._batch import BatchStatus, Outcome, Unanswered
from vera.providers._http import server_message, status_error
from vera.providers._openai import OpenAIChatModel, _messages, _sampling

__all__ = ["OpenAIBatchBackend"]

_ENDPOINT: Final = "/v1/chat/completions"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_UNANSWERED_CODES = frozenset({"batch_expired", "batch_cancelled"})


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

    async def submit(self, items: Sequence[tuple[str, ChatRequest]]) -> str:
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
                metadata={"source": "vera"},
            )
        return batch.id

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

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        async with self._translated():
            client = self.adapter._get_client()
            batch = await client.batches.retrieve(batch_id)
            found: dict[str, Outcome] = {}
            # Errors first, so an answer in the output file wins over an error for the same id.
            for file_id in (batch.error_file_id, batch.output_file_id):
                if file_id:
                    content = await client.files.content(file_id)
                    found.update(_read_lines(content.text))
        return found

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
        error = outcome.get("error") or {}
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


def _read_lines(text: str) -> dict[str, Outcome]:
    """The lines of an output or error file by `custom_id`; an expired or cancelled request's
    line becomes `Unanswered`."""
    found: dict[str, Outcome] = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise UnreadableReplyError(f"a batch result line is not JSON: {raw[:80]!r}") from exc
        if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
            raise UnreadableReplyError(f"a batch result line has no custom_id: {raw[:80]!r}")
        error = line.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if code in _UNANSWERED_CODES:
            found[line["custom_id"]] = Unanswered(f"the batch ended unanswered ({code})")
        else:
            found[line["custom_id"]] = cast(dict[str, Any], line)
    return found
