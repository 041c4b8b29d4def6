"""`generate_testset`: a test set written by a model from the user's documents, every item
checked before it is kept.

The corpus is cut by the pipelines' chunker; tasks (a category and the chunks to write from)
are drawn by `--seed`; each task is one call of the generator, through `ManagedChatModel`
(retries, limits, response cache, cost, budget), with the versioned `generate_testset` prompt.
A reply is kept only when it passes every check of `vera._generate._checks`; what fails is
counted by reason and by category. Items short of `n` are asked for again, from fresh chunks,
for a few rounds.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vera._baselines._chunking import chunk_corpus
from vera._baselines._documents import load_documents
from vera._baselines._retrieval import BM25Retriever
from vera._generate._checks import (
    DEFAULT_MAX_ANSWER_CHARS,
    DEFAULT_MAX_QUOTE_CHARS,
    Draft,
    answer_supported,
    find_answer,
    is_near_duplicate,
    missing_quote,
    normalise,
    read_draft,
    too_long,
    words,
)
from vera._generate._extractive import (
    EXTRACTIVE,
    EXTRACTIVE_MIX,
    check_extractive_mix,
    extractive_item,
)
from vera._generate._selection import Task, allocate, parse_mix, plan_tasks
from vera._plan._settings import Settings
from vera._sync import run_sync
from vera._types import Context
from vera._types._errors import JudgeError, RunStopError
from vera.judges._base import Judge
from vera.judges._prompts import Prompt, load_prompt
from vera.judges._registry import create_judge, create_managed_model
from vera.providers._base import ChatModel, ChatRequest, ProviderError
from vera.providers._cost import BudgetExceededError, merge_summaries
from vera.providers._jsonparse import try_parse_json_object
from vera.providers._managed import ManagedChatModel

GENERATOR_MAX_TOKENS = 1024
ROUNDS = 3
"""Rounds of asking: the first for `n` items, the others for what the checks turned away."""

TASKS = {
    "fact_single": "Ask about one fact stated in passage [1]; quote the sentence stating it.",
    "fact_multiple": "Ask a question whose answer needs a fact from passage [1] and a fact "
    "from passage [2]; quote the sentence of each.",
    "reasoning": "Ask a question answered by combining or applying facts of the passages "
    "(a date worked out, a condition applied); quote every sentence the answer rests on.",
    "summary": "Ask for a summary of what the passages say; answer in two or three "
    "sentences, quoting the sentence behind each.",
    "unanswerable": "Ask a question on the passages' topic that they do not answer (a detail "
    "they leave out): answer null, citations empty, and the answer a reader might wrongly "
    "expect in decoy_answer.",
    "contradiction": "Ask a question on which passage [1] and passage [2] differ or conflict; "
    "the answer states both positions, quoting each.",
}
"""VERA's instruction per category, filled into the prompt's $task."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "answer": {"type": ["string", "null"]},
        "citations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"document_id": {"type": "string"}, "quote": {"type": "string"}},
                "required": ["document_id", "quote"],
                "additionalProperties": False,
            },
        },
        "decoy_answer": {"type": ["string", "null"]},
    },
    "required": ["query", "answer", "citations", "decoy_answer"],
    "additionalProperties": False,
}


@dataclass
class GenerationResult:
    """What `generate_testset` kept, what it turned away and why, and what it spent."""

    dataset: dict[str, Any]
    """The seed layout: `name`, `documents`, `queries` (what `vera.load_dataset` reads)."""
    requested: int
    attempted: dict[str, int] = field(default_factory=dict)
    """Items asked for, by category (all rounds)."""
    kept: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, dict[str, int]] = field(default_factory=dict)
    """Reason -> category -> count."""
    usage: dict[str, Any] = field(default_factory=dict)
    """Calls, cached calls, tokens and cost: the generator's and the judge's together."""
    stopped: str | None = None
    """Why generation stopped early (the budget was spent), else None."""

    @property
    def kept_total(self) -> int:
        return sum(self.kept.values())

    @property
    def rejections(self) -> dict[str, int]:
        """Reason -> count over every category."""
        return {reason: sum(by.values()) for reason, by in self.rejected.items()}


@dataclass
class _Run:
    """The state one generation shares between its items."""

    model: ChatModel | None
    """None for the extractive generator, which calls no model (`extractive_item`)."""
    judge: Judge
    prompt: Prompt
    documents: dict[str, str]
    retriever: BM25Retriever
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
    max_quote_chars: int = DEFAULT_MAX_QUOTE_CHARS
    kept: list[Draft] = field(default_factory=list)
    rejected: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    stopped: str | None = None


def generate_testset(
    documents_dir: Path | str,
    generator: str | ChatModel,
    *,
    n: int = 100,
    mix: str | Mapping[str, float] | None = None,
    judge: str | Judge | None = None,
    seed: int = 0,
    settings: Settings | None = None,
    generator_base_url: str | None = None,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    max_quote_chars: int = DEFAULT_MAX_QUOTE_CHARS,
) -> GenerationResult:
    """Write up to `n` checked items from the documents under `documents_dir`.

    `generator` is a "PROVIDER:MODEL" spec (built as the pipelines build `--generator`, with
    the settings' retries, limits, cache and `max_cost`) or a chat model. `judge` defaults to
    the settings' judge ("offline"). The same arguments ask the same prompts in the same
    order, so a re-run is served by the response cache. An item whose answer (or decoy
    answer) is over `max_answer_chars`, or a quote over `max_quote_chars`, is rejected
    (`too_long`).
    """
    settings = settings or Settings()
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if max_answer_chars < 1 or max_quote_chars < 1:
        raise ValueError("max_answer_chars and max_quote_chars must be at least 1")
    weights = generation_mix(generator, mix)
    corpus = load_documents(documents_dir)
    model = _model(generator, settings, generator_base_url)
    the_judge = (
        create_judge(judge or settings.judge, settings) if not isinstance(judge, Judge) else judge
    )
    run = _Run(
        model=model,
        judge=the_judge,
        prompt=load_prompt("generate_testset", settings.judge_prompts_dir),
        documents={str(d.id): normalise(d.text) for d in corpus},
        retriever=BM25Retriever.from_documents(corpus),
        max_answer_chars=max_answer_chars,
        max_quote_chars=max_quote_chars,
    )
    chunks = chunk_corpus(corpus)
    attempted = run_sync(
        _rounds(run, chunks, n, weights, seed, settings.concurrency),
        inside_a_loop="generate_testset was called inside a running event loop (Jupyter, an "
        "async app); call it in a thread there: `await asyncio.to_thread(generate_testset, ...)`",
    )
    return _result(run, corpus, n, attempted)


def generation_mix(
    generator: str | ChatModel, mix: str | Mapping[str, float] | None
) -> dict[str, float]:
    """The category weights: `mix`, else the default (the extractive generator's own for it,
    which refuses a category it cannot write)."""
    extractive = isinstance(generator, str) and generator.strip().lower() == EXTRACTIVE
    if mix is None and extractive:
        return dict(EXTRACTIVE_MIX)
    weights = parse_mix(mix) if mix is None or isinstance(mix, str) else dict(mix)
    if extractive:
        check_extractive_mix(weights)
    return weights


def _model(
    generator: str | ChatModel, settings: Settings, base_url: str | None
) -> ChatModel | None:
    if isinstance(generator, str):
        if generator.strip().lower() == EXTRACTIVE:
            return None
        return create_managed_model(generator, settings, base_url=base_url)
    return generator


async def _rounds(
    run: _Run,
    chunks: Sequence[Any],
    n: int,
    weights: Mapping[str, float],
    seed: int,
    concurrency: int,
) -> Counter[str]:
    """Ask in rounds until `n` items are kept, the rounds run out or the budget is spent."""
    rng = random.Random(seed)
    attempted: Counter[str] = Counter()
    wanted = allocate(n, weights)
    limit = asyncio.Semaphore(concurrency)

    async def one(task: Task, draw: int) -> Draft | str:
        async with limit:
            return await _attempt(run, task, draw)

    for round_number in range(ROUNDS):
        have = Counter(d.category for d in run.kept)
        short = {c: k - have[c] for c, k in wanted.items() if k > have[c]}
        if not short or run.stopped:
            break
        tasks = plan_tasks(chunks, short, rng)
        attempted.update(t.category for t in tasks)
        # The round is the request's draw, so a task repeated in a later round is a new call,
        # not the cached reply that was just turned away.
        outcomes = await asyncio.gather(*(one(t, round_number) for t in tasks))
        _keep(run, tasks, outcomes)
    return attempted


def _keep(run: _Run, tasks: Sequence[Task], outcomes: Sequence[Draft | str]) -> None:
    """Keep the drafts that passed, in task order (so duplicates are decided the same way
    every run); count the rest by reason."""
    seen = [words(d.query) for d in run.kept]
    for task, outcome in zip(tasks, outcomes, strict=True):
        if isinstance(outcome, str):
            if outcome != "stopped":
                run.rejected[outcome][task.category] += 1
            continue
        if is_near_duplicate(outcome.query, seen):
            run.rejected["duplicate"][task.category] += 1
            continue
        seen.append(words(outcome.query))
        run.kept.append(outcome)


async def _attempt(run: _Run, task: Task, draw: int) -> Draft | str:
    """One item: the generator's draft if it passes every check, else the rejection reason."""
    if run.stopped:
        return "stopped"
    try:
        data = await _ask(run, task, draw)
    except BudgetExceededError as exc:
        run.stopped = str(exc)
        return "stopped"
    except RunStopError:
        raise
    except ProviderError:
        return "generator_error"
    if data is None and run.model is None:
        return "no_sentence"
    draft = read_draft(task.category, data)
    if draft is None:
        return "malformed_reply"
    if too_long(draft, max_answer_chars=run.max_answer_chars, max_quote_chars=run.max_quote_chars):
        return "too_long"
    return await _check(run, draft)


async def _check(run: _Run, draft: Draft) -> Draft | str:
    reason = missing_quote(draft, run.documents)
    if reason is not None:
        return reason
    try:
        if draft.category == "unanswerable":
            answerable = await find_answer(run.judge, run.retriever, draft)
            return "answerable" if answerable else draft
        return draft if await answer_supported(run.judge, draft) else "unsupported_answer"
    except BudgetExceededError as exc:
        run.stopped = str(exc)
        return "stopped"
    except JudgeError:
        return "judge_error"


async def _ask(run: _Run, task: Task, draw: int) -> Any:
    if run.model is None:
        return extractive_item(task, draw)
    request = ChatRequest(
        messages=task_messages(run.prompt, task),
        json_schema=SCHEMA,
        schema_name="testset_item",
        max_tokens=GENERATOR_MAX_TOKENS,
        prompt_version=run.prompt.version,
        draw=draw,
    )
    if isinstance(run.model, ManagedChatModel):
        reply = await run.model.complete(request, label="generate_testset")
    else:
        reply = await run.model.complete(request)
    return reply.data if reply.data is not None else try_parse_json_object(reply.text)


def task_messages(prompt: Prompt, task: Task) -> tuple[Any, ...]:
    """The generator's messages for one task: each passage numbered and named by document."""
    passages = "\n\n".join(
        f"[{i}] (document: {chunk.document_id})\n{chunk.text}"
        for i, chunk in enumerate(task.chunks, 1)
    )
    return prompt.render(category=task.category, task=TASKS[task.category], passages=passages)


def _result(
    run: _Run, corpus: Sequence[Context], n: int, attempted: Counter[str]
) -> GenerationResult:
    queries = [_query(i, d) for i, d in enumerate(run.kept, 1)]
    dataset = {
        "name": "generated",
        "documents": [{"id": d.id, "title": d.source or d.id, "text": d.text} for d in corpus],
        "queries": queries,
    }
    usages = [m.ledger.summary() for m in (run.model,) if isinstance(m, ManagedChatModel)]
    judged = run.judge.describe().usage
    return GenerationResult(
        dataset=dataset,
        requested=n,
        attempted=dict(attempted),
        kept=dict(Counter(d.category for d in run.kept)),
        rejected={r: dict(by) for r, by in sorted(run.rejected.items())},
        usage=merge_summaries([*usages, *([judged] if judged else [])]),
        stopped=run.stopped,
    )


def _query(index: int, draft: Draft) -> dict[str, Any]:
    return {
        "id": f"gen-q{index:03d}",
        "query": draft.query,
        "grounded_answer": draft.answer,
        "citations": [{"document_id": d, "quote": q} for d, q in draft.citations],
        "category": draft.category,
        "expected_score": 1.0,
    }
