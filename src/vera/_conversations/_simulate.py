"""`simulate_conversations`: conversation test sets written by a simulated user talking to the
user's own assistant, every user turn checked before it is kept.

For each scenario (a goal and a persona, with facts the user knows) a model plays the user, one
call per user turn, with the versioned `simulate_user` prompt and the passages BM25 finds for the
goal; the assistant answers each turn. The conversation stops when the simulated user says the
goal is reached or gives up (fields of its structured reply), or at the turn limit. Every fact
a user turn states must come from the documents or the scenario: its quotes are looked up
(`missing_quote`, as `vera generate` does) and the judge must find each claim of the message
fully supported by them; a turn that invents a fact is dropped, counted, and ends the
conversation. Each conversation is written as a row VERA's conversation reader reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vera._baselines._chunking import Chunk, chunk_corpus
from vera._baselines._documents import load_documents
from vera._baselines._retrieval import BM25Retriever
from vera._conversations._scenarios import Scenario, scenario_from
from vera._generate._checks import Draft, missing_quote, normalise
from vera._plan._settings import Settings
from vera._sync import run_sync
from vera._types import Verdict
from vera._types._conversations import Role, Turn
from vera._types._errors import ConfigError, DatasetRowError, JudgeError
from vera.judges._base import Judge
from vera.judges._prompts import Prompt, load_prompt
from vera.judges._registry import create_judge, create_managed_model
from vera.providers._base import ChatModel, ChatRequest, ProviderError
from vera.providers._cost import BudgetExceededError, merge_summaries
from vera.providers._jsonparse import try_parse_json_object
from vera.providers._managed import ManagedChatModel

ConversationAssistant = Callable[[Sequence[Turn]], "Turn | str | Awaitable[Turn | str]"]
"""The user's assistant, as `vera conversations --assistant` loads it: the history in, the next
turn out (a `Turn` or its text), from a plain or an async function."""

SCENARIO_SOURCE = "scenario"
"""The document id a simulated user cites for a fact of its scenario."""

STOP_REASONS = {
    "goal_reached": "the simulated user said its goal was reached",
    "gave_up": "the simulated user gave up (the assistant could not help)",
    "turn_limit": "the conversation reached --turns user turns",
    "invented_fact": "a user turn stated a fact neither the documents nor the scenario give; "
    "the turn was dropped",
    "malformed_reply": "the simulated user's reply was not JSON of the expected shape",
    "simulator_error": "the simulated user's call failed after its retries",
    "judge_error": "the judge failed on a user turn",
    "stopped": "the budget was spent",
}
"""Every reason a simulated conversation ends, and what it means."""

USER_MAX_TOKENS = 512
SCENARIOS_PER_CALL = 10
SCENARIO_PASSAGES = 4
"""Passages (drawn by the seed) each scenario-writing call is shown."""
PASSAGES = 3
"""Passages (BM25 on the goal) the simulated user is shown."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string"},
        "citations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"document_id": {"type": "string"}, "quote": {"type": "string"}},
                "required": ["document_id", "quote"],
                "additionalProperties": False,
            },
        },
        "goal_reached": {"type": "boolean"},
        "give_up": {"type": "boolean"},
    },
    "required": ["message", "citations", "goal_reached", "give_up"],
    "additionalProperties": False,
}


SCENARIOS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "scenarios": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"goal": {"type": "string"}, "persona": {"type": "string"}},
                "required": ["goal", "persona"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["scenarios"],
    "additionalProperties": False,
}


@dataclass
class SimulationResult:
    """What `simulate_conversations` wrote, why each conversation stopped, and what it spent."""

    conversations: list[dict[str, Any]]
    """Rows in VERA's conversation format (`turns`), stop reason and scenario in `metadata`."""
    scenarios: int
    stops: dict[str, int] = field(default_factory=dict)
    invented_turns: int = 0
    """User turns dropped because they stated a fact neither the documents nor the scenario
    give."""
    empty: int = 0
    """Conversations not written: they ended before one user turn was answered."""
    scenarios_dropped: int = 0
    """Scenarios the model was asked to write from the documents that it did not write well
    (a reply or an entry of the wrong shape, or a failed call)."""
    usage: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None


@dataclass
class _Drafting:
    """What writing scenarios from the documents needs, and what it turned away."""

    prompt: Prompt
    chunks: Sequence[Chunk]
    dropped: int = 0
    """Scenarios asked for and not written: a reply or an entry of the wrong shape, a call
    that failed."""


@dataclass
class _Run:
    """The state the conversations of one simulation share."""

    model: ChatModel
    judge: Judge
    prompt: Prompt
    documents: dict[str, str]
    """Document id -> normalised text (what `missing_quote` looks quotes up in)."""
    retriever: BM25Retriever
    assistant: ConversationAssistant
    turns: int
    invented: int = 0
    stopped: str | None = None
    drafting: _Drafting | None = None
    """Set when the scenarios are written from the documents rather than given."""


@dataclass
class _Talk:
    """One conversation as it goes: its turns, and why it stopped."""

    scenario: Scenario
    turns: list[Turn] = field(default_factory=list)
    stop: str | None = None


def simulate_conversations(
    scenarios: Sequence[Scenario] | int,
    assistant: ConversationAssistant,
    simulator: str | ChatModel,
    *,
    documents_dir: Path | str,
    judge: str | Judge | None = None,
    turns: int = 3,
    settings: Settings | None = None,
    simulator_base_url: str | None = None,
    seed: int = 0,
) -> SimulationResult:
    """One conversation per scenario between a simulated user (`simulator`, a "PROVIDER:MODEL"
    spec built with the settings' retries, cache and `max_cost`, or a chat model) and
    `assistant`, at most `turns` user turns each; each user turn is checked against the
    documents under `documents_dir` and the scenario by `judge` (default: the settings').

    `scenarios` as a number: that many are written by `simulator` from the documents first
    (the `simulate_scenarios` prompt, up to ten a call, from passages drawn by `seed`)."""
    settings = settings or Settings()
    check_counts(scenarios, turns)
    corpus = load_documents(documents_dir)
    model = (
        create_managed_model(simulator, settings, base_url=simulator_base_url)
        if isinstance(simulator, str)
        else simulator
    )
    the_judge = (
        judge if isinstance(judge, Judge) else create_judge(judge or settings.judge, settings)
    )
    run = _Run(
        model=model,
        judge=the_judge,
        prompt=load_prompt("simulate_user", settings.judge_prompts_dir),
        documents={str(d.id): normalise(d.text) for d in corpus},
        retriever=BM25Retriever.from_documents(corpus),
        assistant=assistant,
        turns=turns,
    )
    if isinstance(scenarios, int):
        run.drafting = _Drafting(
            load_prompt("simulate_scenarios", settings.judge_prompts_dir), chunk_corpus(corpus)
        )
    talks = run_sync(
        _all(run, scenarios, settings.concurrency, seed),
        inside_a_loop="simulate_conversations was called inside a running event loop; call it "
        "in a thread there: `await asyncio.to_thread(simulate_conversations, ...)`",
    )
    return _result(run, talks)


def check_counts(scenarios: Sequence[Scenario] | int, turns: int) -> None:
    """`ValueError` for a turn limit or a number of scenarios below one."""
    if turns < 1:
        raise ValueError(f"turns must be at least 1, got {turns}")
    if isinstance(scenarios, int) and scenarios < 1:
        raise ValueError(f"the number of scenarios must be at least 1, got {scenarios}")


async def _all(
    run: _Run, scenarios: Sequence[Scenario] | int, concurrency: int, seed: int
) -> list[_Talk]:
    limit = asyncio.Semaphore(concurrency)
    if isinstance(scenarios, int):
        scenarios = await _write_scenarios(run, scenarios, seed)

    async def one(scenario: Scenario) -> _Talk:
        async with limit:
            return await _talk(run, scenario)

    return list(await asyncio.gather(*(one(s) for s in scenarios)))


async def _talk(run: _Run, scenario: Scenario) -> _Talk:
    """Turns until the simulated user stops, the turn limit is reached, or a check fails.
    After the last allowed answer the user is asked once more, so a conversation that met its
    goal on its last turn says so rather than 'turn_limit'."""
    talk = _Talk(scenario)
    passages = passages_for(run.retriever, scenario.goal)
    while talk.stop is None:
        last = sum(t.role is Role.USER for t in talk.turns) >= run.turns
        reply = await _user_turn(run, talk, passages, closing=last)
        if isinstance(reply, str):
            talk.stop = reply
        elif talk.turns and reply["goal_reached"]:
            talk.stop = "goal_reached"
        elif reply["give_up"]:
            talk.stop = "gave_up"
        elif last:
            talk.stop = "turn_limit"
        else:
            talk.turns.append(Turn(role=Role.USER, content=reply["message"]))
            talk.turns.append(await _answer(run.assistant, talk.turns, scenario.id))
    return talk


async def _user_turn(
    run: _Run, talk: _Talk, passages: str, *, closing: bool
) -> dict[str, Any] | str:
    """The simulated user's reply, checked where its message joins the conversation, or the
    reason the conversation stops. `closing`: the turn limit is reached, so the reply only
    says whether the goal was met."""
    if run.stopped:
        return "stopped"
    try:
        data = await _ask(run, talk, passages)
    except BudgetExceededError as exc:
        run.stopped = str(exc)
        return "stopped"
    except ProviderError:
        return "simulator_error"
    if not _well_formed(data):
        return "malformed_reply"
    if closing or data["give_up"] or (talk.turns and data["goal_reached"]):
        return dict(data)  # a closing line: it joins no conversation, so nothing to check
    try:
        invented = await _invents(run, talk.scenario, data)
    except BudgetExceededError as exc:
        run.stopped = str(exc)
        return "stopped"
    except JudgeError:
        return "judge_error"
    if invented:
        run.invented += 1
        return "invented_fact"
    return dict(data)


def _well_formed(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    message, citations = data.get("message"), data.get("citations")
    if not isinstance(message, str) or not message.strip() or not isinstance(citations, list):
        return False
    flags = (data.get("goal_reached"), data.get("give_up"))
    cited = all(
        isinstance(c, dict)
        and isinstance(c.get("document_id"), str)
        and isinstance(c.get("quote"), str)
        for c in citations
    )
    return cited and all(isinstance(flag, bool) for flag in flags)


async def _invents(run: _Run, scenario: Scenario, data: dict[str, Any]) -> bool:
    """Whether the message states a fact neither the documents nor the scenario give: a
    quote not found where it says, or a claim the judge does not find fully supported by the
    quotes and the scenario (a plain question states no claim)."""
    known = {**run.documents, SCENARIO_SOURCE: normalise(scenario.text())}
    citations = tuple((str(c["document_id"]).strip(), str(c["quote"])) for c in data["citations"])
    cited = Draft("user_turn", data["message"], data["message"], citations)
    if missing_quote(cited, known) is not None:
        return True
    evidence = [quote for _, quote in citations] + [scenario.text()]
    _, verdicts = await run.judge.analyse(data["message"], evidence, query=scenario.goal)
    return any(v.verdict is not Verdict.FULLY_SUPPORTED for v in verdicts)


def user_request(
    prompt: Prompt, scenario: Scenario, passages: str, conversation: str
) -> ChatRequest:
    """The simulated user's call for its next turn, `conversation` the turns so far."""
    return ChatRequest(
        messages=prompt.render(
            scenario=scenario.text(), passages=passages, conversation=conversation
        ),
        json_schema=SCHEMA,
        schema_name="simulated_user_turn",
        max_tokens=USER_MAX_TOKENS,
        prompt_version=prompt.version,
    )


async def _ask(run: _Run, talk: _Talk, passages: str) -> Any:
    conversation = "\n\n".join(f"{t.role.value}: {t.content}" for t in talk.turns)
    request = user_request(run.prompt, talk.scenario, passages, conversation)
    if isinstance(run.model, ManagedChatModel):
        reply = await run.model.complete(request, label="simulate_user")
    else:
        reply = await run.model.complete(request)
    return reply.data if reply.data is not None else try_parse_json_object(reply.text)


def passages_for(retriever: BM25Retriever, goal: str) -> str:
    """The passages the simulated user of `goal` is shown: what BM25 finds for the goal."""
    found = retriever.search(goal, top_k=PASSAGES)
    return "\n\n".join(
        f"[{i}] (document: {scored.chunk.document_id})\n{scored.chunk.text}"
        for i, scored in enumerate(found, 1)
    )


async def _answer(assistant: ConversationAssistant, history: Sequence[Turn], name: str) -> Turn:
    """The assistant's next turn: an async assistant awaited, a plain one run in a thread (it
    may block on its own model calls)."""
    shown = tuple(history)
    if inspect.iscoroutinefunction(assistant):
        answer = await assistant(shown)
    else:
        answer = await asyncio.to_thread(assistant, shown)
        if inspect.isawaitable(answer):
            answer = await answer
    if isinstance(answer, str):
        return Turn(role=Role.ASSISTANT, content=answer)
    if isinstance(answer, Turn) and answer.role is Role.ASSISTANT:
        return answer
    raise ConfigError(
        f"the assistant returned {type(answer).__name__} in scenario {name!r} after turn "
        f"{len(shown)}; expected a str or an assistant Turn"
    )


def _result(run: _Run, talks: Sequence[_Talk]) -> SimulationResult:
    rows = [_row(talk) for talk in talks if talk.turns]
    usages = [m.ledger.summary() for m in (run.model,) if isinstance(m, ManagedChatModel)]
    judged = run.judge.describe().usage
    return SimulationResult(
        conversations=rows,
        scenarios=len(talks),
        stops=dict(Counter(talk.stop or "stopped" for talk in talks)),
        invented_turns=run.invented,
        empty=len(talks) - len(rows),
        scenarios_dropped=run.drafting.dropped if run.drafting else 0,
        usage=merge_summaries([*usages, *([judged] if judged else [])]),
        stopped=run.stopped,
    )


def _row(talk: _Talk) -> dict[str, Any]:
    """The conversation in VERA's `turns` format: an assistant turn keeps its contexts, and
    its tool results as DeepEval's `tools_called` (the reader's form for results on a turn)."""
    turns: list[dict[str, Any]] = []
    for turn in talk.turns:
        row: dict[str, Any] = {"role": turn.role.value, "content": turn.content}
        if turn.contexts:
            row["contexts"] = [c.model_dump(mode="json", exclude_none=True) for c in turn.contexts]
        if turn.tool_results:
            row["tools_called"] = [
                {"name": r.tool_name or "tool", "output": r.text} for r in turn.tool_results
            ]
        turns.append(row)
    metadata = {"stop_reason": talk.stop, "scenario": talk.scenario.as_dict()}
    return {
        "id": f"sim-{talk.scenario.id}",
        "category": "simulated",
        "metadata": metadata,
        "turns": turns,
    }


def _entry(_field: str | None) -> str:
    return "entry"  # a written scenario has no line to name


async def _write_scenarios(run: _Run, wanted: int, seed: int) -> list[Scenario]:
    """`wanted` scenarios written by the model from the documents, up to ten a call, each call
    from passages drawn by `seed`; what is not written well is counted, not kept."""
    assert run.drafting is not None
    draws = scenario_draws(run.drafting.chunks, wanted, seed)
    replies = await asyncio.gather(*(_ask_scenarios(run, c, k) for k, c in draws))
    scenarios: list[Scenario] = []
    for (count, _), entries in zip(draws, replies, strict=True):
        for entry in entries[:count]:
            with contextlib.suppress(DatasetRowError):  # an entry of the wrong shape
                scenario = scenario_from(entry, Path("<reply>"), _entry, len(scenarios) + 1)
                scenarios.append(scenario)
    run.drafting.dropped = wanted - len(scenarios)
    return scenarios


def scenario_draws(
    chunks: Sequence[Chunk], wanted: int, seed: int
) -> list[tuple[int, list[Chunk]]]:
    """The scenario-writing calls for `wanted` scenarios: how many each asks for (up to ten),
    and the passages it is shown, drawn by `seed`."""
    rng = random.Random(seed)
    counts = [min(SCENARIOS_PER_CALL, wanted - s) for s in range(0, wanted, SCENARIOS_PER_CALL)]
    return [(k, rng.sample(list(chunks), min(SCENARIO_PASSAGES, len(chunks)))) for k in counts]


def scenarios_request(prompt: Prompt, chunks: Sequence[Chunk], count: int) -> ChatRequest:
    """One call that writes `count` scenarios from `chunks`."""
    passages = "\n\n".join(
        f"[{i}] (document: {chunk.document_id})\n{chunk.text}" for i, chunk in enumerate(chunks, 1)
    )
    return ChatRequest(
        messages=prompt.render(count=str(count), passages=passages),
        json_schema=SCENARIOS_SCHEMA,
        schema_name="scenarios",
        max_tokens=USER_MAX_TOKENS * 2,
        prompt_version=prompt.version,
    )


async def _ask_scenarios(run: _Run, chunks: Sequence[Chunk], count: int) -> list[Any]:
    """The entries of one scenario-writing reply; none when the call fails or the reply has
    the wrong shape."""
    assert run.drafting is not None
    request = scenarios_request(run.drafting.prompt, chunks, count)
    try:
        if isinstance(run.model, ManagedChatModel):
            reply = await run.model.complete(request, label="simulate_scenarios")
        else:
            reply = await run.model.complete(request)
    except BudgetExceededError as exc:
        run.stopped = str(exc)
        return []
    except ProviderError:
        return []
    data = reply.data if reply.data is not None else try_parse_json_object(reply.text)
    entries = data.get("scenarios") if isinstance(data, dict) else None
    return entries if isinstance(entries, list) else []
