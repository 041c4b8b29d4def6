"""`FakeChatModel`: a scripted chat model for tests. It calls no provider.

Replies (or exceptions) are queued with `enqueue` and consumed in order; once the queue is
empty, `respond(request)` answers, if given. Every request is recorded, so a test can assert
exactly what was sent and how often.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

from vera.providers._base import ChatRequest, ChatResponse, Usage


class FakeChatModel:
    """A fake `ChatModel`: returns queued replies, raises queued exceptions."""

    def __init__(
        self,
        model: str = "fake-model",
        *,
        provider: str = "fake",
        respond: Callable[[ChatRequest], dict[str, Any]] | None = None,
    ) -> None:
        self._provider = provider
        self._respond = respond
        self._model = model
        self._queue: deque[ChatResponse | BaseException] = deque()
        self.requests: list[ChatRequest] = []

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return self._model

    def enqueue(
        self,
        *replies: str | dict[str, Any] | ChatResponse | BaseException,
        prompt_tokens: int = 100,
        completion_tokens: int = 20,
    ) -> None:
        """Queue replies: text, a JSON object (sent as `data` and text), a response, or an
        exception to raise."""
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        for reply in replies:
            if isinstance(reply, str):
                self._queue.append(ChatResponse(text=reply, usage=usage, model=self._model))
            elif isinstance(reply, dict):
                self._queue.append(
                    ChatResponse(text=json.dumps(reply), data=reply, usage=usage, model=self._model)
                )
            else:
                self._queue.append(reply)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if not self._queue and self._respond is not None:
            self.enqueue(self._respond(request))
        if not self._queue:
            raise AssertionError("FakeChatModel has no reply queued for this request")
        reply = self._queue.popleft()
        if isinstance(reply, BaseException):
            raise reply
        return reply
