"""`LLMJudge`: claims and verdicts from a chat model, in one of four modes.

- `batched` (default): one call extracts the numbered claims, one call verifies all of them
  against the numbered contexts: 2 calls per sample.
- `per_claim` (seed 000): one extraction call, then one verification call per claim: 1 + N.
- `truths` (seed 004): claims, then the facts each context states (once per context set, then
  reused), then verdicts of the claims against those facts: 3 calls, 2 on a repeated set.
- `single_call` (seed 003): claims and verdicts in one call: 1 call per sample.

Every mode produces the same `ClaimVerdict`s; the model only classifies, every score is still
VERA's arithmetic. What the model returns is checked, not trusted:

- a reply that fails validation is re-asked once with what was wrong, in the prompt's words,
  at a temperature of at least 0.3 (at 0 a small model repeats itself byte for byte);
- verdicts must come back for exactly the claim numbers asked; missing ones are re-asked alone,
  and a claim still without one is NO_EVIDENCE, flagged, where the others were answered;
- each quote is looked up in the context it cites, and an invented quote, or a supported or
  contradicted verdict with none, is flagged, and a supporting one is then NO_EVIDENCE (see
  `vera.judges._evidence`); a citation of a sentence or context that does not exist (context
  99 of 3) costs the citation, not the sample;
- each claim is traced to the response: one found nowhere in it that shares no content word
  with it is flagged (`Claim.traceable`), and a claim list made mostly of such claims is an
  invalid reply;
- an empty claim list for a response in which VERA's own splitter finds checkable sentences is
  asked for again once, then an error: it would otherwise score a vacuous faithfulness of 1.0;
- a reply cut off at max_tokens makes the judge split the work into smaller calls, and a reply
  that ends mid-JSON whatever its finish reason is reported as cut off, not as a missing field.

The sample's texts reach the model between tags that they cannot close (see
`vera.judges._prompts`), and every prompt says that text inside the tags is data, never
instructions.

With `samples=k`, verification is drawn k times and each claim gets the majority verdict and
the share of draws that agreed with it.

The turns of one conversation (`analyse_turn`, one draw) are judged together. In batched mode
they are extracted one call a turn and verified together, one call per group of turns, each
turn against its own contexts only (`vera.judges._turns`); a turn the joint reply does not
answer properly is verified again in a call of its own. In single_call mode a group's claims
and verdicts come from one call, or as few as fit (`vera.judges._turn_answers`); a turn the
reply does not answer properly is asked for again once, then is an error.

RAGChecker's claim-by-chunk matrix (`verify_matrix`, asked only by the diagnostic metrics) is one
call per draw in every mode: each claim against each context alone, all claims together.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from vera._text._segment import split_units
from vera._types import Claim, ClaimVerdict, RelevanceVerdict, Verdict
from vera._types._errors import JudgeResponseError
from vera._types._rubric import Checklist, ItemVerdict, RubricRequest, RubricScope
from vera.judges._base import BaseJudge, CallEstimate, JudgeDescription, JudgeWork
from vera.judges._calls import count_calls
from vera.judges._evidence import checked_verdict, shares_a_word
from vera.judges._offline._claims import checkable_sentences
from vera.judges._prompts import Prompt, load_prompt
from vera.judges._replies import (
    COMPACT_SINGLE_CALL_SCHEMA,
    COMPACT_VERIFICATION_SCHEMA,
    EXTRACTION_SCHEMA,
    MATRIX_SCHEMA,
    QUOTED_VERIFICATION_SCHEMA,
    RELEVANCE_SCHEMA,
    SINGLE_CALL_SCHEMA,
    TRUTHS_SCHEMA,
    VERIFICATION_SCHEMA,
    Extraction,
    Matrix,
    MatrixCell,
    Ratings,
    SingleCall,
    Truths,
    VerdictFields,
    Verification,
    claim_texts,
    cleaned_claim,
)
from vera.judges._rubric import (
    RUBRIC_PROMPTS,
    ChecklistMemo,
    answer_checklist,
    write_checklist,
)
from vera.judges._sentence_ids import AnswerSentences, SentenceIds
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
from vera.judges._voting import majority_verdicts
from vera.providers._base import (
    ChatModel,
    ChatRequest,
    ChatResponse,
    Message,
    TruncatedOutputError,
)
from vera.providers._jsonparse import IncompleteJSONError, MalformedJSONError, parse_json_object
from vera.providers._managed import ManagedChatModel

T = TypeVar("T")
ClaimReply = TypeVar("ClaimReply", Extraction, SingleCall)
Reply = TypeVar("Reply", bound=BaseModel)

Mode = Literal["batched", "per_claim", "truths", "single_call"]
MODES: tuple[str, ...] = get_args(Mode)

_PROMPTS: dict[str, tuple[str, ...]] = {
    "batched": ("extract_claims", "verify_claims", "rate_relevance"),
    "per_claim": ("extract_claims", "verify_claims", "rate_relevance"),
    "truths": ("extract_claims", "extract_truths", "verify_claims", "rate_relevance"),
    # Extra draws (samples > 1) and a cut-off reply fall back on the two-step prompts.
    "single_call": (
        "single_call",
        "single_call_turns",
        "extract_claims",
        "verify_claims",
        "rate_relevance",
    ),
}
# Loaded in every mode, but only the diagnostic metrics ask for it (see `prompt_versions`).
_MATRIX = "verify_matrix"
# Loaded in every mode, used instead of verify_claims where quotes cost less than sentence ids.
_QUOTED = "verify_claims_quoted"
# Loaded in every mode, used in batched mode for the turns of one conversation together.
_TURNS = "verify_turns"
# Used in single_call mode for the turns of one conversation together.
_ANSWERS = "single_call_turns"
_NO_TRUTHS = "(this context states no facts)"
_REASK_TEMPERATURE = 0.3
_DECODER = json.JSONDecoder()
_RAISE_MAX_TOKENS = "raise --max-tokens (judge_max_tokens in vera.toml)"


class LLMJudge(BaseJudge):
    """A judge backed by any `ChatModel` (wrap it in `ManagedChatModel` for retries and cache).

    Args:
        model: the chat model that answers.
        mode: "batched", "per_claim", "truths" or "single_call" (see the module docstring).
        samples: verification draws per claim; above 1, the majority verdict is kept and the
            agreement rate reported. Use a temperature above 0 with it.
        prompts_dir: a folder with your own prompt files (same names as the bundled ones).
        max_claims_per_call: claims verified in one call; more are split across calls.
        temperature: sampling temperature (0 for the most repeatable verdicts).
        max_tokens: the reply budget of one call.
        truths_cache_size: context sets whose truths are kept in memory (truths mode).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        mode: Mode = "batched",
        samples: int = 1,
        prompts_dir: Path | None = None,
        max_claims_per_call: int = 25,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        truths_cache_size: int = 1024,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if samples < 1:
            raise ValueError("samples must be at least 1")
        if max_claims_per_call < 1:
            raise ValueError("max_claims_per_call must be at least 1")
        self.model = model
        self.mode = mode
        self.samples = samples
        self.prompts = {
            name: load_prompt(name, prompts_dir)
            for name in (*_PROMPTS[mode], _MATRIX, _QUOTED, _TURNS, *RUBRIC_PROMPTS)
        }
        self._matrix_asked = False
        self._quoted_asked = False
        self._turns_asked = False
        self._answers_asked = False
        self._batcher = TurnBatcher(self._verify_turns)
        self._answers = TurnBatcher(self._answer_turns)
        self.max_claims_per_call = 1 if mode == "per_claim" else max_claims_per_call
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._truths: OrderedDict[str, list[str]] = OrderedDict()
        self._truths_pending: dict[str, asyncio.Task[list[str]]] = {}
        self._truths_cache_size = truths_cache_size
        self._checklists = ChecklistMemo()

    @property
    def spec(self) -> str:
        return f"{self.model.provider}:{self.model.model}"

    @property
    def prompt_versions(self) -> dict[str, str]:
        """The version of each prompt, recorded with every result; the matrix prompt's only
        once a matrix was asked for, as a run without the diagnostic metrics never uses it."""
        asked = {
            **dict.fromkeys(RUBRIC_PROMPTS, False),
            _MATRIX: self._matrix_asked,
            _QUOTED: self._quoted_asked,
            _TURNS: self._turns_asked,
            _ANSWERS: self._answers_asked,
        }
        return {
            name: prompt.version for name, prompt in self.prompts.items() if asked.get(name, True)
        }

    def describe(self) -> JudgeDescription:
        """Mode, prompt versions, and calls, tokens and cost where the model keeps a ledger."""
        usage = self.model.ledger.summary() if isinstance(self.model, ManagedChatModel) else None
        return JudgeDescription(
            spec=self.spec,
            kind="llm",
            mode=self.mode,
            samples=self.samples,
            temperature=self.temperature,
            prompt_versions=self.prompt_versions,
            usage=usage,
        )

    def plan_calls(self, work: Sequence[JudgeWork]) -> CallEstimate:
        """The calls and tokens `work` would take: this judge's own code run over it against a
        model that records each request (`vera.judges._calls.count_calls`); each context set's
        truths (truths mode) are counted once, as the judge asks for them once."""
        return count_calls(self, work)

    def replica(self, model: ChatModel) -> LLMJudge:
        """This judge with the same settings and prompts, asking `model`, with nothing
        remembered (no truths, no matrix asked)."""
        twin = copy.copy(self)
        twin.model = model
        twin._matrix_asked = False
        twin._quoted_asked = False
        twin._turns_asked = False
        twin._answers_asked = False
        twin._batcher = TurnBatcher(twin._verify_turns)
        twin._answers = TurnBatcher(twin._answer_turns)
        twin._truths = OrderedDict()
        twin._truths_pending = {}
        twin._checklists = ChecklistMemo()
        return twin

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """Claims of `response` and their verdicts against `contexts`, the way `mode` says."""
        if not response.strip():
            return [], []
        draws: list[list[ClaimVerdict]] = []
        claims: list[Claim] | None = None
        if self.mode == "single_call" and contexts:
            judged = await self._single_call(response, contexts, query or "")
            if judged is not None:
                claims, first_draw = judged
                draws.append(first_draw)
        if claims is None:
            claims = await self.extract_claims(response, query=query)
        if not claims:
            return [], []
        draws += await asyncio.gather(
            *(self._verify_draw(claims, contexts, draw) for draw in range(len(draws), self.samples))
        )
        return claims, majority_verdicts(draws)

    @property
    def batches_turns(self) -> bool:
        """Whether the turns of one conversation are judged together: verified together in
        batched mode, claims and verdicts in one call in single_call mode (one draw)."""
        return self.mode in ("batched", "single_call") and self.samples == 1

    async def analyse_turn(
        self, response: str, contexts: Sequence[str], *, query: str | None, group: TurnGroup
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """One conversation turn's claims and verdicts, like `analyse`; with one draw, judged
        with the other turns of its `group`: in batched mode its claims are verified in one call
        with theirs (`vera.judges._turns`), in single_call mode its claims and verdicts come
        from one call with theirs (`vera.judges._turn_answers`), each turn against its own
        contexts only."""
        if not self.batches_turns:
            return await self.analyse(response, contexts, query=query)
        if self.mode == "single_call":
            return await self._answer_turn(response, contexts, query or "", group)
        try:
            claims = await self.extract_claims(response, query=query) if response.strip() else []
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
                item.verdicts.set_result(await self.verify_claims(item.claims, item.contexts))
            except Exception as exc:
                item.verdicts.set_exception(exc)

    async def _joint_verdicts(self, batch: list[TurnItem]) -> list[TurnItem]:
        """Verify `batch` in one call and settle each turn the reply fully answers; the turns
        it does not (an invalid reply, a missing verdict, a citation of another turn's context)
        are returned, to be verified on their own: a joint reply never passes them silently."""
        self._turns_asked = True
        prompt = self.prompts[_TURNS]
        flat = [text for item in batch for text in item.contexts]
        numbered, ranges = SentenceIds.of(flat), context_ranges(batch)
        messages = prompt.render(
            contexts=numbered.render(), claims=render_turn_claims(batch, ranges)
        )
        checked = _checked(Verification, contexts=len(flat), sentences=numbered)
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
            context, quote, note = _evidence(raw, numbered)
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
            judged = await self.analyse(item.response, item.contexts, query=item.query or None)
        except Exception as exc:
            item.result.set_exception(exc)
        else:
            item.result.set_result(judged)

    async def _ask_turns(self, batch: list[TurnAnswer]) -> None:
        """Ask for the claims and verdicts of `batch` in one call. The turns the reply does not
        answer properly (`turn_problems`) are asked for again once, with what was wrong; a
        turn still wrong then is an error. A reply that answers a turn not asked leaves every
        turn open, as its numbering cannot be trusted."""
        self._answers_asked = True
        prompt = self.prompts[_ANSWERS]
        sources = Sources.of(batch)
        numbered = SentenceIds.of(sources.texts)
        messages = prompt.render(
            contexts=numbered.render(), turns=render_turns(batch, sources, prompt.tags)
        )
        checked = _checked(TurnsReply, contexts=len(sources.texts), sentences=numbered)
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
                _judged(
                    entries[turn],
                    item.response,
                    numbered,
                    item.contexts,
                    local=functools.partial(sources.local, turn),
                )
            )

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Numbered atomic claims, each located in the response where it appears verbatim."""
        if not response.strip():
            return []
        texts = await self._extract_texts(response, query or "")
        return [_claim(f"c{n}", text, response) for n, text in enumerate(texts, start=1)]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim (the majority over `samples` draws)."""
        draws = await asyncio.gather(
            *(self._verify_draw(claims, contexts, draw) for draw in range(self.samples))
        )
        return majority_verdicts(draws)

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """Each claim against each context alone, the whole matrix in one call per draw; a
        context the reply does not list for a claim is NO_EVIDENCE, and with several draws each
        cell gets its majority verdict."""
        if not claims or not contexts:
            return [[] for _ in claims]
        self._matrix_asked = True
        draws = await asyncio.gather(
            *(self._matrix_draw(claims, contexts, draw) for draw in range(self.samples))
        )
        # Voting is per cell: flattened, every draw lists the same cells in the same order.
        voted = majority_verdicts([[cell for row in draw for cell in row] for draw in draws])
        width = len(contexts)
        return [voted[i * width : (i + 1) * width] for i in range(len(claims))]

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`, all texts in one call; missing ratings are
        asked for again once."""
        prompt = self.prompts["rate_relevance"]
        found: dict[int, RelevanceVerdict] = {}
        for _ in range(2):
            missing = [n for n in range(1, len(texts) + 1) if n not in found]
            if not missing:
                break
            reply = await self._ask(
                prompt.render(query=query, texts=_numbered([texts[n - 1] for n in missing])),
                prompt,
                RELEVANCE_SCHEMA,
                "ratings",
                Ratings.model_validate,
            )
            for rating in reply.ratings:
                if 1 <= rating.text <= len(missing):
                    found.setdefault(
                        missing[rating.text - 1],
                        RelevanceVerdict(relevance=rating.relevance, reason=rating.reason),
                    )
        absent = [n for n in range(1, len(texts) + 1) if n not in found]
        if absent:
            raise JudgeResponseError(f"the judge gave no relevance rating for texts {absent}")
        return [found[n] for n in range(1, len(texts) + 1)]

    async def write_checklist(self, name: str, criteria: str, scope: RubricScope) -> Checklist:
        """A rubric's criteria as yes/no items (`vera.judges._rubric`), asked at temperature 0
        whatever this judge's, so the same criteria, model and prompt give the same items."""
        fixed = copy.copy(self)
        fixed.temperature = 0.0
        prompt = self.prompts["rubric_items"]
        return await self._checklists.get(
            (name, criteria, scope),
            lambda: write_checklist(fixed._ask, prompt, self.spec, name, criteria, scope),
        )

    async def answer_checklist(self, request: RubricRequest) -> list[ItemVerdict]:
        """One call's verdicts with evidence on a rubric's items (`vera.judges._rubric`)."""
        return await answer_checklist(self._ask, self.prompts, request)

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
                _checked(
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
        return _judged(reply, response, numbered, contexts)

    async def _extract_texts(self, response: str, query: str) -> list[str]:
        prompt = self.prompts["extract_claims"]
        # Numbered, so a sentence that is one claim as it stands comes back as its number.
        answer = AnswerSentences.of(response)
        messages = prompt.render(
            query=query or "(none)", response=response, sentences=answer.render()
        )
        try:
            extraction = await self._ask_for_claims(
                messages,
                prompt,
                EXTRACTION_SCHEMA,
                _checked(Extraction, response=response, answer=answer),
                response,
            )
        except TruncatedOutputError:
            halves = _split_in_two(response)
            if halves is None:
                raise JudgeResponseError(
                    "the claim list was cut off at max_tokens even for one sentence; "
                    f"{_RAISE_MAX_TOKENS}"
                ) from None
            first, second = halves
            return [
                *await self._extract_texts(first, query),
                *await self._extract_texts(second, query),
            ]
        ordered = sorted(extraction.claims, key=lambda c: c.number)
        return claim_texts([c.text for c in ordered])

    async def _verify_draw(
        self, claims: Sequence[Claim], contexts: Sequence[str], draw: int
    ) -> list[ClaimVerdict]:
        """One full verification of `claims`: every claim gets a verdict, or this raises. A
        claim the judge gave no verdict for, even when asked again alone, costs that claim
        (NO_EVIDENCE, flagged) where the judge answered some of the others; with no verdict
        at all, the sample is an error: nothing was measured."""
        if not contexts:
            return [
                ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason="no context was given")
                for c in claims
            ]
        shown = await self._truths_of(contexts) if self.mode == "truths" else list(contexts)
        found: dict[str, ClaimVerdict] = {}
        await self._verify_batches(list(claims), shown, contexts, found, draw)
        missing = [c for c in claims if c.id not in found]
        if missing:
            # Asking again for just the missing claims keeps the verdicts already given; at
            # the re-ask temperature, as the request may be the first one again.
            await self._verify_batches(missing, shown, contexts, found, draw, reask=True)
        still_missing = [c.id for c in claims if c.id not in found]
        if still_missing and not found:
            raise JudgeResponseError(f"the judge gave no verdict for claims {still_missing}")
        unanswered = "[the judge gave no verdict, even when asked again]"
        return [
            found.get(c.id) or ClaimVerdict(c.id, Verdict.NO_EVIDENCE, reason=unanswered)
            for c in claims
        ]

    async def _verify_batches(
        self,
        claims: list[Claim],
        shown: Sequence[str],
        contexts: Sequence[str],
        found: dict[str, ClaimVerdict],
        draw: int,
        *,
        reask: bool = False,
    ) -> None:
        size = self.max_claims_per_call
        # Several calls on these contexts (per_claim, batches, draws): their shared prefix
        # is worth a provider cache write.
        reused = len(claims) > size or self.samples > 1
        await asyncio.gather(
            *(
                self._verify_batch(
                    claims[start : start + size],
                    shown,
                    contexts,
                    found,
                    draw,
                    reused=reused,
                    reask=reask,
                )
                for start in range(0, len(claims), size)
            )
        )

    async def _verify_batch(
        self,
        batch: list[Claim],
        shown: Sequence[str],
        contexts: Sequence[str],
        found: dict[str, ClaimVerdict],
        draw: int,
        *,
        reused: bool = True,
        reask: bool = False,
    ) -> None:
        """Verify `batch` against `shown` (the contexts, or their truths); quotes are checked
        against the contexts themselves. `reask`: asked again, at the re-ask temperature."""
        prompt, schema, numbered = self._verification_prompt(shown, len(batch))
        # Contexts before claims: calls on the same contexts (per_claim, several batches or
        # draws) share their prompt up to the claims, which a provider's prompt cache reuses.
        messages = prompt.render(
            cache_contexts=reused,
            contexts=numbered.render() if numbered is not None else _numbered(shown),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(batch, start=1)),
        )
        try:
            reply = await self._ask(
                messages,
                prompt,
                schema,
                "verdicts",
                _checked(
                    Verification,
                    contexts=len(shown),
                    sentences=numbered,
                    claims=[c.text for c in batch],
                ),
                draw=draw,
                reask=reask,
            )
        except TruncatedOutputError:
            if len(batch) == 1:
                raise JudgeResponseError(
                    f"the verdict was cut off at max_tokens even for one claim; {_RAISE_MAX_TOKENS}"
                ) from None
            half = len(batch) // 2
            await self._verify_batch(batch[:half], shown, contexts, found, draw, reask=reask)
            await self._verify_batch(batch[half:], shown, contexts, found, draw, reask=reask)
            return
        _collect(reply, batch, numbered, contexts, found)

    def _verification_prompt(
        self, shown: Sequence[str], claims: int
    ) -> tuple[Prompt, dict[str, Any], SentenceIds | None]:
        """The verification prompt, its schema and the numbered sentences it shows: sentence
        ids to cite (flat in the compact prompt), or None where the contexts are so long that
        the ids would cost more than quotes: numbered contexts to quote from. A verify_claims
        prompt of your own is always used."""
        prompt = self.prompts["verify_claims"]
        bundled = "+sha256:" not in prompt.version
        compact = prompt.reply_format == "compact"
        numbered = SentenceIds.of(shown, flat=compact)  # split once: it costs per sample
        if bundled and numbered.cost_more_than_quotes(claims):
            self._quoted_asked = True
            return self.prompts[_QUOTED], QUOTED_VERIFICATION_SCHEMA, None
        schema = COMPACT_VERIFICATION_SCHEMA if compact else VERIFICATION_SCHEMA
        return prompt, schema, numbered

    async def _matrix_draw(
        self, claims: Sequence[Claim], contexts: Sequence[str], draw: int
    ) -> list[list[ClaimVerdict]]:
        """One full matrix: every claim gets its row, or this raises. Claims whose row the
        reply left out are asked for again once, alone."""
        found: dict[str, list[ClaimVerdict]] = {}
        await self._matrix_batch(list(claims), contexts, found, draw)
        missing = [c for c in claims if c.id not in found]
        if missing:
            await self._matrix_batch(missing, contexts, found, draw)
        still_missing = [c.id for c in claims if c.id not in found]
        if still_missing:
            raise JudgeResponseError(f"the judge gave no matrix row for claims {still_missing}")
        return [found[c.id] for c in claims]

    async def _matrix_batch(
        self,
        batch: list[Claim],
        contexts: Sequence[str],
        found: dict[str, list[ClaimVerdict]],
        draw: int,
    ) -> None:
        prompt = self.prompts[_MATRIX]
        messages = prompt.render(
            contexts=_numbered(contexts),
            claims="\n".join(f"{i}. {c.text}" for i, c in enumerate(batch, start=1)),
        )
        try:
            reply = await self._ask(
                messages,
                prompt,
                MATRIX_SCHEMA,
                "matrix",
                _checked(Matrix, contexts=len(contexts)),
                draw=draw,
            )
        except TruncatedOutputError:
            # The reply grows with claims-by-contexts; halving the claims is the only cut left.
            if len(batch) == 1:
                raise JudgeResponseError(
                    f"the matrix row was cut off at max_tokens even for one claim; "
                    f"{_RAISE_MAX_TOKENS}"
                ) from None
            half = len(batch) // 2
            await self._matrix_batch(batch[:half], contexts, found, draw)
            await self._matrix_batch(batch[half:], contexts, found, draw)
            return
        for row in reply.claims:
            # Numbers outside the batch answer no question we asked; they are dropped.
            if 1 <= row.claim <= len(batch):
                claim = batch[row.claim - 1]
                found.setdefault(claim.id, _matrix_row(claim, row.contexts, contexts))

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
            prompt.render(contexts=_numbered(contexts)),
            prompt,
            TRUTHS_SCHEMA,
            "truths",
            _checked(Truths, contexts=len(contexts)),
        )
        per_context: list[list[str]] = [[] for _ in contexts]
        for truth in reply.truths:
            if 1 <= truth.context <= len(contexts) and truth.text.strip():
                per_context[truth.context - 1].append(truth.text.strip())
        return [" ".join(found) if found else _NO_TRUTHS for found in per_context]

    async def _ask_for_claims(
        self,
        messages: tuple[Message, ...],
        prompt: Prompt,
        schema: dict[str, Any],
        validate: Callable[[Any], ClaimReply],
        response: str,
    ) -> ClaimReply:
        """`_ask` for a claim list. An empty one, for a response in which VERA's splitter (the
        offline judge's) finds checkable sentences, is asked for again once, then an error:
        no claims would score a vacuous faithfulness of 1.0."""
        reply = await self._ask(messages, prompt, schema, "claims", validate)
        checkable = 0 if _has_claims(reply) else checkable_sentences(response)
        if not checkable:
            return reply
        reask = (
            *messages,
            Message(role="assistant", content=reply.model_dump_json()),
            Message(
                role="user",
                content="Your reply lists no claims, but the answer inside the <answer> tags "
                f"does contain factual statements: {checkable} of its sentences state something "
                "that can be checked. Split it into claims as asked, and reply again with only "
                "the JSON object.",
            ),
        )
        reply = await self._ask(reask, prompt, schema, "claims", validate)
        if _has_claims(reply):
            return reply
        raise JudgeResponseError(
            f"the judge extracted no claims from a response with {checkable} checkable "
            "sentence(s), even when asked again; the sample is not scored, as no claims would "
            "give it a vacuous faithfulness of 1.0"
        )

    async def _ask(
        self,
        messages: tuple[Message, ...],
        prompt: Prompt,
        schema: dict[str, Any],
        schema_name: str,
        validate: Callable[[Any], T],
        *,
        draw: int = 0,
        reask: bool = False,
    ) -> T:
        temperature = max(self.temperature, _REASK_TEMPERATURE) if reask else self.temperature
        request = ChatRequest(
            messages=messages,
            json_schema=schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=self.max_tokens,
            prompt_version=prompt.version,
            draw=draw,
        )
        response = await self._complete(request, prompt.name)
        key = _reply_key(schema)
        try:
            return validate(_reply_data(response, key))
        except (ValidationError, MalformedJSONError) as first_error:
            problem = _describe(first_error, key)
        retry = request.model_copy(
            update={
                "messages": (
                    *messages,
                    Message(role="assistant", content=response.text),
                    Message(
                        role="user",
                        content=f"That reply was not valid: {problem}. Reply again with only "
                        "the JSON object, in exactly the format asked for.",
                    ),
                ),
                # At temperature 0 a small model repeats its reply byte for byte; a little
                # randomness lets the re-ask be answered differently.
                "temperature": max(request.temperature, _REASK_TEMPERATURE),
            }
        )
        response = await self._complete(retry, prompt.name)
        try:
            return validate(_reply_data(response, key))
        except (ValidationError, MalformedJSONError) as second_error:
            raise JudgeResponseError(_invalid_twice(second_error, key)) from None

    async def _complete(self, request: ChatRequest, label: str) -> ChatResponse:
        """Call the model; a managed model also books the call's cost under the prompt's name."""
        if isinstance(self.model, ManagedChatModel):
            return await self.model.complete(request, label=label)
        return await self.model.complete(request)


def _matrix_row(
    claim: Claim, cells: Sequence[MatrixCell], contexts: Sequence[str]
) -> list[ClaimVerdict]:
    """One claim's verdict on each context, its quotes checked; the first cell the reply
    gives for a context counts, and a context it does not list is NO_EVIDENCE."""
    given: dict[int, ClaimVerdict] = {}
    for cell in cells:
        if (
            cell.context is not None
            and 1 <= cell.context <= len(contexts)
            and cell.context not in given
        ):
            checked = checked_verdict(
                claim.id,
                cell.verdict,
                context=cell.context,
                quote=cell.quote,
                reason=cell.reason,
                contexts=contexts,
                claim=claim.text,
            )
            given[cell.context] = checked.model_copy(update={"context_index": cell.context - 1})
    unlisted = "the judge found nothing on the claim in this context"
    return [
        given.get(k, ClaimVerdict(claim.id, Verdict.NO_EVIDENCE, "", k - 1, unlisted))
        for k in range(1, len(contexts) + 1)
    ]


def _judged(
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
        claims.append(_claim(f"c{n}", item.text, response))
        context, quote, note = _evidence(item, numbered)
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


def _collect(
    reply: Verification,
    batch: Sequence[Claim],
    numbered: SentenceIds | None,
    contexts: Sequence[str],
    found: dict[str, ClaimVerdict],
) -> None:
    """The checked verdict of each claim of `batch` the reply answers, into `found` (the
    first one a claim gets counts)."""
    for raw in reply.verdicts:
        # Numbers outside the batch answer no question we asked; they are dropped.
        if 1 <= raw.claim <= len(batch):
            claim = batch[raw.claim - 1]
            context, quote, note = _evidence(raw, numbered)
            found.setdefault(
                claim.id,
                checked_verdict(
                    claim.id,
                    raw.verdict,
                    context=context,
                    quote=quote,
                    reason=f"{note} {raw.reason}".strip(),
                    contexts=contexts,
                    claim=claim.text,
                ),
            )


def _others(batch: Sequence[object], turns: Sequence[int]) -> list[int]:
    """The positions in `batch` not in `turns`."""
    return [t for t in range(len(batch)) if t not in turns]


def _evidence(given: VerdictFields, numbered: SentenceIds | None) -> tuple[int | None, str, str]:
    """The context (1-based) and quote of a verdict, and a note for its reason: the cited
    sentence's own text, quoted by VERA; or, from a prompt that asks for quotes (an override,
    or long contexts), the judge's copy. A citation of a sentence that does not exist costs
    the citation, not the sample: no quote, and the note says why."""
    if not given.sentence or numbered is None:
        return given.context, given.quote, ""
    cited = numbered.resolve(given.sentence)
    if cited is None:
        return None, "", f"[cited sentence {given.sentence!r} does not exist]"
    return cited[0], cited[1], ""


def _numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {text}" for i, text in enumerate(texts, start=1))


def _reply_key(schema: dict[str, Any]) -> str:
    """The one key the reply's object must have ("v", "claims", "verdicts"...)."""
    return str(schema.get("required", [""])[0])


def _reply_data(response: ChatResponse, key: str) -> Any:
    """The reply's JSON: structured output where the provider gave it, else parsed from text.
    Small models' deviations are read for what they mean: a bare list where the object was
    asked for is that object's `key` list, and an object holding its one list under another
    key ({"verdicts": [...]} for {"v": [...]}) is read under `key`."""
    data = response.data
    if data is None:
        try:
            data = parse_json_object(response.text)
        except MalformedJSONError:
            rows = _json_list(response.text)
            if rows is None:
                raise
            return {key: rows}
    lists = [name for name, value in data.items() if isinstance(value, list)]
    if key and key not in data and len(lists) == 1:
        return {**data, key: data[lists[0]]}
    return data


def _json_list(text: str) -> list[Any] | None:
    """The first JSON list in `text` (bare, fenced or after prose), or None."""
    start = text.find("[")
    while start >= 0:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("[", start + 1)
            continue
        return value if isinstance(value, list) else None
    return None


def _has_claims(reply: Extraction | SingleCall) -> bool:
    return any(claim.text.strip() for claim in reply.claims)


def _invalid_twice(error: ValidationError | MalformedJSONError, key: str) -> str:
    if isinstance(error, IncompleteJSONError):
        # Only the user can give the judge a bigger budget, so only the user is told how.
        return (
            "the judge's reply is not complete JSON, even when asked again (it ends mid-object: "
            f"cut off? {_RAISE_MAX_TOKENS})"
        )
    return f"the judge's reply was invalid twice: {_describe(error, key)}"


def _describe(error: ValidationError | MalformedJSONError, key: str) -> str:
    """What was wrong, in the words of the prompt the model saw: never VERA's internal field
    paths ("verdicts.0.sentence"), which name fields the compact prompts never show."""
    if isinstance(error, IncompleteJSONError):
        # A cut-off reply can hold a complete inner object; it is named for what it is, never
        # as the outer object's missing field.
        return "it is not complete JSON (it ends mid-object)"
    if not isinstance(error, ValidationError):
        return str(error)
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    rows = [part for part in first["loc"] if isinstance(part, int)]
    if rows:
        return f"entry {rows[0] + 1} of the {key} list: {message}"
    if first["type"] == "missing":
        return f'the reply must be one JSON object {{"{key}": [...]}}'
    return message


def _checked(model: type[Reply], **sample: object) -> Callable[[Any], Reply]:
    """`model`'s validation of a reply, checked against the sample (`vera.judges._replies`):
    `contexts`, how many were shown; `response`, the answer the claims come from;
    `sentences`, the numbered sentences a verdict may cite; `answer`, the numbered answer
    sentences a claim may refer to."""
    return lambda data: model.model_validate(data, context=sample)


def _claim(claim_id: str, text: str, response: str) -> Claim:
    """A claim of `response`, located where it appears verbatim, and flagged when it cannot
    come from it (no span, no content word in common)."""
    span = _locate(response, text)
    return Claim(claim_id, text, span, traceable=span is not None or shares_a_word(text, response))


def _locate(response: str, text: str) -> tuple[int, int] | None:
    start = response.find(text)
    if start < 0:
        start = response.lower().find(text.lower())
    return (start, start + len(text)) if start >= 0 else None


def _split_in_two(response: str) -> tuple[str, str] | None:
    units = split_units(response)
    if len(units) < 2:
        return None
    middle = units[len(units) // 2].start
    return response[:middle], response[middle:]
