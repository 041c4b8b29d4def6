"""Rubric items asked in the faithfulness verification call, so the contexts are paid once.

In `batched` mode with one draw, a sample's verification is one call that shows the contexts
and the claims. A rubric on the same sample reads the same contexts (and, in scope "claim",
the same claims); asked alone (`vera.judges._rubric.answer_checklist`) it sends them again.
Here the rubric's items ride on the verification call: the verification prompt
(`verify_claims`, or `verify_claims_quoted` for long contexts) with the `rubric_rider` prompt
after its claims, which adds the question, the items and the answer, and one reply that holds
the verdicts on the claims in their own format and the rubric's verdicts under "rubric".
Several rubrics ride together, their items numbered one after another, each marked "(each
claim)" (scope "claim": a verdict per claim) or "(whole answer)" (scope "answer": one verdict,
claim 0).

Each part of the reply is read by the rules it has alone: the verdicts on the claims by the
verification's (claim numbers, cited sentences, quotes looked up in the contexts; a claim
left out is asked again alone), each rubric's by the checklist's (every claim-item pair, or
every item, once, no other). A part that cannot be read is asked again alone, as it would
have been asked without the rider, and the other parts are kept; a reply that is no JSON at
all even when asked again, or is cut off, has both asked alone.

A rubric rides where it reads only what the verification shows with the question and the
answer: the sample's own contexts (not empty), no expected answer (`reference`), and claims
that fit one verification call (`max_claims_per_call`, at least one). Everything else, the
other modes and several draws included, is asked as without batching.
`LLMJudge(batch_rubrics=False)` (`judge_batch_rubrics = false`) turns it off.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

from pydantic import TypeAdapter, ValidationError

from vera._types import Claim, ClaimVerdict
from vera._types._errors import JudgeResponseError
from vera._types._rubric import ItemVerdict, RubricRequest
from vera.judges._asking import Asker, JudgeSettings, numbered_texts, reply_validator
from vera.judges._mode_batched import BatchedMode, collect_verdicts
from vera.judges._prompts import Prompt
from vera.judges._replies import Verification
from vera.judges._rubric import (
    EACH_CLAIM,
    VERDICTS_SCHEMA,
    WHOLE_ANSWER,
    RubricReply,
    RubricRow,
    answer_checklist,
    checklist_pairs,
    item_verdicts,
)
from vera.judges._sentence_ids import SentenceIds
from vera.providers._base import TruncatedOutputError

RIDER_PROMPT = "rubric_rider"
JOINT_NAME = "verdicts_rubric"
"""The schema name of a verification call with rubric items, by which a dry run's recording
model answers it."""
RUBRIC_KEY = "rubric"

_ROWS = TypeAdapter(list[RubricRow])


class RiderSettings(JudgeSettings, Protocol):
    """What the rider reads of the judge beyond `JudgeSettings`."""

    @property
    def batch_rubrics(self) -> bool: ...


class _Joint(NamedTuple):
    """What a joint call gave: the verdicts on the claims (None: that part was unreadable),
    and each riding rubric's reply (None: that rubric's part was unreadable)."""

    verdicts: dict[str, ClaimVerdict] | None
    rubrics: list[RubricReply | None]


@dataclass(frozen=True)
class _Asked:
    """The verification shown in one call: the prompt, its schema and numbered sentences."""

    prompt: Prompt
    schema: dict[str, Any]
    numbered: SentenceIds | None
    shown: Sequence[str]


class RubricRider(Asker):
    """The LLM judge's part that asks rubric items with the verification (module docstring);
    `rider_asked` says whether it did."""

    def __init__(self, judge: RiderSettings, strategy: BatchedMode) -> None:
        super().__init__(judge)
        self.settings = judge
        self.strategy = strategy
        self.rider_asked = False

    @property
    def rides(self) -> bool:
        """Whether rubric items ride on verification calls: batched mode, one draw, on, and
        the compact prompts (a small model asked in the reasoned ones gets one question a
        call; docs/local-judges.md)."""
        settings = self.settings
        compact = settings.replies == "compact"
        return (
            settings.batch_rubrics
            and compact
            and self.strategy.mode == "batched"
            and self.samples == 1
        )

    async def analyse(
        self,
        response: str,
        contexts: Sequence[str],
        *,
        query: str | None,
        requests: Sequence[RubricRequest],
    ) -> tuple[list[Claim], list[ClaimVerdict], list[list[ItemVerdict]]]:
        """Claims of `response`, their verdicts against `contexts`, and the verdicts on each
        of `requests` (a claim-scope request's claims are the claims found here)."""
        hopeful = self.rides and any(_may_ride(r, contexts) for r in requests)
        if not hopeful:
            claims, verdicts = await self.strategy.analyse(response, contexts, query=query)
            return claims, verdicts, await self._alone(requests, claims)
        claims = await self.strategy.extract_claims(response, query=query)
        riding = [
            n
            for n, r in enumerate(requests)
            if _may_ride(r, contexts) and 0 < len(claims) <= self.max_claims_per_call
        ]
        if not riding:
            verdicts = await self.strategy.verify_claims(claims, contexts) if claims else []
            return claims, verdicts, await self._alone(requests, claims)
        riders = [_with_claims(requests[n], claims) for n in riding]
        joint = await self._ask_joint(response, query or "", claims, contexts, riders)
        replies = dict(zip(riding, joint.rubrics, strict=True))
        verdicts, answers = await asyncio.gather(
            self.strategy._verify_draw(claims, contexts, 0, answered=joint.verdicts),
            asyncio.gather(
                *(
                    self._answer(_with_claims(request, claims), replies.get(n))
                    for n, request in enumerate(requests)
                )
            ),
        )
        return claims, verdicts, list(answers)

    async def _alone(
        self, requests: Sequence[RubricRequest], claims: Sequence[Claim]
    ) -> list[list[ItemVerdict]]:
        return list(
            await asyncio.gather(*(self._answer(_with_claims(r, claims), None) for r in requests))
        )

    async def _answer(self, request: RubricRequest, reply: RubricReply | None) -> list[ItemVerdict]:
        """The verdicts of `reply` (a rider's part of a joint reply), else asked alone; a
        claim-scope rubric with no claims has nothing to ask."""
        if reply is not None:
            return item_verdicts(request, reply.verdicts)
        if request.checklist.scope == "claim" and not request.claims:
            return []
        return await answer_checklist(self._ask, self.prompts, request)

    async def _ask_joint(
        self,
        response: str,
        query: str,
        claims: Sequence[Claim],
        contexts: Sequence[str],
        riders: Sequence[RubricRequest],
    ) -> _Joint:
        """One call for the verification of `claims` and the items of `riders`."""
        shown = await self.strategy._shown(contexts)
        asked = _Asked(*self.strategy._verification_prompt(shown, len(claims)), shown=shown)
        prompt = _joint_prompt(asked.prompt, self.prompts[RIDER_PROMPT])
        # Each item says what it is asked of: every claim, or the whole answer (claim 0).
        items = [
            f"{EACH_CLAIM if rider.checklist.scope == 'claim' else WHOLE_ANSWER} {item.text}"
            for rider in riders
            for item in rider.checklist.items
        ]
        messages = prompt.render(
            contexts=asked.numbered.render()
            if asked.numbered is not None
            else numbered_texts(shown),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(claims, start=1)),
            items="\n".join(f"{n}. {text}" for n, text in enumerate(items, 1)),
            answer=response,
            query=query or "(none)",
        )
        self.rider_asked = True
        texts = [c.text for c in claims]
        try:
            reply: tuple[Verification | None, list[RubricReply | None]] = await self._ask(
                messages,
                prompt,
                _joint_schema(asked.schema),
                JOINT_NAME,
                lambda data: _read_joint(data, asked, texts, riders),
            )
        except (TruncatedOutputError, JudgeResponseError):
            return _Joint(None, [None] * len(riders))
        verification, rubrics = reply
        if verification is None:
            return _Joint(None, rubrics)
        found: dict[str, ClaimVerdict] = {}
        collect_verdicts(verification, claims, asked.numbered, contexts, found)
        return _Joint(found, rubrics)


def _may_ride(request: RubricRequest, contexts: Sequence[str]) -> bool:
    """Whether `request` reads only what a verification of the sample shows."""
    return (
        bool(request.checklist.items)
        and bool(contexts)
        and request.contexts == tuple(contexts)
        and request.reference is None
    )


def _with_claims(request: RubricRequest, claims: Sequence[Claim]) -> RubricRequest:
    if request.checklist.scope != "claim":
        return request
    return request.model_copy(update={"claims": tuple((c.id, c.text) for c in claims)})


def _joint_prompt(verification: Prompt, rider: Prompt) -> Prompt:
    """The verification prompt with the rider after it: one version naming both, so the
    response cache and the report tell this call from either alone."""
    return replace(
        verification,
        name=f"{verification.name}+{rider.name}",
        version=f"{verification.version}+{rider.version}",
        user=f"{verification.user}\n\n{rider.user}",
    )


def _joint_schema(verification: dict[str, Any]) -> dict[str, Any]:
    rows = VERDICTS_SCHEMA["properties"]["verdicts"]
    return {
        "type": "object",
        "properties": {**verification["properties"], RUBRIC_KEY: rows},
        "required": [*verification["required"], RUBRIC_KEY],
    }


def _read_joint(
    data: Any, asked: _Asked, claims: list[str], riders: Sequence[RubricRequest]
) -> tuple[Verification | None, list[RubricReply | None]]:
    """Each part of a joint reply read alone; None for a part that cannot be read. Never
    raises: an unreadable part is asked again alone, not the whole call again."""
    rows = data.get(RUBRIC_KEY) if isinstance(data, dict) else None
    # A reply of the rubric's rows alone has them read under the verdicts' key too (the
    # judge reads a reply's one list as the list asked for): they are no verdicts on claims.
    rest = (
        {k: v for k, v in data.items() if k != RUBRIC_KEY and (rows is None or v is not rows)}
        if isinstance(data, dict)
        else {}
    )
    validate = reply_validator(
        Verification, contexts=len(asked.shown), sentences=asked.numbered, claims=claims
    )
    try:
        verification: Verification | None = validate(rest)
    except ValueError:
        verification = None
    return verification, _rider_replies(rows, riders)


def _rider_replies(rows: Any, riders: Sequence[RubricRequest]) -> list[RubricReply | None]:
    """Each rider's rows (its items renumbered from 1) validated as its reply alone would be:
    every claim-item pair (scope "answer": every item) once, no other. A row for an item of
    no rider, or rows that are not verdicts, leave every rider unanswered."""
    try:
        read = _ROWS.validate_python(rows)
    except ValidationError:
        return [None] * len(riders)
    sizes = [len(rider.checklist.items) for rider in riders]
    if any(not 1 <= row.item <= sum(sizes) for row in read):
        return [None] * len(riders)
    replies: list[RubricReply | None] = []
    offset = 0
    for rider, size in zip(riders, sizes, strict=True):
        mine = [
            {**row.model_dump(), "item": row.item - offset}
            for row in read
            if offset < row.item <= offset + size
        ]
        offset += size
        try:
            pairs = checklist_pairs(rider)
            replies.append(RubricReply.model_validate({"verdicts": mine}, context={"pairs": pairs}))
        except ValidationError:
            replies.append(None)
    return replies
