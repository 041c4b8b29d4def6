"""`vera generate --dry-run`: what a generation would cost, before any call.

The tasks are drawn exactly as `generate_testset` draws its first round (same seed, same
chunks), each costing one generator call with its real prompt; the judge's work is what its
own `plan_calls` says verifying an answer against the task's passages takes. That is the
figure for `n` items accepted first time. Items the checks turn away are asked for again in
later rounds, each asking at most for what is still missing, so `ROUNDS` times the first round
bounds the whole generation from above (`at_most_calls`, `at_most_cost_usd`); how close a
run comes to it depends on how many drafts pass, which only a run can tell. Cache hits cost
nothing and are not subtracted.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from vera._baselines._chunking import chunk_corpus
from vera._baselines._documents import load_documents
from vera._generate._core import GENERATOR_MAX_TOKENS, ROUNDS, generation_mix, task_messages
from vera._generate._extractive import EXTRACTIVE
from vera._generate._selection import Task, allocate, plan_tasks
from vera._plan._settings import Settings
from vera._run._estimate import estimated_cost
from vera.judges._base import CallEstimate, Judge, JudgeWork, planned_calls
from vera.judges._calls import tokens
from vera.judges._prompts import load_prompt
from vera.judges._registry import create_judge
from vera.providers._cost import PriceTable

# A reply holds a question, a short answer and one or two quoted sentences.
_REPLY_TOKENS = 150


class GenerationEstimate(BaseModel):
    """Calls, tokens and dollars a generation of `n` items would take."""

    model_config = ConfigDict(frozen=True)

    items: int
    generator_calls: int
    judge_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    """The first round's; None when the price of a model that would be called is unknown."""
    rounds: int = ROUNDS
    """The most rounds a generation asks in."""

    @property
    def calls(self) -> int:
        """The first round's calls."""
        return self.generator_calls + self.judge_calls

    @property
    def at_most_calls(self) -> int:
        """An upper bound on the whole generation's calls: every round asks at most for the
        first round's items again."""
        return self.rounds * self.calls

    @property
    def at_most_cost_usd(self) -> float | None:
        return None if self.cost_usd is None else self.rounds * self.cost_usd


def estimate_testset(
    documents_dir: Path | str,
    generator: str,
    *,
    n: int = 100,
    mix: str | Mapping[str, float] | None = None,
    judge: str | Judge | None = None,
    seed: int = 0,
    settings: Settings | None = None,
    prices: PriceTable | None = None,
) -> GenerationEstimate:
    """What `generate_testset` with these arguments would spend on its first round, and at
    most over all its rounds."""
    settings = (settings or Settings()).model_copy(update={"cache": False})
    weights = generation_mix(generator, mix)
    chunks = chunk_corpus(load_documents(documents_dir))
    tasks = plan_tasks(chunks, allocate(n, weights), random.Random(seed))
    prompt = load_prompt("generate_testset", settings.judge_prompts_dir)
    extractive = generator.strip().lower() == EXTRACTIVE
    generated = CallEstimate(model=None if extractive else generator)
    for task in tasks if not extractive else ():  # the extractive generator calls nothing
        sent = sum(tokens(m.content) for m in task_messages(prompt, task))
        generated += CallEstimate(
            calls=1,
            prompt_tokens=sent,
            completion_tokens=min(_REPLY_TOKENS, GENERATOR_MAX_TOKENS),
        )
    the_judge = (
        judge if isinstance(judge, Judge) else create_judge(judge or settings.judge, settings)
    )
    judged = planned_calls(the_judge, [_judge_work(task) for task in tasks])
    table = prices or PriceTable()
    costs = [
        estimated_cost(generated, generator, table),
        estimated_cost(judged, judged.model, table),
    ]
    return GenerationEstimate(
        items=len(tasks),
        generator_calls=generated.calls,
        judge_calls=judged.calls,
        prompt_tokens=generated.prompt_tokens + judged.prompt_tokens,
        completion_tokens=generated.completion_tokens + judged.completion_tokens,
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
    )


def _judge_work(task: Task) -> JudgeWork:
    """The answer is unknown before the call: the first passage's opening stands in for it,
    about the length of a generated answer."""
    return JudgeWork(
        kind="analyse",
        text=task.chunks[0].text[:300],
        contexts=tuple(c.text for c in task.chunks),
    )
