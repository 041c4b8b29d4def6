"""`evaluate_conversations`: conversations verified turn by turn through the same run as
`vera.evaluate`, with their conversation scores.

One run of the engine, `vera eval`'s over the same turn samples, in two passes: one over each
assistant turn (its contexts, tool results, earlier turns' ones and the user's words), one over
each turn again with only the assistant's own earlier turns as contexts, whose CONTRADICTED
verdicts are the inconsistencies (`vera.datasets.consistency_checks`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

from pydantic import BaseModel, ConfigDict

from vera._api import EvaluateOptions, plan_evaluation, run_evaluation
from vera.conversations._replay import Assistant, replay
from vera.conversations._scores import FAITHFULNESS, ConversationScore, conversation_score
from vera.datasets import read_conversations, turn_samples
from vera.judges._base import Judge
from vera.metrics._base import Metric
from vera.plan import Settings
from vera.results._builder import Report, SampleResult
from vera.run._estimate import CONSISTENCY_PASS, PassEstimate, RunEstimate, estimate_plan
from vera.types import Conversation, Sample
from vera.types._errors import ConfigError

__all__ = [
    "ConversationEstimate",
    "ConversationReport",
    "estimate_conversations",
    "evaluate_conversations",
]


class ConversationReport(BaseModel):
    """The conversations' scores, the run's report (every metric, turn by turn, and its
    conversation block) and its consistency pass's (None when no turn had an earlier
    assistant turn)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    conversations: tuple[ConversationScore, ...]
    turns: Report
    consistency: Report | None
    run_id: str | None = None
    """The turn run's id in the run history, where `history` asked for one (`vera runs`,
    `vera view`, `vera compare` read it); the consistency pass's results are not stored."""

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
    # The run checks consistency itself (a second pass over each turn against the
    # assistant's earlier turns), as `vera eval` over the same turns does.
    turn_run = run_evaluation(work.flat, work.metrics, judge, **named)
    report = turn_run.report
    check_report = turn_run.consistency
    results = _by_id(list(turn_run.results()))
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


class ConversationEstimate(BaseModel):
    """What `evaluate_conversations` would cost: its run's estimate (`turns`: both passes,
    the turns and their consistency check, as `vera eval --dry-run` counts the same data),
    and the consistency check's pass alone (None when no turn has an earlier one)."""

    model_config = ConfigDict(frozen=True)

    turns: RunEstimate
    consistency: PassEstimate | None

    @property
    def calls(self) -> int:
        """The judge calls of the run, both passes."""
        return self.turns.calls


def estimate_conversations(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    **options: Unpack[EvaluateOptions],
) -> ConversationEstimate:
    """The dry run of `evaluate_conversations`: the judge calls, tokens and cost of its
    run's two passes, counted from the same work plan, calling nothing. (A replay's
    `assistant` is the user's code, which a dry run cannot call, so it takes none.)"""
    work = _work(data, metrics, None, options)
    run = estimate_plan(*plan_evaluation(work.flat, work.metrics, judge, **options))
    check = next((p for p in run.passes if p.name == CONSISTENCY_PASS), None)
    return ConversationEstimate(turns=run, consistency=check)


@dataclass(frozen=True)
class _Work:
    conversations: list[Conversation]
    metrics: list[Metric | str]
    turns: dict[str, list[Sample]]

    @property
    def flat(self) -> list[Sample]:
        return [s for samples in self.turns.values() for s in samples]


def _work(
    data: Any,
    metrics: Sequence[Metric | str] | None,
    assistant: Assistant | None,
    options: EvaluateOptions,
) -> _Work:
    """The turn samples the run (and its dry run) reads."""
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
    work = _Work(conversations, names, turns)
    if not work.flat:
        raise ConfigError("no assistant turn to verify: every conversation lacks one")
    return work


def _by_id(results: Sequence[SampleResult]) -> dict[str, SampleResult]:
    return {r.id: r for r in results}


def _of(samples: Sequence[Sample], results: Mapping[str, SampleResult]) -> dict[str, SampleResult]:
    return {s.id: results[s.id] for s in samples if s.id in results}
