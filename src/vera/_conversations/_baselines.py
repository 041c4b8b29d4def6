"""Baselines over conversations: each replays the same conversations (`replay`), is verified
and scored like the system, and is compared with it turn by turn (`compare_paired`).

A turn of the system and a turn of a baseline are paired by conversation and by the user turn
they answer: a replay drops the recorded tool messages, so the same answer may sit at another
position (and so another sample id) in the recorded conversation than in the replayed one.
Where both are replays, the two keys name the same turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vera._baselines import BASELINES
from vera._conversations._replay import Assistant, load_assistant, pipeline_assistant
from vera._conversations._scores import ConversationScore
from vera._results import RunComparison
from vera._types import Context, Sample
from vera._types._baselines import MetricComparison
from vera._types._conversations import SOURCE_KIND_KEY, Role, SourceKind
from vera._types._errors import ConfigError
from vera._types._report import SampleResult
from vera.pipelines import Pipeline

BaselineSpec = Mapping[str, "Assistant | Pipeline"] | Sequence[str]
"""`evaluate_conversations(baselines=)`: names ("naive-rag", "module:function"), or a mapping
of name to an assistant or a `Pipeline`."""

_CORPUS_KINDS = frozenset({SourceKind.RETRIEVED.value, SourceKind.TOOL.value})


class BaselineConversations(BaseModel):
    """One baseline's replay of the conversations: its conversation scores, the paired
    comparison of its turns with the system's (system minus baseline, per metric), and the
    conversations it could not replay (its assistant raised), each naming why."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    conversations: tuple[ConversationScore, ...]
    comparison: RunComparison | None
    """None when no turn of the baseline was run (every replay failed)."""
    errors: tuple[str, ...] = Field(default=())

    @property
    def faithful_turns(self) -> float | None:
        """The share of the baseline's scored turns that are faithful and consistent."""
        scored = [t for c in self.conversations for t in c.turns if t.flagged is not None]
        return sum(not t.flagged for t in scored) / len(scored) if scored else None

    @property
    def checked_claims(self) -> int:
        return sum(c.checked_claims for c in self.conversations)

    @property
    def consistency(self) -> float | None:
        """The share of checked claims, over every conversation, that contradict none of the
        baseline's own earlier turns (None when none was checked)."""
        claims = self.checked_claims
        contradicting = sum(len(t.inconsistent) for c in self.conversations for t in c.turns)
        return 1 - contradicting / claims if claims else None

    @property
    def scored_turns(self) -> int:
        return sum(len(c.turns) - c.unscored_turns for c in self.conversations)

    @property
    def unscored_turns(self) -> int:
        return sum(c.unscored_turns for c in self.conversations)

    @property
    def incomplete(self) -> str | None:
        """Why the baseline measured less than asked (a replay that failed, a turn not
        scored), None when it measured every turn."""
        if not self.errors and not self.unscored_turns and self.scored_turns:
            return None
        why = [f"{self.scored_turns} turn(s) scored"]
        if self.unscored_turns:
            why.append(f"{self.unscored_turns} not scored")
        if self.errors:
            why.append(f"{len(self.errors)} conversation(s) failed to replay ({self.errors[0]})")
        return f"baseline {self.name}: " + ", ".join(why)

    def block(self) -> dict[str, Any]:
        """The baseline in `turns.json`: its aggregates, the paired comparison per metric,
        its errors and its conversations."""
        metrics: dict[str, MetricComparison] = self.comparison.metrics if self.comparison else {}
        return {
            "faithful_turns": self.faithful_turns,
            "consistency": self.consistency,
            "checked_claims": self.checked_claims,
            "scored_turns": self.scored_turns,
            "unscored_turns": self.unscored_turns,
            "errors": list(self.errors),
            "comparison": {m: c.model_dump(mode="json") for m, c in metrics.items()},
            "conversations": [c.model_dump(mode="json") for c in self.conversations],
        }


def baseline_assistants(baselines: BaselineSpec, build: Any) -> dict[str, Assistant]:
    """Each baseline as an assistant: a bundled name built by `build(names)` (as `vera eval
    --baseline` builds it), "module:function" through `load_assistant`, a `Pipeline` through
    `pipeline_assistant`, a function as it is."""
    if isinstance(baselines, str):
        raise ConfigError(f"baselines={baselines!r}: give a list of names, or a mapping")
    given: dict[str, object]
    if isinstance(baselines, Mapping):
        given = {str(k): v for k, v in baselines.items()}
    else:
        given = {str(name): name for name in baselines}
    bundled = [v for v in given.values() if isinstance(v, str) and v in BASELINES]
    built: Mapping[str, Pipeline] = build(bundled) if bundled else {}
    return {name: _assistant(name, value, built) for name, value in given.items()}


def _assistant(name: str, value: object, built: Mapping[str, Pipeline]) -> Assistant:
    if isinstance(value, str):
        if value in built:
            return pipeline_assistant(built[value])
        if ":" not in value:
            raise ConfigError(
                f"unknown baseline {value!r}: use {', '.join(BASELINES)} or module:function"
            )
        return load_assistant(value)
    if isinstance(value, Pipeline):
        return pipeline_assistant(value)
    if callable(value):
        return value
    raise ConfigError(
        f"baseline {name!r}: expected an assistant (history -> next turn), a Pipeline or a "
        f"name; got {type(value).__name__}"
    )


def conversation_corpus(samples: Iterable[Sample]) -> list[Context]:
    """What the conversations retrieved and what their tools returned, each text once: the
    corpus a bundled baseline retrieves from (never the user's words nor the answers)."""
    seen: dict[str, Context] = {}
    for sample in samples:
        for context in sample.contexts:
            if context.metadata.get(SOURCE_KIND_KEY) in _CORPUS_KINDS:
                seen.setdefault(context.text, Context(text=context.text))
    return list(seen.values())


def paired_turns(
    system: Sequence[ConversationScore],
    baseline: Sequence[ConversationScore],
    ours: Mapping[str, SampleResult],
    theirs: Mapping[str, SampleResult],
) -> Iterator[tuple[SampleResult, SampleResult]]:
    """(system, baseline) results of the turns that answer the same user turn of the same
    conversation, in key order."""
    mine, other = _keys(system, ours), _keys(baseline, theirs)
    for key in sorted(set(mine) & set(other)):
        yield mine[key], other[key]


def _keys(
    scores: Sequence[ConversationScore], results: Mapping[str, SampleResult]
) -> dict[tuple[str, int], SampleResult]:
    """Each verified turn's result by (conversation, how many user turns came before it);
    where several turns answer one user turn (agent steps), the last one, the final answer."""
    found: dict[tuple[str, int], SampleResult] = {}
    for score in scores:
        for turn in score.turns:
            before = score.messages[: turn.turn - 1]
            asked = sum(m.role is Role.USER for m in before)
            if turn.sample_id in results:
                found[(score.id, asked)] = results[turn.sample_id]
    return found
