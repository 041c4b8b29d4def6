"""`vera generate --conversations --dry-run`: what simulating N scenarios of up to T user turns
would cost at most, before any call.

Each figure is the run's own request, sent nowhere: the scenario-writing calls are drawn
exactly as `simulate_conversations` draws them (same seed, same passages); each simulated-user
call renders the `simulate_user` prompt with the scenario and the passages BM25 finds for its
goal, and the conversation so far grows by a user message and an answer of a typical length per
turn; each user turn's fact check is what the judge's own `plan_calls` says an analysis takes.
A conversation makes at most T + 1 simulated-user calls (the user is asked once more after the
turn limit's last answer) and T checks, so the figures bound a run from above: one that stops
on its goal or gives up earlier costs less. The assistant is the user's own code: it is not
run, and what it spends is not counted. Cache hits cost nothing and are not subtracted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from vera._baselines._chunking import chunk_corpus
from vera._baselines._documents import load_documents
from vera._baselines._retrieval import BM25Retriever
from vera._conversations._scenarios import Scenario
from vera._conversations._simulate import (
    check_counts,
    passages_for,
    scenario_draws,
    scenarios_request,
    user_request,
)
from vera._plan._settings import Settings
from vera._run._estimate import estimated_cost
from vera._types import Context
from vera.judges._base import CallEstimate, Judge, JudgeWork, planned_calls
from vera.judges._calls import tokens
from vera.judges._prompts import Prompt, load_prompt
from vera.judges._registry import create_judge
from vera.providers._base import ChatRequest
from vera.providers._cost import PriceTable

# Typical lengths, in tokens, of what only a run can tell: a user message, the assistant's
# answer to it (the user's code), a simulated-user reply (the message, its citations and two
# flags as JSON), and one written scenario (a goal and a persona as JSON).
USER_MESSAGE_TOKENS = 40
ANSWER_TOKENS = 150
USER_REPLY_TOKENS = 100
SCENARIO_TOKENS = 50
_QUOTE_CHARS = 200
"""The stand-in quote a user turn cites, from the first passage it is shown."""


class SimulationEstimate(BaseModel):
    """Calls, tokens and dollars simulating `scenarios` conversations of at most `turns` user
    turns would take at most."""

    model_config = ConfigDict(frozen=True)

    scenarios: int
    turns: int
    judge: str
    scenario_calls: int
    """Calls that write the scenarios from the documents (none with a scenario file)."""
    simulator_calls: int
    """At most `turns` + 1 a conversation."""
    judge_calls: int
    """The fact checks of at most `turns` user turns a conversation, by the judge's count
    (none for the offline judge, which calls no model)."""
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    """None when the price of a model that would be called is unknown."""

    @property
    def calls(self) -> int:
        return self.scenario_calls + self.simulator_calls + self.judge_calls

    @property
    def least_calls(self) -> int:
        """What a run where every simulated user stops at its first reply makes."""
        return self.scenario_calls + self.scenarios


def estimate_simulation(
    scenarios: Sequence[Scenario] | int,
    simulator: str,
    *,
    documents_dir: Path | str,
    judge: str | Judge | None = None,
    turns: int = 3,
    settings: Settings | None = None,
    seed: int = 0,
    prices: PriceTable | None = None,
) -> SimulationEstimate:
    """What `simulate_conversations` with these arguments would spend at most; no call is
    made and no assistant is run. `simulator` is priced as "PROVIDER:MODEL"."""
    check_counts(scenarios, turns)
    settings = (settings or Settings()).model_copy(update={"cache": False})
    corpus = load_documents(documents_dir)
    written = CallEstimate(model=simulator)
    if isinstance(scenarios, int):
        written, scenarios = _written(corpus, scenarios, seed, settings, simulator)
    the_judge = (
        judge if isinstance(judge, Judge) else create_judge(judge or settings.judge, settings)
    )
    user = load_prompt("simulate_user", settings.judge_prompts_dir)
    retriever = BM25Retriever.from_documents(corpus)
    simulated = CallEstimate(model=simulator)
    work: list[JudgeWork] = []
    for scenario in scenarios:
        calls, checks = _conversation(user, retriever, scenario, turns)
        simulated += calls
        work += checks
    judged = planned_calls(the_judge, work)
    table = prices or PriceTable()
    costs = [
        estimated_cost(written + simulated, simulator, table),
        estimated_cost(judged, judged.model, table),
    ]
    return SimulationEstimate(
        scenarios=len(scenarios),
        turns=turns,
        judge=the_judge.spec,
        scenario_calls=written.calls,
        simulator_calls=simulated.calls,
        judge_calls=judged.calls,
        prompt_tokens=written.prompt_tokens + simulated.prompt_tokens + judged.prompt_tokens,
        completion_tokens=(
            written.completion_tokens + simulated.completion_tokens + judged.completion_tokens
        ),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )


def _written(
    corpus: Sequence[Context], wanted: int, seed: int, settings: Settings, simulator: str
) -> tuple[CallEstimate, list[Scenario]]:
    """The calls that write `wanted` scenarios from the documents, and stand-ins for them: the
    opening of a passage their call is shown as the goal, so that BM25 finds passages as a
    written goal would."""
    prompt = load_prompt("simulate_scenarios", settings.judge_prompts_dir)
    draws = scenario_draws(chunk_corpus(corpus), wanted, seed)
    written = CallEstimate(model=simulator)
    for count, chunks in draws:
        request = scenarios_request(prompt, chunks, count)
        written += _call(request, min(count * SCENARIO_TOKENS, request.max_tokens))
    stand_ins = [
        Scenario(id=f"scenario-{n}", goal=chunks[0].text[:_QUOTE_CHARS])
        for n, (count, chunks) in enumerate(draws, 1)
        for _ in range(count)
    ]
    return written, stand_ins


def _call(request: ChatRequest, reply_tokens: int) -> CallEstimate:
    sent = sum(tokens(m.content) for m in request.messages)
    return CallEstimate(calls=1, prompt_tokens=sent, completion_tokens=reply_tokens)


def _conversation(
    prompt: Prompt, retriever: BM25Retriever, scenario: Scenario, turns: int
) -> tuple[CallEstimate, list[JudgeWork]]:
    """The simulated-user calls of one conversation that runs to the turn limit, and the fact
    check of each user turn that joins it (the reply after the limit joins none)."""
    passages = passages_for(retriever, scenario.goal)
    opening = _call(user_request(prompt, scenario, passages, ""), USER_REPLY_TOKENS)
    exchange = USER_MESSAGE_TOKENS + ANSWER_TOKENS
    calls = CallEstimate()
    for turn in range(turns + 1):
        calls += opening.model_copy(
            update={"prompt_tokens": opening.prompt_tokens + turn * exchange}
        )
    # A user message states about what a quote from its first passage says.
    quote = passages.split("\n", 1)[-1][:_QUOTE_CHARS]
    check = JudgeWork(
        kind="analyse", text=quote, query=scenario.goal, contexts=(quote, scenario.text())
    )
    return calls, [check] * turns
