"""`evaluate_conversations`: conversations verified turn by turn through the same run as
`vera.evaluate`, with their conversation scores.

Two runs of the engine: one over each assistant turn (its contexts, tool results, earlier
turns' ones and the user's words), one over each turn again with only the assistant's own
earlier turns as contexts, whose CONTRADICTED verdicts are the inconsistencies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack, cast

from pydantic import BaseModel, ConfigDict

from vera._api import EvaluateOptions, evaluate, plan_evaluation, run_evaluation
from vera.conversations._replay import Assistant, replay
from vera.conversations._scores import FAITHFULNESS, ConversationScore, conversation_score
from vera.datasets import consistency_samples, read_conversations, turn_samples
from vera.judges._base import Judge
from vera.metrics._base import Metric
from vera.plan import Settings
from vera.results._builder import Report, SampleResult
from vera.run._estimate import RunEstimate, estimate_plan
from vera.types import Conversation, Sample
from vera.types._errors import ConfigError

__all__ = [
    "ConversationEstimate",
    "ConversationReport",
    "estimate_conversations",
    "evaluate_conversations",
]


class ConversationReport(BaseModel):
    """The conversations' scores, the per-turn run's report (every metric, turn by turn) and
    the consistency run's (None when no turn had an earlier assistant turn)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    conversations: tuple[ConversationScore, ...]
    turns: Report
    consistency: Report | None
    run_id: str | None = None
    """The turn run's id in the run history, where `history` asked for one (`vera runs`,
    `vera view`, `vera compare` read it); the consistency run is not stored."""

    @property
    def faithful_turns(self) -> float | None:
        """The share of scored assistant turns, over every conversation, that are faithful
        and consistent (None when no turn was scored)."""
        scored = [t for c in self.conversations for t in c.turns if t.flagged is not None]
        return sum(not t.flagged for t in scored) / len(scored) if scored else None

    def turns_json(self) -> str:
        """The conversations as JSON: each one's aggregates, its turns as read, and each
        verified turn's claims with their verdicts and sources (the runs' reports are not
        repeated here)."""
        block = {
            "faithful_turns": self.faithful_turns,
            "conversations": [c.model_dump(mode="json") for c in self.conversations],
        }
        return json.dumps(block, indent=2, ensure_ascii=False)


def evaluate_conversations(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    assistant: Assistant | None = None,
    **options: Unpack[EvaluateOptions],
) -> ConversationReport:
    """Verify each conversation's assistant turns and score the conversations.

    Args:
        data: a JSON/JSONL file or bundled name ("conversations"), a `Conversation`, one
            list of OpenAI-style message dicts, or an iterable of those and conversation rows.
        metrics: the per-turn metrics (default faithfulness, which the conversation scores
            read and which is always run).
        judge: as for `vera.evaluate`.
        assistant: the system under test, for conversations to replay: called at each user
            turn with the history so far, it returns the next turn (see `replay`).
        **options: `vera.evaluate`'s options, applied to both runs. `user_facts=False`
            (`--no-user-facts`) leaves the user's words out of every turn's contexts, so a
            claim resting on them has no evidence. `history`, `reports` and `otel_endpoint`
            apply to the turn run alone: it is the run `vera eval` would make of the same data.
    """
    work = _work(data, metrics, assistant, options)
    named: EvaluateOptions = {"dataset_name": _name(data), **options}
    turn_run = run_evaluation(work.flat, work.metrics, judge, **named)
    report = turn_run.report
    checks = work.checks
    helper = _helper_options(options)
    check_report = evaluate(checks, [FAITHFULNESS], judge, **helper) if checks else None
    results = _by_id(report.samples)
    checked = _by_id(check_report.samples) if check_report else {}
    turns = work.turns
    scores = tuple(
        conversation_score(c, turns[c.id], results, _of(turns[c.id], checked))
        for c in work.conversations
    )
    return ConversationReport(
        conversations=scores, turns=report, consistency=check_report, run_id=turn_run.run_id
    )


def _name(data: Any) -> str:
    """The dataset's name in the history: the file or bundled name, as `vera eval` shows it."""
    return str(data) if isinstance(data, str | Path) else "conversations"


def _helper_options(options: EvaluateOptions) -> EvaluateOptions:
    """The consistency run's options: the turn run's, less what records or reports a run (the
    helper run measures one score of the conversations, it is no run of its own)."""
    helper = dict(options)
    for key in ("history", "reports", "otel_endpoint", "dataset_name"):
        helper.pop(key, None)
    return cast(EvaluateOptions, helper)


class ConversationEstimate(BaseModel):
    """What `evaluate_conversations` would cost: its two runs' estimates."""

    model_config = ConfigDict(frozen=True)

    turns: RunEstimate
    consistency: RunEstimate | None

    @property
    def calls(self) -> int:
        """The judge calls of both runs."""
        return self.turns.calls + (self.consistency.calls if self.consistency else 0)


def estimate_conversations(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    **options: Unpack[EvaluateOptions],
) -> ConversationEstimate:
    """The dry run of `evaluate_conversations`: the judge calls, tokens and cost of its two
    runs, counted from the same work plan, calling nothing. (A replay's `assistant` is the
    user's code, which a dry run cannot call, so it takes none.)"""
    work = _work(data, metrics, None, options)
    turns = estimate_plan(*plan_evaluation(work.flat, work.metrics, judge, **options))
    consistency = (
        estimate_plan(*plan_evaluation(work.checks, [FAITHFULNESS], judge, **options))
        if work.checks
        else None
    )
    return ConversationEstimate(turns=turns, consistency=consistency)


@dataclass(frozen=True)
class _Work:
    conversations: list[Conversation]
    metrics: list[Metric | str]
    turns: dict[str, list[Sample]]
    checks: list[Sample]

    @property
    def flat(self) -> list[Sample]:
        return [s for samples in self.turns.values() for s in samples]


def _work(
    data: Any,
    metrics: Sequence[Metric | str] | None,
    assistant: Assistant | None,
    options: EvaluateOptions,
) -> _Work:
    """The turn samples and consistency samples both runs (and their dry runs) read."""
    if options.get("pipeline") is not None:
        raise ConfigError(
            "pipeline= answers one query at a time; for conversations pass assistant=, a "
            "function from the history to the next turn"
        )
    conversations = read_conversations(data)
    if assistant is not None:
        conversations = [replay(c, assistant) for c in conversations]
    if not conversations:
        raise ConfigError("no conversations to evaluate: the data holds none")
    names = list(metrics or [FAITHFULNESS])
    if not any(getattr(m, "name", m) == FAITHFULNESS for m in names):
        names.insert(0, FAITHFULNESS)
    # Not given (None, the CLI's default): the settings' value (vera.toml, when loaded).
    settings = options.get("settings") or Settings()
    user_facts = options.get("user_facts")
    user_facts = settings.user_facts if user_facts is None else user_facts
    steps = options.get("agent_steps")
    steps = settings.agent_steps if steps is None else steps
    turns = {c.id: turn_samples(c, user_facts=user_facts, agent_steps=steps) for c in conversations}
    checks = [
        s
        for c in conversations
        for s in consistency_samples(c, user_facts=user_facts, agent_steps=steps)
    ]
    work = _Work(conversations, names, turns, checks)
    if not work.flat:
        raise ConfigError("no assistant turn to verify: every conversation lacks one")
    return work


def _by_id(results: Sequence[SampleResult]) -> dict[str, SampleResult]:
    return {r.id: r for r in results}


def _of(samples: Sequence[Sample], results: Mapping[str, SampleResult]) -> dict[str, SampleResult]:
    return {s.id: results[s.id] for s in samples if s.id in results}
