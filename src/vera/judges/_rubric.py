"""The judge's side of a rubric: writing a checklist from criteria, and answering it.

A judge that can do both is a `RubricJudge` (a capability, as `RelevanceRater` is); the LLM
judge is one, through the two functions here, which ask its model with its own `_ask` (the
re-ask on an invalid reply, the cache and the cost ledger come with it). The offline and NLI
judges are not: a rubric metric is then not applicable, and says why.

- `write_checklist`: the criteria become yes/no items in one call, asked at temperature 0,
  so the reply is the same for the same criteria, model and prompt version, and the response
  cache serves it to the next run without a call. Its fingerprint hashes those and the
  items written.
- `answer_checklist`: all items of one rubric on one sample in one call; in scope "claim",
  every (claim, item) pair in that one call. A reply must answer every item (and pair) asked,
  once: anything else is invalid, re-asked once with what was wrong, then an error.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from vera._types import Claim, ClaimVerdict
from vera._types._rubric import (
    Checklist,
    ItemVerdict,
    RubricItem,
    RubricRequest,
    RubricScope,
    RubricVerdict,
)
from vera.judges._base import JudgeWork
from vera.judges._evidence import quote_occurs
from vera.judges._prompts import Prompt
from vera.providers._base import Message

RUBRIC_PROMPTS = ("rubric_items", "rubric_answer", "rubric_claims")
EACH_CLAIM = "(each claim)"
WHOLE_ANSWER = "(whole answer)"
"""How an item riding on a verification call says what it is asked of: every claim (scope
"claim"), or the whole answer, once (scope "answer"; `vera.judges._rubric_batch`)."""
ITEMS_NAME = "rubric_items"
VERDICTS_NAME = "rubric_verdicts"
"""The schema names the requests carry, by which a dry run's recording model answers them."""
# Tokens a model writes per item of a checklist beyond its words, and per verdict: the
# verdict word, a quote of about one sentence and a reason of a few words.
ITEM_TOKENS = 8
RUBRIC_VERDICT_TOKENS = 45
"""The prompt files of the rubric work, overridable like every other prompt."""

Ask = Callable[..., Awaitable[Any]]
"""The LLM judge's `Asker._ask(messages, prompt, schema, schema_name, validate)`."""

_SCOPE_NOTES: dict[RubricScope, str] = {
    "answer": "Each question is asked of the whole answer.",
    "claim": "Each question is asked of one statement of the answer at a time, so phrase it "
    'about "the statement" (for example "Does the statement avoid giving legal advice?").',
}

ITEMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "reference": {"type": "boolean"}},
                "required": ["text"],
            },
        }
    },
    "required": ["items"],
}
VERDICTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "integer"},
                    "item": {"type": "integer"},
                    "verdict": {"type": "string", "enum": [v.value for v in RubricVerdict]},
                    "quote": {"type": "string"},
                    "reason": {"type": "string"},
                },
                "required": ["item", "verdict"],
            },
        }
    },
    "required": ["verdicts"],
}


@runtime_checkable
class RubricJudge(Protocol):
    """A judge that writes a rubric's checklist from its criteria and answers it with
    evidence (`vera.metrics.Rubric`)."""

    async def write_checklist(self, name: str, criteria: str, scope: RubricScope) -> Checklist:
        """The criteria as yes/no items, fingerprinted."""
        ...

    async def answer_checklist(self, request: RubricRequest) -> list[ItemVerdict]:
        """One verdict per item (per claim and item in scope "claim")."""
        ...


@runtime_checkable
class RidesRubrics(Protocol):
    """A judge that can ask rubric items in the call that verifies the same sample's claims
    (`vera.judges._rubric_batch`), where `rides_rubrics` says it does."""

    @property
    def rides_rubrics(self) -> bool: ...

    async def analyse_with_rubrics(
        self,
        response: str,
        contexts: Sequence[str],
        *,
        query: str | None,
        rubrics: Sequence[RubricRequest],
    ) -> tuple[list[Claim], list[ClaimVerdict], list[list[ItemVerdict]]]:
        """Claims, their verdicts, and one list of verdicts per request of `rubrics`."""
        ...


class ChecklistMemo:
    """The checklists a judge wrote in this run, by rubric: each is written once, however many
    samples ask for it at the same time (they wait for the one call), or fails once."""

    def __init__(self) -> None:
        self._written: dict[tuple[str, str, str], asyncio.Task[Checklist]] = {}

    async def get(
        self, key: tuple[str, str, str], write: Callable[[], Awaitable[Checklist]]
    ) -> Checklist:
        task = self._written.get(key)
        if task is None:
            # A checklist the judge failed to write (invalid twice, after the provider's own
            # retries) fails every sample alike, rather than being asked again per sample.
            task = asyncio.ensure_future(write())
            self._written[key] = task
        return await asyncio.shield(task)


def checklist_fingerprint(
    criteria: str, scope: RubricScope, model: str, version: str, items: Sequence[RubricItem]
) -> str:
    """What names a written checklist: the criteria, the scope, the model that wrote it, the
    prompt's version and the items it wrote, so two runs with the same fingerprint judged by
    the same checklist, even where a model without the response cache wrote it again."""
    payload = [criteria.strip(), scope, model, version, [i.model_dump() for i in items]]
    blob = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class _WrittenItem(BaseModel):
    text: str = Field(pattern=r"\S")
    reference: bool = False


class _Items(BaseModel):
    items: list[_WrittenItem] = Field(min_length=1)


async def write_checklist(
    ask: Ask, prompt: Prompt, model: str, name: str, criteria: str, scope: RubricScope
) -> Checklist:
    """`criteria` as a checklist, in one call at temperature 0 (see the module docstring)."""
    messages = prompt.render(criteria=criteria.strip(), scope_note=_SCOPE_NOTES[scope])
    reply: _Items = await ask(messages, prompt, ITEMS_SCHEMA, ITEMS_NAME, _Items.model_validate)
    texts = list(dict.fromkeys(item.text.strip() for item in reply.items if item.text.strip()))
    reference = {item.text.strip(): item.reference for item in reply.items}
    items = tuple(
        RubricItem(id=str(n), text=text, reference=reference[text])
        for n, text in enumerate(texts, 1)
    )
    return Checklist(
        name=name,
        scope=scope,
        items=items,
        fingerprint=checklist_fingerprint(criteria, scope, model, prompt.version, items),
        written_by=model,
        prompt_version=prompt.version,
    )


class RubricRow(BaseModel):
    """One row of a reply: the verdict on one item (for one claim, in scope "claim")."""

    claim: int | None = None
    item: int
    verdict: RubricVerdict
    quote: str = ""
    reason: str = ""


class RubricReply(BaseModel):
    """A reply on a checklist, validated against the pairs asked (`context["pairs"]`)."""

    verdicts: list[RubricRow]

    @model_validator(mode="after")
    def _every_pair_once(self, info: ValidationInfo) -> RubricReply:
        """Every pair asked (`context["pairs"]`) answered exactly once, no other."""
        asked: set[tuple[int | None, int]] = set((info.context or {}).get("pairs", ()))
        # In scope "answer" no claim is asked: a claim number the model adds means nothing.
        by_claim = any(claim is not None for claim, _ in asked)
        given = [(v.claim if by_claim else None, v.item) for v in self.verdicts]
        unknown = sorted({f"{_pair(p)}" for p in given if p not in asked})
        doubled = sorted({_pair(p) for p in given if given.count(p) > 1})
        missing = sorted(_pair(p) for p in asked - set(given))
        problems = [
            *([f"no verdict for {', '.join(missing)}"] if missing else []),
            *([f"two verdicts for {', '.join(doubled)}"] if doubled else []),
            *([f"verdicts for {', '.join(unknown)}, which were not asked"] if unknown else []),
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _pair(pair: tuple[int | None, int]) -> str:
    claim, item = pair
    return f"item {item}" if claim is None else f"claim {claim} on item {item}"


async def answer_checklist(
    ask: Ask, prompts: Mapping[str, Prompt], request: RubricRequest
) -> list[ItemVerdict]:
    """The judge's verdicts on `request`'s checklist, all in one call (module docstring)."""
    checklist = request.checklist
    by_claim = checklist.scope == "claim"
    prompt = prompts["rubric_claims" if by_claim else "rubric_answer"]
    claims = request.claims if by_claim else ()
    pairs = checklist_pairs(request)
    messages: tuple[Message, ...] = prompt.render(
        query=request.query or "(none)",
        contexts=_numbered(request.contexts) or "(none)",
        reference=(request.reference or "").strip() or "(not given)",
        items=numbered_items(checklist.items),
        answer=request.answer,
        claims="\n".join(f"{n}. {text}" for n, (_, text) in enumerate(claims, 1)),
    )
    reply: RubricReply = await ask(
        messages,
        prompt,
        VERDICTS_SCHEMA,
        VERDICTS_NAME,
        lambda data: RubricReply.model_validate(data, context={"pairs": pairs}),
    )
    return item_verdicts(request, reply.verdicts)


def checklist_pairs(request: RubricRequest) -> list[tuple[int | None, int]]:
    """The (claim number, item number) pairs a reply on `request` must answer, each once;
    in scope "answer", (None, item number)."""
    items = range(1, len(request.checklist.items) + 1)
    if request.checklist.scope != "claim":
        return [(None, item) for item in items]
    return [(claim, item) for claim in range(1, len(request.claims) + 1) for item in items]


def numbered_items(items: Sequence[RubricItem]) -> str:
    return "\n".join(f"{n}. {item.text}" for n, item in enumerate(items, 1))


def item_verdicts(request: RubricRequest, verdicts: Sequence[RubricRow]) -> list[ItemVerdict]:
    """The validated reply's rows on `request` as verdicts on its items (and claims), each
    quote looked up in the texts the judge was shown."""
    items = request.checklist.items
    by_claim = request.checklist.scope == "claim"
    claims = request.claims if by_claim else ()
    shown = (request.answer, *(t for _, t in claims), *request.contexts, request.reference or "")
    return [
        ItemVerdict(
            item_id=items[v.item - 1].id,
            claim_id=claims[v.claim - 1][0] if by_claim and v.claim is not None else None,
            verdict=v.verdict,
            quote=v.quote.strip(),
            reason=v.reason.strip(),
            quote_found=any(quote_occurs(v.quote, text) for text in shown)
            if v.quote.strip()
            else None,
        )
        for v in verdicts
    ]


async def perform_rubric(judge: RubricJudge, work: JudgeWork) -> None:
    """What a run asks of `judge` for a "rubric" piece of work, for a dry run to count: the
    checklist written where it has no items (once per judge), then answered."""
    request = work.rubric
    if request is None:
        return
    checklist = request.checklist
    if not checklist.items:
        checklist = await judge.write_checklist(checklist.name, work.criteria, checklist.scope)
    await judge.answer_checklist(request.model_copy(update={"checklist": checklist}))


def recorded_reply(name: str, prompt: str) -> tuple[dict[str, Any], int] | None:
    """A dry run's minimal valid reply to a rubric request (None for any other), and the
    tokens a model would write for it: one item per sentence of the criteria, then MET with
    a quote for every item (every claim-item pair) the request shows."""
    if name == ITEMS_NAME:
        criteria = _section(prompt, "criteria")
        found = [s for s in re.split(r"(?<=[.!?;])\s+|\n+", criteria) if s.strip()] or [criteria]
        written = [{"text": text, "reference": False} for text in found]
        return {"items": written}, sum(len(t) // 4 + ITEM_TOKENS for t in found)
    if name != VERDICTS_NAME:
        return None
    items = len(re.findall(r"^\d+\. ", _section(prompt, "items"), flags=re.M))
    claims = len(re.findall(r"^\d+\. ", _section(prompt, "claims"), flags=re.M))
    pairs = [
        {"item": n, "verdict": "MET", **({"claim": c} if c else {})}
        for c in (range(1, claims + 1) if claims else (0,))
        for n in range(1, items + 1)
    ]
    return {"verdicts": pairs}, len(pairs) * RUBRIC_VERDICT_TOKENS


def recorded_rider(prompt: str) -> tuple[list[dict[str, Any]], int]:
    """A dry run's minimal valid rubric part of a verification call with rubric items riding
    on it (`vera.judges._rubric_batch`), and the tokens a model would write for it: MET for
    every claim and item marked `EACH_CLAIM`, once (claim 0) for an item marked
    `WHOLE_ANSWER`."""
    marked = re.findall(r"^(\d+)\. (\(.*?\)) ", _section(prompt, "items"), flags=re.M)
    claims = len(re.findall(r"^\d+\. ", _section(prompt, "claims"), flags=re.M))
    rows = [
        {"claim": claim, "item": int(n), "verdict": "MET"}
        for n, mark in marked
        for claim in (range(1, claims + 1) if mark == EACH_CLAIM else (0,))
    ]
    return rows, len(rows) * RUBRIC_VERDICT_TOKENS


def _section(prompt: str, tag: str) -> str:
    opening, closing = f"<{tag}>\n", f"\n</{tag}>"
    if opening not in prompt:
        return ""
    return prompt.rsplit(opening, 1)[1].split(closing, 1)[0]


def _numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{n}] {text}" for n, text in enumerate(texts, 1))
