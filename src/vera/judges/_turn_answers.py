"""The turns of one conversation judged in one call: claims and verdicts together
(single_call mode; the `single_call_turns` prompt).

Where batched mode extracts each turn's claims in a call of its own and verifies them together
(`vera.judges._turns`), single_call mode asks for every turn's claims and verdicts in one call,
as it does for one sample: a conversation's group of turns costs one call, not one a turn.

- **Sources once.** Turns share most of their contexts (a later turn sees what earlier turns
  retrieved, the tools returned and the user said), so each text is shown once, numbered, and
  each turn names the contexts it may rely on (`Sources`). A verdict citing a context its own
  turn may not rely on is refused, as in batched mode.
- **As few calls as fit.** A call holds consecutive turns while their claims (as VERA's own
  splitter counts them) stay within the judge's `max_claims_per_call`, their reply within
  half its `max_tokens` (room for a model that finds more claims than the splitter), and the
  prompt within `MAX_PROMPT_TOKENS`; the rest go to the next call (`pack_turns`). Every
  measure is computed from the turns' texts, so the dry run, which runs the same code, counts
  the same calls.
- **Nothing passes silently.** A reply that misses a turn, gives a turn twice, answers a turn
  that was not asked, lists no claims for an answer with checkable sentences, or cites another
  turn's context is asked again once with what was wrong (`turn_problems`); a turn still
  wrong then is an error, never a pass. A reply cut off at max_tokens is split in two.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from vera._types import Claim, ClaimVerdict
from vera.judges._calls import EXTRACTION_TOKENS_PER_CLAIM, VERDICT_TOKENS_PER_CLAIM, tokens
from vera.judges._evidence import MOSTLY_UNTRACEABLE, untraceable
from vera.judges._offline._claims import checkable_sentences
from vera.judges._offline._claims import extract_claims as split_claims
from vera.judges._prompts import Fenced, neutralise_tags
from vera.judges._replies import SINGLE_CALL_SCHEMA, SingleCall
from vera.judges._sentence_ids import SentenceIds

MAX_PROMPT_TOKENS = 32_000
"""The most prompt tokens (four characters each) one call of a conversation's turns is given:
well inside the context window of every chat model VERA talks to, so a long conversation is
split across calls rather than refused by the provider."""

_TURN_TAG = "turn"
_OVERHEAD_TOKENS = 12  # a turn's own entry in the reply: {"turn": N, "claims": [...]}

TURNS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "turn": {"type": "integer"},
                    "claims": SINGLE_CALL_SCHEMA["properties"]["claims"],
                },
                "required": ["turn", "claims"],
            },
        }
    },
    "required": ["turns"],
}


class TurnClaims(SingleCall):
    """One turn's claims and verdicts in a reply (single_call's claims, with the turn)."""

    turn: int


class TurnsReply(BaseModel):
    """A reply of the `single_call_turns` prompt: each turn's claims with their verdicts."""

    turns: list[TurnClaims]


@dataclass
class TurnAnswer:
    """One turn to judge with the others of its group, and where its claims and verdicts go."""

    response: str
    query: str
    contexts: list[str]
    result: asyncio.Future[tuple[list[Claim], list[ClaimVerdict]]]

    @property
    def future(self) -> asyncio.Future[tuple[list[Claim], list[ClaimVerdict]]]:
        return self.result


@dataclass(frozen=True)
class Sources:
    """The distinct context texts of some turns, numbered from 1 in order of first
    appearance, and for each turn the number of each of its own contexts."""

    texts: tuple[str, ...]
    numbers: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, items: Sequence[TurnAnswer]) -> Sources:
        first: dict[str, int] = {}
        for item in items:
            for text in item.contexts:
                first.setdefault(text, len(first) + 1)
        numbers = tuple(tuple(first[text] for text in item.contexts) for item in items)
        return cls(tuple(first), numbers)

    def local(self, turn: int, source: int) -> int | None:
        """The 1-based position of `source` among turn `turn`'s (0-based) own contexts; None
        where the turn may not rely on it."""
        mine = self.numbers[turn]
        return mine.index(source) + 1 if source in mine else None


def render_turns(items: Sequence[TurnAnswer], sources: Sources, tags: frozenset[str]) -> Fenced:
    """Each turn in its `<turn N>` block: the contexts it may rely on (in its own order: its
    own first, then earlier turns', then the user's), its question and its answer, each
    fenced in its own tags with every tag inside the texts made inert."""
    inert = tags | {_TURN_TAG}
    blocks = []
    for number, (item, mine) in enumerate(zip(items, sources.numbers, strict=True), start=1):
        allowed = ", ".join(str(n) for n in dict.fromkeys(mine)) or "none"
        blocks.append(
            f"<{_TURN_TAG} {number}>\nContexts: {allowed}\n"
            f"<question>\n{neutralise_tags(item.query or '(none)', inert)}\n</question>\n"
            f"<answer>\n{neutralise_tags(item.response, inert)}\n</answer>\n</{_TURN_TAG}>"
        )
    return Fenced("\n\n".join(blocks))


@dataclass(frozen=True)
class _Cost:
    claims: int
    reply: int
    prompt: int


def _cost(items: Sequence[TurnAnswer]) -> _Cost:
    """What one call for `items` would hold: the claims VERA's splitter finds in their
    answers, the reply those claims take, and the prompt's texts."""
    found = [len(split_claims(item.response)) for item in items]
    per_claim = EXTRACTION_TOKENS_PER_CLAIM + VERDICT_TOKENS_PER_CLAIM
    reply = sum(
        tokens(item.response) + n * per_claim + _OVERHEAD_TOKENS
        for item, n in zip(items, found, strict=True)
    )
    texts = Sources.of(items).texts
    prompt = sum(tokens(t) for t in texts) + sum(tokens(i.response + i.query) for i in items)
    return _Cost(sum(found), reply, prompt)


def pack_turns(
    items: Sequence[TurnAnswer], *, max_claims: int, max_tokens: int
) -> list[list[TurnAnswer]]:
    """`items` in order, cut into as few runs of consecutive turns as fit one call each (see
    the module docstring); a turn that alone exceeds a limit goes alone."""
    calls: list[list[TurnAnswer]] = []
    for item in items:
        if calls and _fits(_cost([*calls[-1], item]), max_claims, max_tokens):
            calls[-1].append(item)
        else:
            calls.append([item])
    return calls


def _fits(cost: _Cost, max_claims: int, max_tokens: int) -> bool:
    return (
        cost.claims <= max_claims
        and cost.reply <= max_tokens // 2
        and cost.prompt <= MAX_PROMPT_TOKENS
    )


def turn_problems(
    reply: TurnsReply, items: Sequence[TurnAnswer], sources: Sources, numbered: SentenceIds
) -> dict[int | None, str]:
    """What is wrong with the reply, by turn (0-based; None for what belongs to no turn
    asked): a missing or repeated turn, claims that cannot come from the turn's answer, an
    empty claim list for an answer with checkable sentences, a citation of another turn's
    context. An empty dict: every turn answered properly."""
    problems: dict[int | None, str] = {}
    given: dict[int, int] = {}
    for entry in reply.turns:
        given[entry.turn] = given.get(entry.turn, 0) + 1
    unknown = sorted(set(given) - set(range(1, len(items) + 1)))
    if unknown:
        problems[None] = (
            f"turn {unknown[0]} does not exist: there are {len(items)} turns; give each of "
            f"turns 1 to {len(items)} once, and no other"
        )
    for turn in range(len(items)):
        count = given.get(turn + 1, 0)
        if count != 1:
            problems[turn] = f"turn {turn + 1} is given {count} times, not once"
    for entry in reply.turns:
        turn = entry.turn - 1
        if 0 <= turn < len(items) and turn not in problems:
            found = _claims_problem(entry, items[turn].response, turn + 1)
            found = found or _citation_problem(entry, sources, numbered, turn)
            if found:
                problems[turn] = found
    return problems


def _claims_problem(entry: TurnClaims, response: str, number: int) -> str | None:
    texts = [claim.text for claim in entry.claims if claim.text.strip()]
    if not texts:
        checkable = checkable_sentences(response)
        if checkable:
            return (
                f"turn {number} lists no claims, but {checkable} sentence(s) of its answer "
                "state something that can be checked; split them into claims"
            )
        return None
    strays = len(untraceable(texts, response))
    if strays > MOSTLY_UNTRACEABLE * len(texts):
        return (
            f"{strays} of the {len(texts)} claims of turn {number} share no word with its "
            "answer; list only the claims that turn's answer makes"
        )
    return None


def _citation_problem(
    entry: TurnClaims, sources: Sources, numbered: SentenceIds, turn: int
) -> str | None:
    for n, claim in enumerate(entry.claims, start=1):
        cited = numbered.resolve(claim.sentence) if claim.sentence else None
        if cited is not None and sources.local(turn, cited[0]) is None:
            mine = ", ".join(str(k) for k in dict.fromkeys(sources.numbers[turn])) or "none"
            return (
                f"claim {n} of turn {turn + 1} cites sentence {claim.sentence} of context "
                f"{cited[0]}, which that turn may not rely on (its contexts: {mine})"
            )
    return None
