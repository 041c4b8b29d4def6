"""Anthropic Message Batches (`/v1/messages/batches`) for `BatchingChatModel`, via the SDK.

A batch carries each request's Messages API parameters under its `custom_id`; once its
processing status is "ended", its results (JSONL behind `results_url`) say for each request
"succeeded" with the message, "errored" with the error, or "canceled" / "expired". Each line
is read on its own: an unreadable one costs only its request.

Message Batches keep no metadata, so a batch created but never recorded is found (`find`) by
its size and time: every batch of as many requests created since the intent is awaited, and
only the lines whose `custom_id` (a hash of the whole request) is one of the run's are taken.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from pydantic import ValidationError

from vera.providers._anthropic import AnthropicChatModel, _messages
from vera.providers._base import ChatRequest, ChatResponse
from vera.providers._batch import BatchResults, BatchStatus, Outcome, Unanswered, read_result_line
from vera.providers._http import status_error

_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""Anthropic's error types and the HTTP status each stands for, so that a failed request of
a batch is retried, or not, as the same failure of an interactive call is."""


class AnthropicBatchBackend:
    """`BatchBackend` for an `AnthropicChatModel`."""

    def __init__(self, adapter: AnthropicChatModel) -> None:
        self.adapter = adapter

    def params(self, request: ChatRequest) -> dict[str, Any]:
        """One request's parameters, as the interactive call sends them."""
        adapter = self.adapter
        params: dict[str, Any] = {
            "model": adapter.model,
            "max_tokens": request.max_tokens,
            "messages": _messages(request, adapter.model),
        }
        system = adapter._system(request)  # with its cache breakpoint, as sent interactively
        if isinstance(system, (str, list)):
            params["system"] = system
        if request.json_schema is not None:
            tools, choice = adapter._tooling(request)
            params["tools"], params["tool_choice"] = tools, choice
        return params

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], tag: str) -> str:
        requests = [{"custom_id": key, "params": self.params(r)} for key, r in items]
        async with self._translated():
            batch = await self.adapter._get_client().messages.batches.create(
                requests=requests  # type: ignore[arg-type, unused-ignore]
            )
        batch_id: str = batch.id
        return batch_id

    async def find(self, tag: str, since: float, count: int) -> list[str]:
        found: list[str] = []
        async with self._translated():
            # Newest first: the walk stops at the first batch older than the intent.
            async for batch in self.adapter._get_client().messages.batches.list(limit=100):
                if batch.created_at.timestamp() < since:
                    break
                c = batch.request_counts
                if c.processing + c.succeeded + c.errored + c.canceled + c.expired == count:
                    found.append(batch.id)
        return found

    async def status(self, batch_id: str) -> BatchStatus:
        async with self._translated():
            batch = await self.adapter._get_client().messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        failed = counts.errored + counts.canceled + counts.expired
        return BatchStatus(
            status=batch.processing_status,
            ended=batch.processing_status == "ended",
            succeeded=counts.succeeded,
            failed=failed,
            total=counts.processing + counts.succeeded + failed,
        )

    async def results(self, batch_id: str) -> BatchResults:
        results = BatchResults(batch_id)
        individual = self.adapter._sdk.types.messages.MessageBatchIndividualResponse
        async with self._translated():
            # The raw lines, not the SDK's decoder: it stops at the first line it cannot read.
            client = self.adapter._get_client()
            async with client.messages.batches.with_streaming_response.results(batch_id) as got:
                text = await got.text()
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            line = read_result_line(raw)
            if isinstance(line, str):
                results.unreadable(number, line)
                continue
            try:
                parsed = individual.model_validate(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "line"
                results.unreadable(number, f"'{field}': {first['msg']}", line["custom_id"])
                continue
            result = parsed.result
            if result.type in ("canceled", "expired"):
                unanswered = Unanswered(f"the batch ended unanswered ({result.type})")
                results.add(parsed.custom_id, unanswered, False)
            else:
                results.add(parsed.custom_id, result, result.type == "succeeded")
        return results

    def succeeded(self, outcome: Outcome) -> bool:
        return getattr(outcome, "type", None) == "succeeded"

    def response(self, request: ChatRequest, outcome: Outcome) -> ChatResponse:
        if outcome.type == "succeeded":
            return self.adapter._response(request, outcome.message, None)
        error = outcome.error.error
        raise status_error(
            provider="Anthropic",
            status=_ERROR_STATUS.get(error.type, 500),
            message=error.message,
            headers={},
            key_env=self.adapter.key_env,
        )

    @asynccontextmanager
    async def _translated(self) -> AsyncIterator[None]:
        """SDK failures as VERA's errors, as the interactive calls translate them."""
        with self.adapter.sdk_errors():
            yield
