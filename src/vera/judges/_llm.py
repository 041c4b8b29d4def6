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

The turns of one conversation (`analyse_turn`, one draw) are judged together in batched and
single_call mode: verified together, or claims and verdicts from one call
(`vera.judges._turn_judge`).

RAGChecker's claim-by-chunk matrix (`verify_matrix`, asked only by the diagnostic metrics) is one
call per draw in every mode: each claim against each context alone, all claims together.

`LLMJudge` holds the settings and hands the work to its parts, each reading those settings at
each call: the mode's strategy (`vera.judges._modes`: `_mode_batched`, `_mode_per_claim`,
`_mode_truths`, `_mode_single_call`), the turn judge (`vera.judges._turn_judge`), the matrix
(`vera.judges._matrix`) and the relevance ratings (`vera.judges._relevance`), all asking the
model and reading its replies the same way (`vera.judges._asking`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

from vera._types import Claim, ClaimVerdict, RelevanceVerdict
from vera._types._rubric import Checklist, ItemVerdict, RubricRequest, RubricScope
from vera.judges._asking import Asker
from vera.judges._base import BaseJudge, CallEstimate, JudgeDescription, JudgeWork
from vera.judges._calls import count_calls
from vera.judges._matrix import MATRIX_PROMPT, ClaimMatrix
from vera.judges._mode_batched import QUOTED_PROMPT, BatchedMode
from vera.judges._mode_per_claim import PerClaimMode
from vera.judges._mode_single_call import SingleCallMode
from vera.judges._mode_truths import TruthsMode
from vera.judges._modes import MODES, Mode
from vera.judges._prompts import REPLY_STYLES, Prompt, ReplyStyle, load_prompt
from vera.judges._relevance import RelevanceRating
from vera.judges._rubric import (
    RUBRIC_PROMPTS,
    ChecklistMemo,
    answer_checklist,
    write_checklist,
)
from vera.judges._rubric_batch import RIDER_PROMPT, RubricRider
from vera.judges._turn_judge import ANSWERS_PROMPT, TURNS_PROMPT, TurnJudge
from vera.judges._turns import TurnGroup
from vera.providers._base import ChatModel
from vera.providers._managed import ManagedChatModel

_STRATEGIES: dict[str, type[BatchedMode]] = {
    strategy.mode: strategy for strategy in (BatchedMode, PerClaimMode, TruthsMode, SingleCallMode)
}


class LLMJudge(BaseJudge):
    """A judge backed by any `ChatModel` (wrap it in `ManagedChatModel` for retries and cache).

    Args:
        model: the chat model that answers.
        mode: "batched", "per_claim", "truths" or "single_call" (see the module docstring).
        samples: verification draws per claim; above 1, the majority verdict is kept and the
            agreement rate reported. Use a temperature above 0 with it.
        prompts_dir: a folder with your own prompt files (same names as the bundled ones).
        replies: the bundled prompt set asked in: "compact" (the cheapest replies, for hosted
            models billed per token) or "reasoned" (what the context says before each
            verdict, for small local models; docs/local-judges.md).
        max_claims_per_call: claims verified in one call; more are split across calls.
        temperature: sampling temperature (0 for the most repeatable verdicts).
        max_tokens: the reply budget of one call.
        truths_cache_size: context sets whose truths are kept in memory (truths mode).
        batch_rubrics: ask rubric items in the verification call of the same sample, so
            its contexts are sent once (batched mode, one draw, rubrics without an expected
            answer; `vera.judges._rubric_batch`); False asks each rubric in a call of its own.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        mode: Mode = "batched",
        samples: int = 1,
        prompts_dir: Path | None = None,
        replies: ReplyStyle = "compact",
        max_claims_per_call: int = 25,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        truths_cache_size: int = 1024,
        batch_rubrics: bool = True,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if samples < 1:
            raise ValueError("samples must be at least 1")
        if max_claims_per_call < 1:
            raise ValueError("max_claims_per_call must be at least 1")
        if replies not in REPLY_STYLES:
            raise ValueError(f"unknown replies {replies!r}; choose one of {REPLY_STYLES}")
        self.model = model
        self.mode = mode
        self.samples = samples
        strategy = _STRATEGIES[mode]
        self.prompts: dict[str, Prompt] = {
            name: load_prompt(name, prompts_dir, replies)
            for name in (
                *strategy.prompt_names,
                MATRIX_PROMPT,
                QUOTED_PROMPT,
                TURNS_PROMPT,
                *RUBRIC_PROMPTS,
                RIDER_PROMPT,
            )
        }
        self.replies = replies
        self.max_claims_per_call = strategy.claims_per_call or max_claims_per_call
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.truths_cache_size = truths_cache_size
        self.batch_rubrics = batch_rubrics
        self._start_parts()

    def _start_parts(self) -> None:
        """The parts that do the work, each reading this judge's settings, with nothing
        remembered: the mode's strategy, the turn judge, the matrix, the relevance ratings and
        the rubric checklists written."""
        self._strategy = _STRATEGIES[self.mode](self)
        self._turns = TurnJudge(self, self._strategy)
        self._matrix = ClaimMatrix(self)
        self._relevance = RelevanceRating(self)
        self._checklists = ChecklistMemo()
        self._rider = RubricRider(self, self._strategy)

    @property
    def spec(self) -> str:
        return f"{self.model.provider}:{self.model.model}"

    @property
    def prompt_versions(self) -> dict[str, str]:
        """The version of each prompt, recorded with every result; the matrix prompt's only
        once a matrix was asked for, as a run without the diagnostic metrics never uses it."""
        asked = {
            **dict.fromkeys(RUBRIC_PROMPTS, False),
            RIDER_PROMPT: self._rider.rider_asked,
            MATRIX_PROMPT: self._matrix.matrix_asked,
            QUOTED_PROMPT: self._strategy.quoted_asked,
            TURNS_PROMPT: self._turns.turns_asked,
            ANSWERS_PROMPT: self._turns.answers_asked,
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
        twin._start_parts()
        return twin

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """Claims of `response` and their verdicts against `contexts`, the way `mode` says."""
        return await self._strategy.analyse(response, contexts, query=query)

    @property
    def batches_turns(self) -> bool:
        """Whether the turns of one conversation are judged together: verified together in
        batched mode, claims and verdicts in one call in single_call mode (one draw)."""
        return self._turns.batches_turns

    async def analyse_turn(
        self, response: str, contexts: Sequence[str], *, query: str | None, group: TurnGroup
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """One conversation turn's claims and verdicts, like `analyse`; with one draw, judged
        with the other turns of its `group` (`vera.judges._turn_judge`)."""
        return await self._turns.analyse_turn(response, contexts, query=query, group=group)

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Numbered atomic claims, each located in the response where it appears verbatim."""
        return await self._strategy.extract_claims(response, query=query)

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim (the majority over `samples` draws)."""
        return await self._strategy.verify_claims(claims, contexts)

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        """Each claim against each context alone, the whole matrix in one call per draw
        (`vera.judges._matrix`)."""
        return await self._matrix.verify_matrix(claims, contexts)

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`, all texts in one call; missing ratings are
        asked for again once."""
        return await self._relevance.rate_relevance(query, texts)

    async def write_checklist(self, name: str, criteria: str, scope: RubricScope) -> Checklist:
        """A rubric's criteria as yes/no items (`vera.judges._rubric`), asked at temperature 0
        whatever this judge's, so the same criteria, model and prompt give the same items."""
        fixed = copy.copy(self)
        fixed.temperature = 0.0
        prompt = self.prompts["rubric_items"]
        return await self._checklists.get(
            (name, criteria, scope),
            lambda: write_checklist(Asker(fixed)._ask, prompt, self.spec, name, criteria, scope),
        )

    async def answer_checklist(self, request: RubricRequest) -> list[ItemVerdict]:
        """One call's verdicts with evidence on a rubric's items (`vera.judges._rubric`)."""
        return await answer_checklist(Asker(self)._ask, self.prompts, request)

    @property
    def rides_rubrics(self) -> bool:
        """Whether rubric items are asked in the verification call of the same sample
        (batched mode, one draw, `batch_rubrics`; `vera.judges._rubric_batch`)."""
        return self._rider.rides

    async def analyse_with_rubrics(
        self,
        response: str,
        contexts: Sequence[str],
        *,
        query: str | None,
        rubrics: Sequence[RubricRequest],
    ) -> tuple[list[Claim], list[ClaimVerdict], list[list[ItemVerdict]]]:
        """`analyse`, and the verdicts on each of `rubrics` (a claim-scope one judged on the
        claims found), its items asked in the verification call where they fit."""
        return await self._rider.analyse(response, contexts, query=query, requests=rubrics)
