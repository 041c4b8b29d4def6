"""How many calls, and about how many tokens, an LLM judge spends on a piece of work.

The judge's own code counts them: `count_calls` runs a copy of the judge over the work against
a `RecordingChatModel`, which records each request and answers it with the smallest valid
reply for the schema asked. So the dry run, and a cascade counting the calls it saved, see
exactly the calls a run makes (modes, draws, batches, truths asked once per context set), with
no second description of the judge to keep in step. Prompt tokens are the requests' own text;
completion tokens are estimated from what a model writes per claim, rating or fact. Tokens
are counted at four characters each.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from vera._types import Claim
from vera._types._turns import GROUP_KEY, GROUP_SIZE_KEY
from vera.judges._base import CallEstimate, JudgeWork
from vera.judges._offline._claims import extract_claims as split_claims
from vera.judges._replies import (
    COMPACT_SINGLE_CALL_SCHEMA,
    EXTRACTION_SCHEMA,
)
from vera.judges._rubric import perform_rubric, recorded_reply, recorded_rider
from vera.judges._rubric_batch import JOINT_NAME, RUBRIC_KEY
from vera.judges._turns import turn_group
from vera.providers._base import ChatRequest, ChatResponse, Usage
from vera.providers._managed import CHARS_PER_TOKEN

if TYPE_CHECKING:
    from vera.judges._llm import LLMJudge

T = TypeVar("T")

# Tokens a model writes per claim beyond the answer's own words: the quotes around a claim in
# the extraction's list, and a lean verdict (a cited sentence id, a few words of reason for a
# partial or contradicted one; measured at about 21 in benchmarks/llm_judges). The compact
# prompts write less: a claim by reference is its number, a verdict a row [1, "F", 7] (about
# 3 and 10 tokens a claim, measured there).
EXTRACTION_TOKENS_PER_CLAIM = 4
VERDICT_TOKENS_PER_CLAIM = 22
REFERENCE_TOKENS_PER_CLAIM = 3
COMPACT_VERDICT_TOKENS_PER_CLAIM = 10
RATING_TOKENS = 25
# A matrix row lists only the contexts that address its claim, rarely more than one or two of
# them: a row's number and brackets, and about one verdict with a copied quote and a reason.
QUOTED_VERDICT_TOKENS = 45
MATRIX_ROW_TOKENS = 8 + QUOTED_VERDICT_TOKENS


def tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


class RecordingChatModel:
    """A chat model that calls nothing: it records each request and answers with a minimal
    valid reply for the schema asked (no evidence for every claim, every text relevant, each
    context's facts the context itself), so a judge runs its whole path of calls at no cost.

    `work` is the piece of work being run: an extraction lists its claims (else the offline
    splitter's, of the answer sent), and the numbered replies cover what the request shows
    or the work plans, whichever is more (the judge drops numbers it did not ask).
    """

    def __init__(self, provider: str, model: str) -> None:
        self._provider = provider
        self._model = model
        self.work = JudgeWork(kind="extract")
        self.requests: list[ChatRequest] = []
        self.completion_tokens = 0

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return self._model

    @property
    def prompt_tokens(self) -> int:
        return sum(tokens(m.content) for r in self.requests for m in r.messages)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        data, written = self._reply(request)
        self.completion_tokens += written
        return ChatResponse(text="", data=data, usage=Usage(), model=self._model)

    def _reply(self, request: ChatRequest) -> tuple[dict[str, Any], int]:
        """The reply's JSON and the tokens a model would write for it."""
        asked = request.messages[-1].content
        name = request.schema_name
        rubric = recorded_reply(name, asked)
        if rubric is not None:
            return rubric
        if name == JOINT_NAME:
            # The verdicts on the claims, and the rubric's verdicts under their own key.
            verdicts, written = self._verdicts(request, asked)
            rows, more = recorded_rider(asked)
            return {**verdicts, RUBRIC_KEY: rows}, written + more
        if name == "claims":
            return self._claims(request)
        if name == "turns":
            return _turn_claims(asked)
        if name == "truths":
            # At most, the facts restate the contexts: the verifications after them are
            # priced with texts as long as the contexts themselves.
            facts = [{"context": n, "text": t} for n, t in enumerate(self.work.contexts, 1)]
            return {"truths": facts}, sum(tokens(t) + 2 for t in self.work.contexts)
        if name == "ratings":
            shown, most = _numbered_items(asked, "texts", len(self.work.texts))
            ratings = [{"text": n, "relevance": "RELEVANT"} for n in range(1, most + 1)]
            return {"ratings": ratings}, shown * RATING_TOKENS
        if name == "matrix":
            shown, most = _numbered_items(asked, "claims", len(self.work.claims))
            rows = [{"claim": n, "contexts": []} for n in range(1, most + 1)]
            return {"claims": rows}, shown * MATRIX_ROW_TOKENS
        return self._verdicts(request, asked)

    def _verdicts(self, request: ChatRequest, asked: str) -> tuple[dict[str, Any], int]:
        """A verification's reply: no evidence for every claim the request shows."""
        # A group's turns share one verification (verify_turns): the request shows all their
        # claims, while `work` is one turn's.
        joint = request.prompt_version.startswith("verify_turns")
        shown, most = _numbered_items(asked, "claims", 0 if joint else len(self.work.claims))
        verdicts = [{"claim": n, "verdict": "NO_EVIDENCE"} for n in range(1, most + 1)]
        # Compact rows under "v" (the bundled verify_claims, alone or with rubric items).
        compact = "v" in (request.json_schema or {}).get("properties", {})
        per_claim = COMPACT_VERDICT_TOKENS_PER_CLAIM if compact else VERDICT_TOKENS_PER_CLAIM
        return {"verdicts": verdicts}, shown * per_claim

    def _claims(self, request: ChatRequest) -> tuple[dict[str, Any], int]:
        work = self.work
        shown = _section(request.messages[-1].content, "answer") or ""
        numbered = re.match(r"1 ", shown) is not None  # claims by reference
        plain = " ".join(re.sub(r"^\d+ ", "", line) for line in shown.splitlines())
        # A turn judged alone after its group left asks for itself while `work` is the last
        # turn started: the answer the request shows is the one to split.
        mine = not plain.strip() or plain.split() == work.text.split()
        answer = (work.text if mine else plain) or plain
        texts = (work.claims if mine else ()) or tuple(c.text for c in split_claims(answer))
        # Single-call mode: claims with verdicts (every schema but the extraction's).
        judged = request.json_schema != EXTRACTION_SCHEMA
        verdict = {"verdict": "NO_EVIDENCE"} if judged else {}
        claims = [{"number": n, "text": t, **verdict} for n, t in enumerate(texts, start=1)]
        if numbered:
            compact = request.json_schema == COMPACT_SINGLE_CALL_SCHEMA
            per_claim = REFERENCE_TOKENS_PER_CLAIM + (
                (COMPACT_VERDICT_TOKENS_PER_CLAIM if compact else VERDICT_TOKENS_PER_CLAIM)
                if judged
                else 0
            )
            return {"claims": claims}, len(texts) * per_claim
        per_claim = EXTRACTION_TOKENS_PER_CLAIM + (VERDICT_TOKENS_PER_CLAIM if judged else 0)
        return {"claims": claims}, tokens(answer) + len(texts) * per_claim


def _turn_claims(prompt: str) -> tuple[dict[str, Any], int]:
    """The reply to the turns of one conversation asked together (single_call_turns): each
    turn's answer, in the order the prompt shows them, split as the offline judge splits it."""
    turns: list[dict[str, Any]] = []
    written = 0
    per_claim = EXTRACTION_TOKENS_PER_CLAIM + VERDICT_TOKENS_PER_CLAIM
    answers = re.findall(r"^<answer>\n(.*?)\n</answer>$", prompt, flags=re.M | re.S)
    for number, answer in enumerate(answers, start=1):
        texts = [c.text for c in split_claims(answer)]
        claims = [{"text": text, "verdict": "NO_EVIDENCE"} for text in texts]
        turns.append({"turn": number, "claims": claims})
        written += tokens(answer) + len(texts) * per_claim
    return {"turns": turns}, written


def _section(prompt: str, tag: str) -> str | None:
    """The data between `<tag>` and `</tag>` in a prompt; None where the prompt has no such
    tags (a prompt of your own)."""
    opening, closing = f"<{tag}>\n", f"\n</{tag}>"
    if opening not in prompt or closing not in prompt:
        return None
    return prompt.rsplit(opening, 1)[1].split(closing, 1)[0]


def _numbered_items(prompt: str, tag: str, planned: int) -> tuple[int, int]:
    """How many numbered items ("1. ", "[1] ") a request shows in its `tag` section (the
    work's `planned` count where it cannot tell), and how many the reply answers: enough for
    both, as the judge drops numbers it did not ask."""
    section = _section(prompt, tag)
    found = len(re.findall(r"^(?:\d+\. |\[\d+\] )", section, flags=re.M)) if section else 0
    shown = min(found, planned) if found and planned else found or planned
    return shown, max(found, planned)


async def _perform(judge: LLMJudge, work: JudgeWork) -> None:
    """What the run asks of the judge for `work`."""
    query = work.query or None
    claims = [Claim(id=f"c{n}", text=text) for n, text in enumerate(work.claims, start=1)]
    group = turn_group({GROUP_KEY: work.group, GROUP_SIZE_KEY: work.group_size})
    if work.kind == "analyse" and group is not None:
        await judge.analyse_turn(work.text, work.contexts, query=query, group=group)
    elif work.kind == "analyse" and work.riders and judge.rides_rubrics:
        await _perform_riding(judge, work)
    elif work.kind == "analyse":
        await judge.analyse(work.text, work.contexts, query=query)
        for rider in work.riders:
            await perform_rubric(judge, rider)
    elif work.kind == "extract":
        await judge.extract_claims(work.text, query=query)
    elif work.kind == "verify":
        if claims:
            await judge.verify_claims(claims, work.contexts)
    elif work.kind == "verify_matrix":
        await judge.verify_matrix(claims, work.contexts)
    elif work.kind == "rubric":
        await perform_rubric(judge, work)
    elif work.texts:
        await judge.rate_relevance(work.query, work.texts)


async def _perform_riding(judge: LLMJudge, work: JudgeWork) -> None:
    """An analysis with the rubric work riding on it (`JudgeWork.riders`), as the run asks
    it of a judge that rides rubrics: each checklist written first where it has no items."""
    requests = []
    for rider in work.riders:
        request = rider.rubric
        if request is None:
            continue
        checklist = request.checklist
        if not checklist.items:
            checklist = await judge.write_checklist(checklist.name, rider.criteria, checklist.scope)
        requests.append(request.model_copy(update={"checklist": checklist}))
    query = work.query or None
    await judge.analyse_with_rubrics(work.text, work.contexts, query=query, rubrics=requests)


def count_calls(judge: LLMJudge, work: Sequence[JudgeWork]) -> CallEstimate:
    """The calls and tokens `judge` makes for `work`, counted by running a copy of it against
    a `RecordingChatModel`; what it remembers across samples (truths) it remembers here too."""
    recorder = RecordingChatModel(judge.model.provider, judge.model.model)
    twin = judge.replica(recorder)

    async def perform(item: JudgeWork) -> None:
        # Each piece sees its own work: the recorder answers from it, so a group's turns,
        # which wait for each other, are started one by one and each sets it first.
        recorder.work = item
        await _perform(twin, item)

    async def run_all() -> None:
        # Only a judge that holds a group's turns for each other needs them concurrently; the
        # others answer each piece from `recorder.work`, so one piece at a time.
        groups = _groups(work) if twin.batches_turns else [[item] for item in work]
        for together in groups:
            tasks = [asyncio.ensure_future(perform(item)) for item in together]
            await asyncio.gather(*tasks)

    _run(run_all())
    return CallEstimate(
        calls=len(recorder.requests),
        prompt_tokens=recorder.prompt_tokens,
        completion_tokens=recorder.completion_tokens,
        model=judge.spec,
    )


def _groups(work: Sequence[JudgeWork]) -> list[list[JudgeWork]]:
    """`work` in order, the turns of one group together where the first of them is (the run
    does them concurrently, and they wait for each other); every other piece alone."""
    out: dict[object, list[JudgeWork]] = {}
    for position, item in enumerate(work):
        out.setdefault(item.group or position, []).append(item)
    return list(out.values())


def _run(job: Coroutine[Any, Any, T]) -> T:
    """`job` to its end from synchronous code, inside a running event loop too (a cascade
    counts its calls while it judges): then on a thread of its own, as a loop cannot be nested."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(job)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, job).result()
