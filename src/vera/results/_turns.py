"""The conversation block of a report: each conversation's turns counted as their results
arrive, then scored (faithful-turn share, first unfaithful turn).

Unlike the other aggregates this keeps one small entry per turn (its number and whether it
passed), since the first unfaithful turn depends on the order of the turns, not of arrival.
"""

from __future__ import annotations

from collections import defaultdict

from vera.types import Report, SampleResult, SampleStatus, Verdict
from vera.types._turns import ConversationSummary, ConversationTurns

__all__ = ["TurnTally", "faithful_turn", "turn_gate_failures"]

FAITHFULNESS = "faithfulness"


def faithful_turn(result: SampleResult, metric: str = FAITHFULNESS) -> bool | None:
    """Whether an assistant turn is faithful: its `metric` result passes and every claim it
    makes is FULLY_SUPPORTED by its sources. A turn is one message a user reads whole, so
    one claim only partly supported (the rest of it stated without a source), unsupported
    or contradicted makes it unfaithful, whatever the turn's mean score; the score itself
    keeps its formula. None when the turn has no result on `metric` (not scored)."""
    found = result.results.get(metric)
    if result.status is not SampleStatus.SCORED or found is None or found.passed is None:
        return None
    return found.passed and all(c.verdict is Verdict.FULLY_SUPPORTED for c in result.claims)


class TurnTally:
    """Each conversation's turns: turn number to whether it is faithful (`faithful_turn`;
    None when it was not scored on faithfulness)."""

    def __init__(self, metric: str = FAITHFULNESS) -> None:
        self.metric = metric
        self._turns: dict[str, dict[int, bool | None]] = defaultdict(dict)

    def add(self, result: SampleResult) -> None:
        """Count one result, if it is a conversation turn."""
        if result.turn is None:
            return
        self._turns[result.turn.conversation_id][result.turn.turn] = faithful_turn(
            result, self.metric
        )

    def summary(self) -> ConversationSummary | None:
        """The block, or None when no result was a conversation turn."""
        if not self._turns:
            return None
        conversations = tuple(_scores(c, self._turns[c]) for c in sorted(self._turns))
        passes = [p for turns in self._turns.values() for p in turns.values()]
        scored = [p for p in passes if p is not None]
        return ConversationSummary(
            metric=self.metric,
            faithful_turns=sum(scored) / len(scored) if scored else None,
            scored_turns=len(scored),
            unscored_turns=len(passes) - len(scored),
            conversations=conversations,
        )


def _scores(conversation: str, turns: dict[int, bool | None]) -> ConversationTurns:
    order = sorted(turns)
    scored = [n for n in order if turns[n] is not None]
    unfaithful = tuple(n for n in scored if not turns[n])
    return ConversationTurns(
        id=conversation,
        turns=tuple(order),
        scored_turns=len(scored),
        unfaithful_turns=unfaithful,
        faithful_turns=(len(scored) - len(unfaithful)) / len(scored) if scored else None,
        first_unfaithful_turn=unfaithful[0] if unfaithful else None,
    )


def turn_gate_failures(report: Report, min_faithful_turns: float | None) -> list[str]:
    """The faithful-turn gate (`--min-faithful-turns`): the share over every conversation, with
    each conversation's first unfaithful turn named where the share misses it. A run with no
    turn scored on faithfulness measured nothing, and fails it."""
    if min_faithful_turns is None:
        return []
    block = report.conversations
    if block is None or block.faithful_turns is None:
        return [
            "faithful turns: --min-faithful-turns gates conversation turns, but this run "
            "scored none on faithfulness (evaluate a conversation dataset with -m faithfulness)"
        ]
    if block.faithful_turns >= min_faithful_turns:
        return []
    firsts = ", ".join(
        f"{c.id} turn {c.first_unfaithful_turn}"
        for c in block.conversations
        if c.first_unfaithful_turn is not None
    )
    return [
        f"faithful turns: {block.faithful_turns:.3f} of {block.scored_turns} scored turns is "
        f"below {min_faithful_turns:.3f}; first unfaithful: {firsts}"
    ]
