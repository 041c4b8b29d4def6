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
from vera._conversations._baselines import (
    BaselineConversations,
    BaselineSpec,
    baseline_assistants,
    conversation_corpus,
    paired_turns,
)
from vera._conversations._replay import Assistant, load_assistant, replay
from vera._conversations._scores import FAITHFULNESS, ConversationScore, conversation_score
from vera._plan import Settings
from vera._results import compare_paired
from vera._run import RunResult, build_components
from vera._run._estimate import CONSISTENCY_PASS, PassEstimate, RunEstimate, estimate_plan
from vera._run._experiment import plan_pipelines
from vera._types import Conversation, Sample
from vera._types._errors import ConfigError
from vera._types._report import Report, SampleResult
from vera.datasets._conversations import read_conversations, turn_samples
from vera.judges._base import Judge
from vera.metrics._base import Metric
from vera.pipelines import Pipeline


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
    baselines: dict[str, BaselineConversations] = {}
    """Each baseline's replay of the same conversations, scored and compared with the system
    (`evaluate_conversations(baselines=)`), by its name."""

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
        block: dict[str, Any] = {
            "faithful_turns": self.faithful_turns,
            "conversations": [c.model_dump(mode="json") for c in self.conversations],
        }
        if self.baselines:
            block["baselines"] = {name: b.block() for name, b in self.baselines.items()}
        return json.dumps(block, indent=2, ensure_ascii=False)


def evaluate_conversations(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    assistant: Assistant | str | None = None,
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
            turn with the history so far, it returns the next turn (see `replay`); or its
            "module:function" spec, as `vera conversations --assistant` takes it.
        **options: `vera.evaluate`'s options, applied to every run. `user_facts=False`
            (`--no-user-facts`) leaves the user's words out of every turn's contexts, so a
            claim resting on them has no evidence. `history`, `reports`, `otel_endpoint` and
            `phoenix` apply to the turn run alone: it is the run `vera eval` would make of
            the same data.
            `baselines`: systems to compare with, each replaying the same conversations:
            names (a bundled baseline, "naive-rag", built as `vera eval --baseline` builds
            it, over what the conversations retrieved and their tools returned unless
            `retrieval` names documents; or "module:function" as `load_assistant` reads it),
            or a mapping of name to an assistant or a `Pipeline`. Each is verified and
            scored like the system and compared with it turn by turn
            (`ConversationReport.baselines`). A baseline whose assistant raises fails that
            conversation's replay, which its `errors` name; the other conversations go on.
    """
    conversations = read_conversations(data)
    if isinstance(assistant, str):
        assistant = load_assistant(assistant)
    work = _work(conversations, metrics, assistant, options)
    # Built before any run: a baseline that cannot be built is refused before a call is made.
    spec: BaselineSpec = options.get("baselines") or ()
    others = baseline_assistants(spec, lambda names: _bundled(work, names, judge, options))
    named: EvaluateOptions = {"dataset_name": _name(data), **_without(options, "baselines")}
    turn_run, scores, results = _scored(work, judge, named)
    system = _System(turn_run.report, scores, results)
    compared = {
        name: _baseline(name, conversations, other, work.metrics, judge, options, system)
        for name, other in others.items()
    }
    return ConversationReport(
        conversations=scores,
        turns=turn_run.report,
        consistency=turn_run.consistency,
        run_id=turn_run.run_id,
        baselines=compared,
    )


@dataclass(frozen=True)
class _System:
    """What a baseline is compared with: the system's turn report, scores and results."""

    report: Report
    scores: tuple[ConversationScore, ...]
    results: dict[str, SampleResult]


def _scored(
    work: _Work, judge: Judge | str | None, options: EvaluateOptions
) -> tuple[RunResult, tuple[ConversationScore, ...], dict[str, SampleResult]]:
    """One run over the work's turns and its conversation scores. The run checks consistency
    itself (a second pass over each turn against the assistant's earlier turns), as `vera
    eval` over the same turns does."""
    turn_run = run_evaluation(work.flat, work.metrics, judge, **options)
    check_report = turn_run.consistency
    results = _by_id(list(turn_run.results()))
    checked = _by_id(check_report.samples) if check_report else {}
    turns = work.turns
    scores = tuple(
        conversation_score(c, turns[c.id], results, _of(turns[c.id], checked))
        for c in work.conversations
    )
    return turn_run, scores, results


def _bundled(
    work: _Work, names: Sequence[str], judge: Judge | str | None, options: EvaluateOptions
) -> dict[str, Pipeline]:
    """The bundled baselines, built as `vera eval --baseline` builds them (`plan_pipelines`:
    the run's generator, retrieval settings and judge), over the conversations' corpus unless
    the options name a documents file."""
    plan, bindings = plan_evaluation(work.flat, work.metrics, judge, **_baseline_options(options))
    components = build_components(plan, bindings)
    corpus = conversation_corpus(work.flat)
    if not corpus and plan.retrieval.documents is None:
        raise ConfigError(
            f"baseline {names[0]} retrieves from the conversations' contexts and tool results, "
            "and they hold none: give retrieval documents (--documents) or your own baseline"
        )
    return plan_pipelines(plan, components.data, components.judge, names, documents=corpus)


def _baseline_options(options: EvaluateOptions) -> EvaluateOptions:
    """The system's options for a baseline's run: not stored in the history, no reports or
    spans of its own (they are the system's), and no baselines of its own."""
    return _without(
        options, "history", "reports", "otel_endpoint", "phoenix", "mlflow", "baselines"
    )


def _without(options: EvaluateOptions, *keys: str) -> EvaluateOptions:
    return {k: v for k, v in options.items() if k not in keys}  # type: ignore[return-value]


def _baseline(
    name: str,
    conversations: Sequence[Conversation],
    assistant: Assistant,
    metrics: Sequence[Metric | str],
    judge: Judge | str | None,
    options: EvaluateOptions,
    system: _System,
) -> BaselineConversations:
    """One baseline's replay, scored as the system's turns are and compared with them."""
    replayed: list[Conversation] = []
    errors: list[str] = []
    for conversation in conversations:
        try:
            replayed.append(replay(conversation, assistant))
        except Exception as exc:
            errors.append(f"{conversation.id}: {type(exc).__name__}: {exc}")
    work = _turns(replayed, list(metrics), options)
    if not work.flat:
        return BaselineConversations(
            name=name, conversations=(), comparison=None, errors=tuple(errors)
        )
    run, scores, results = _scored(work, judge, _baseline_options(options))
    pairs = paired_turns(system.scores, scores, system.results, results)
    comparison = compare_paired(system.report, run.report, pairs)
    return BaselineConversations(
        name=name, conversations=scores, comparison=comparison, errors=tuple(errors)
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
    `assistant` is the user's code, which a dry run cannot call, so it takes none, nor
    `baselines`, refused.)"""
    if options.get("baselines"):
        raise ConfigError(
            "estimate_conversations counts the judge calls of the recorded turns; a baseline's "
            "turns exist only once it has answered (its code or generator called): drop "
            "baselines= from the estimate"
        )
    work = _work(read_conversations(data), metrics, None, options)
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
    conversations: list[Conversation],
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
    if assistant is not None:
        conversations = [replay(c, assistant) for c in conversations]
    if not conversations:
        raise ConfigError("no conversations to evaluate: the data holds none")
    work = _turns(conversations, list(metrics or [FAITHFULNESS]), options)
    if not work.flat:
        raise ConfigError("no assistant turn to verify: every conversation lacks one")
    return work


def _turns(
    conversations: list[Conversation], metrics: list[Metric | str], options: EvaluateOptions
) -> _Work:
    """The conversations' turn samples, with faithfulness among the metrics."""
    names = list(metrics)
    if not any(getattr(m, "name", m) == FAITHFULNESS for m in names):
        names.insert(0, FAITHFULNESS)
    # Not given (None, the CLI's default): the settings' value (vera.toml, when loaded).
    settings = options.get("settings") or Settings()
    user_facts = options.get("user_facts")
    user_facts = settings.user_facts if user_facts is None else user_facts
    steps = options.get("agent_steps")
    steps = settings.agent_steps if steps is None else steps
    turns = {c.id: turn_samples(c, user_facts=user_facts, agent_steps=steps) for c in conversations}
    return _Work(conversations, names, turns)


def _by_id(results: Sequence[SampleResult]) -> dict[str, SampleResult]:
    return {r.id: r for r in results}


def _of(samples: Sequence[Sample], results: Mapping[str, SampleResult]) -> dict[str, SampleResult]:
    return {s.id: results[s.id] for s in samples if s.id in results}
