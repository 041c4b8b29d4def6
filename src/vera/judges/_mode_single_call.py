"""The `single_call` mode (seed 003): claims and verdicts in one call, 1 call per sample.
Extra draws (samples > 1), and a reply cut off at max_tokens, fall back on the batched mode's
two steps; the turns of one conversation are answered together (`vera.judges._turn_judge`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from vera._types import Claim, ClaimVerdict
from vera.judges._asking import evidence, located_claim, reply_validator
from vera.judges._evidence import checked_verdict
from vera.judges._mode_batched import BatchedMode
from vera.judges._modes import JointTurns, Mode
from vera.judges._replies import (
    COMPACT_SINGLE_CALL_SCHEMA,
    SINGLE_CALL_SCHEMA,
    SingleCall,
    cleaned_claim,
)
from vera.judges._sentence_ids import AnswerSentences, SentenceIds
from vera.providers._base import TruncatedOutputError


class SingleCallMode(BatchedMode):
    """Claims and a first draw of verdicts from one call."""

    mode: ClassVar[Mode] = "single_call"
    # Extra draws (samples > 1) and a cut-off reply fall back on the two-step prompts.
    prompt_names: ClassVar[tuple[str, ...]] = (
        "single_call",
        "single_call_turns",
        "extract_claims",
        "verify_claims",
        "rate_relevance",
    )
    joint_turns: ClassVar[JointTurns | None] = "answer"

    async def _first_draw(
        self, response: str, contexts: Sequence[str], query: str | None
    ) -> tuple[list[Claim], list[ClaimVerdict]] | None:
        """The claims and a first draw of verdicts from one call; None where there are no
        contexts, or the reply was cut off."""
        if not contexts:
            return None
        return await self._single_call(response, contexts, query or "")

    async def _single_call(
        self, response: str, contexts: Sequence[str], query: str
    ) -> tuple[list[Claim], list[ClaimVerdict]] | None:
        """Claims and verdicts from one call; None when the reply was cut off."""
        prompt = self.prompts["single_call"]
        compact = prompt.reply_format == "compact"
        numbered = SentenceIds.of(contexts, flat=compact)
        answer = AnswerSentences.of(response)
        messages = prompt.render(
            contexts=numbered.render(),
            query=query or "(none)",
            response=response,
            sentences=answer.render(),
        )
        try:
            reply = await self._ask_for_claims(
                messages,
                prompt,
                COMPACT_SINGLE_CALL_SCHEMA if compact else SINGLE_CALL_SCHEMA,
                reply_validator(
                    SingleCall,
                    response=response,
                    contexts=len(contexts),
                    sentences=numbered,
                    answer=answer,
                ),
                response,
            )
        except TruncatedOutputError:
            return None
        return judged_claims(reply, response, numbered, contexts)


def judged_claims(
    reply: SingleCall,
    response: str,
    numbered: SentenceIds,
    contexts: Sequence[str],
    *,
    local: Callable[[int], int | None] = lambda context: context,
) -> tuple[list[Claim], list[ClaimVerdict]]:
    """The claims of a single-call reply and their checked verdicts; `local` turns the
    number of a context the prompt showed into its number among `contexts` (None: not one
    of them)."""
    # A claim and its verdict go together: what is no claim ("Sure!") drops both.
    judged = sorted(
        (c.model_copy(update={"text": cleaned_claim(c.text)}) for c in reply.claims),
        key=lambda c: c.number,
    )
    claims: list[Claim] = []
    verdicts: list[ClaimVerdict] = []
    for n, item in enumerate((c for c in judged if c.text), start=1):
        claims.append(located_claim(f"c{n}", item.text, response))
        context, quote, note = evidence(item, numbered)
        verdicts.append(
            checked_verdict(
                f"c{n}",
                item.verdict,
                context=None if context is None else local(context),
                quote=quote,
                reason=f"{note} {item.reason}".strip(),
                contexts=contexts,
                claim=item.text,
            )
        )
    return claims, verdicts
