"""The `truths` mode (seed 004): claims, then the facts each context states (once per context
set, then reused), then verdicts of the claims against those facts: 3 calls per sample, 2 on
a repeated context set. Quotes are still checked against the contexts themselves."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import ClassVar

from vera.judges._asking import JudgeSettings, numbered_texts, reply_validator
from vera.judges._mode_batched import BatchedMode
from vera.judges._modes import JointTurns, Mode
from vera.judges._replies import TRUTHS_SCHEMA, Truths

_NO_TRUTHS = "(this context states no facts)"


class TruthsMode(BatchedMode):
    """The batched mode's two steps, the verification shown each context's facts; the facts
    of the last `truths_cache_size` context sets are kept in memory."""

    mode: ClassVar[Mode] = "truths"
    prompt_names: ClassVar[tuple[str, ...]] = (
        "extract_claims",
        "extract_truths",
        "verify_claims",
        "rate_relevance",
    )
    joint_turns: ClassVar[JointTurns | None] = None

    def __init__(self, judge: JudgeSettings) -> None:
        super().__init__(judge)
        self._truths: OrderedDict[str, list[str]] = OrderedDict()
        self._truths_pending: dict[str, asyncio.Task[list[str]]] = {}
        self._truths_cache_size = judge.truths_cache_size

    async def _shown(self, contexts: Sequence[str]) -> list[str]:
        """What the verification shows of `contexts`: the facts each states."""
        return await self._truths_of(contexts)

    async def _truths_of(self, contexts: Sequence[str]) -> list[str]:
        """The facts each context states, one text per context; asked once per context set.

        Concurrent samples with the same contexts share one call; a failed call is not kept, so
        the next sample asks again.
        """
        key = hashlib.sha256("\x00".join(contexts).encode("utf-8")).hexdigest()
        if key in self._truths:
            self._truths.move_to_end(key)
            return self._truths[key]
        task = self._truths_pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._ask_truths(contexts))
            self._truths_pending[key] = task
            task.add_done_callback(lambda _: self._truths_pending.pop(key, None))
        truths = await asyncio.shield(task)
        self._truths[key] = truths
        while len(self._truths) > self._truths_cache_size:
            self._truths.popitem(last=False)
        return truths

    async def _ask_truths(self, contexts: Sequence[str]) -> list[str]:
        prompt = self.prompts["extract_truths"]
        reply = await self._ask(
            prompt.render(contexts=numbered_texts(contexts)),
            prompt,
            TRUTHS_SCHEMA,
            "truths",
            reply_validator(Truths, contexts=len(contexts)),
        )
        per_context: list[list[str]] = [[] for _ in contexts]
        for truth in reply.truths:
            if 1 <= truth.context <= len(contexts) and truth.text.strip():
                per_context[truth.context - 1].append(truth.text.strip())
        return [" ".join(found) if found else _NO_TRUTHS for found in per_context]
