"""The turns of one conversation judged together by an LLM judge (`analyse_turn`, one draw).

In batched mode they are extracted one call a turn and verified together, one call per group of
turns, each turn against its own contexts only (`vera.judges._turns`); a turn the joint reply
does not answer properly is verified again in a call of its own. In single_call mode a group's
claims and verdicts come from one call, or as few as fit (`vera.judges._turn_answers`); a turn
the reply does not answer properly is asked for again once, then is an error. In the other
modes, and with several draws, each turn is judged as any sample is.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence

from vera._types import Claim, ClaimVerdict
from vera._types._errors import JudgeResponseError
from vera.judges._asking import Asker, JudgeSettings, evidence, reply_validator
from vera.judges._evidence import checked_verdict
from vera.judges._mode_single_call import judged_claims
from vera.judges._modes import ModeStrategy
from vera.judges._replies import VERIFICATION_SCHEMA, Verification
from vera.judges._sentence_ids import SentenceIds
from vera.judges._turn_answers import (
    TURNS_SCHEMA,
    Sources,
    TurnAnswer,
    TurnsReply,
    pack_turns,
    render_turns,
    turn_problems,
)
from vera.judges._turns import (
    TurnBatcher,
    TurnGroup,
    TurnItem,
    bounded_batches,
    context_ranges,
    render_turn_claims,
)
from vera.providers._base import Message, TruncatedOutputError

# Loaded in every mode, used in batched mode for the turns of one conversation together.
TURNS_PROMPT = "verify_turns"
# Used in single_call mode for the turns of one conversation together.
ANSWERS_PROMPT = "single_call_turns"


class TurnJudge(Asker):
    """An LLM judge's conversation turns, judged the way its mode's `strategy` says
    (`ModeStrategy.joint_turns`); `turns_asked` and `answers_asked` say whether the joint
    prompts were used."""

    def __init__(self, judge: JudgeSettings, strategy: ModeStrategy) -> None:
        super().__init__(judge)
        self.strategy = strategy
        self.turns_asked = False
        self.answers_asked = False
        self._batcher = TurnBatcher(self._verify_turns)
        self._answers = TurnBatcher(self._answer_turns)

    @property
    def batches_turns(self) -> bool:
        """Whether the turns of one conversation are judged together: verified together in
        batched mode, claims and verdicts in one call in single_call mode (one draw)."""
        return self.strategy.joint_turns is not None and self.samples == 1

    async def analyse_turn(
        self, response: str, contexts: Sequence[str], *, query: str | None, group: TurnGroup
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """One conversation turn's claims and verdicts, like `analyse`; with one draw, judged
        with the other turns of its `group`: in batched mode its claims are verified in one call
        with theirs (`vera.judges._turns`), in single_call mode its claims and verdicts come
        from one call with theirs (`vera.judges._turn_answers`), each turn against its own
        contexts only."""
        if not self.batches_turns:
            return await self.strategy.analyse(response, contexts, query=query)
        if self.strategy.joint_turns == "answer":
            return await self._answer_turn(response, contexts, query or "", group)
        try:
            claims = (
                await self.strategy.extract_claims(response, query=query)
                if response.strip()
                else []
            )
        except BaseException:
            self._batcher.withdraw(group)
            raise
        verdicts = await self._batcher.verdicts(group, claims, contexts)
        return (claims, verdicts) if claims else ([], [])

    async def _verify_turns(self, items: list[TurnItem]) -> None:
        """Verify the turns of one group: runs of turns within `max_claims_per_call` claims in
        one call each; a turn alone, or one the joint reply failed, in a call of its own."""
        asked = [item for item in items if item.claims]
        for item in items:
            if not item.claims:
                item.verdicts.set_result([])
        await asyncio.gather(
            *(
                self._verify_turn_batch(batch)
                for batch in bounded_batches(asked, self.max_claims_per_call)
            )
        )

    async def _verify_turn_batch(self, batch: list[TurnItem]) -> None:
        failed = batch if len(batch) == 1 else await self._joint_verdicts(batch)
        for item in failed:
            try:
                item.verdicts.set_result(
                    await self.strategy.verify_claims(item.claims, item.contexts)
                )
            except Exception as exc:
                item.verdicts.set_exception(exc)

    async def _joint_verdicts(self, batch: list[TurnItem]) -> list[TurnItem]:
        """Verify `batch` in one call and settle each turn the reply fully answers; the turns
        it does not (an invalid reply, a missing verdict, a citation of another turn's context)
        are returned, to be verified on their own: a joint reply never passes them silently."""
        self.turns_asked = True
        prompt = self.prompts[TURNS_PROMPT]
        flat = [text for item in batch for text in item.contexts]
        numbered, ranges = SentenceIds.of(flat), context_ranges(batch)
        messages = prompt.render(
            contexts=numbered.render(), claims=render_turn_claims(batch, ranges)
        )
        checked = reply_validator(Verification, contexts=len(flat), sentences=numbered)
        try:
            reply = await self._ask(messages, prompt, VERIFICATION_SCHEMA, "verdicts", checked)
        except (JudgeResponseError, TruncatedOutputError):
            return batch
        owners = [(t, c) for t, item in enumerate(batch) for c in item.claims]
        found: dict[str, ClaimVerdict] = {}
        wrong: set[int] = set()
        for raw in reply.verdicts:
            if not 1 <= raw.claim <= len(owners):
                continue
            turn, claim = owners[raw.claim - 1]
            context, quote, note = evidence(raw, numbered)
            if context is not None and context not in ranges[turn]:
                wrong.add(turn)
                continue
            local = None if context is None else context - ranges[turn].start + 1
            found.setdefault(
                claim.id + f"@{turn}",
                checked_verdict(
                    claim.id,
                    raw.verdict,
                    context=local,
                    quote=quote,
                    reason=f"{note} {raw.reason}".strip(),
                    contexts=batch[turn].contexts,
                    claim=claim.text,
                ),
            )
        failed = []
        for turn, item in enumerate(batch):
            keys = [c.id + f"@{turn}" for c in item.claims]
            if turn in wrong or any(k not in found for k in keys):
                failed.append(item)
            else:
                item.verdicts.set_result([found[k] for k in keys])
        return failed

    async def _answer_turn(
        self, response: str, contexts: Sequence[str], query: str, group: TurnGroup
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """single_call mode: one turn's claims and verdicts, from one call with the other
        turns of its `group` (`vera.judges._turn_answers`)."""
        if not response.strip():
            self._answers.withdraw(group)
            return [], []
        future: asyncio.Future[tuple[list[Claim], list[ClaimVerdict]]]
        future = asyncio.get_running_loop().create_future()
        item = TurnAnswer(response, query, list(contexts), future)
        await self._answers.join(group, item)
        return await item.result

    async def _answer_turns(self, items: list[TurnAnswer]) -> None:
        """The turns of one group in as few calls as fit (`pack_turns`)."""
        calls = pack_turns(items, max_claims=self.max_claims_per_call, max_tokens=self.max_tokens)
        await asyncio.gather(*(self._answer_call(batch) for batch in calls))

    async def _answer_call(self, batch: list[TurnAnswer]) -> None:
        """One call for `batch`; a turn alone is judged as any sample is (the single_call
        prompt), and a reply cut off at max_tokens is asked again in two halves."""
        if not batch:
            return
        if len(batch) == 1:
            await self._answer_alone(batch[0])
            return
        try:
            await self._ask_turns(batch)
        except TruncatedOutputError:  # cut off on a re-ask, the turns settled before stay so
            left = [item for item in batch if not item.result.done()]
            half = len(left) // 2
            await asyncio.gather(self._answer_call(left[:half]), self._answer_call(left[half:]))
        except Exception as exc:  # an invalid reply, twice: every turn still open is an error
            for item in batch:
                if not item.result.done():
                    item.result.set_exception(exc)

    async def _answer_alone(self, item: TurnAnswer) -> None:
        try:
            judged = await self.strategy.analyse(
                item.response, item.contexts, query=item.query or None
            )
        except Exception as exc:
            item.result.set_exception(exc)
        else:
            item.result.set_result(judged)

    async def _ask_turns(self, batch: list[TurnAnswer]) -> None:
        """Ask for the claims and verdicts of `batch` in one call. The turns the reply does not
        answer properly (`turn_problems`) are asked for again once, with what was wrong; a
        turn still wrong then is an error. A reply that answers a turn not asked leaves every
        turn open, as its numbering cannot be trusted."""
        self.answers_asked = True
        prompt = self.prompts[ANSWERS_PROMPT]
        sources = Sources.of(batch)
        numbered = SentenceIds.of(sources.texts)
        messages = prompt.render(
            contexts=numbered.render(), turns=render_turns(batch, sources, prompt.tags)
        )
        checked = reply_validator(TurnsReply, contexts=len(sources.texts), sentences=numbered)
        reply = await self._ask(messages, prompt, TURNS_SCHEMA, "turns", checked)
        problems = turn_problems(reply, batch, sources, numbered)
        trusted = None not in problems
        open_turns = [t for t in range(len(batch)) if t in problems or not trusted]
        self._settle_turns(reply, batch, sources, numbered, _others(batch, open_turns))
        if not problems:
            return
        reask = (
            *messages,
            Message(role="assistant", content=reply.model_dump_json()),
            Message(
                role="user",
                content=f"That reply was not valid: {'; '.join(problems.values())}. Reply "
                "again with the JSON object for every turn, in exactly the format asked for.",
            ),
        )
        again = await self._ask(reask, prompt, TURNS_SCHEMA, "turns", checked)
        still = turn_problems(again, batch, sources, numbered)
        self._settle_turns(
            again, batch, sources, numbered, [t for t in open_turns if t not in still]
        )
        for turn in open_turns:
            if turn in still:
                batch[turn].result.set_exception(
                    JudgeResponseError(
                        f"the judge's reply for this turn was invalid twice: {still[turn]}"
                    )
                )

    def _settle_turns(
        self,
        reply: TurnsReply,
        batch: list[TurnAnswer],
        sources: Sources,
        numbered: SentenceIds,
        turns: Sequence[int],
    ) -> None:
        """Give each of `turns` (0-based) its claims and verdicts from `reply`, each verdict
        citing the context of the turn's own that the shared number names."""
        entries = {entry.turn - 1: entry for entry in reply.turns}
        for turn in turns:
            item = batch[turn]
            item.result.set_result(
                judged_claims(
                    entries[turn],
                    item.response,
                    numbered,
                    item.contexts,
                    local=functools.partial(sources.local, turn),
                )
            )


def _others(batch: Sequence[object], turns: Sequence[int]) -> list[int]:
    """The positions in `batch` not in `turns`."""
    return [t for t in range(len(batch)) if t not in turns]
