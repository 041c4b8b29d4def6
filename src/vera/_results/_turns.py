"""The conversation block of a report: each conversation's turns counted as their results
arrive, then scored by their answer verdicts (faithful-turn share, first unfaithful turn),
with the consistency checks of the run's second pass where it made one, and by `--group-by`
value.

Unlike the other aggregates this keeps one small entry per turn (its number and whether it
passed), since the first unfaithful turn depends on the order of the turns, not of arrival.
"""

from __future__ import annotations

from collections import defaultdict

from vera._types import ClaimRecord, Report, SampleResult, SampleStatus, Verdict
from vera._types._turns import (
    ConversationGroup,
    ConversationSummary,
    ConversationTurns,
    InconsistentClaim,
)

FAITHFULNESS = "faithfulness"


def faithful_turn(result: SampleResult) -> bool | None:
    """Whether an assistant turn is faithful: its answer verdict (`answer_verdict`), the one
    rule for answers and turns alike, so an unsupported or contradicted claim makes it
    unfaithful whatever its mean score. None when the turn has no verdict (not scored, or
    the run verified no claims) or errored."""
    if result.status is not SampleStatus.SCORED or result.verdict is None:
        return None
    return result.verdict.passed


class TurnTally:
    """Each conversation's turns: turn number to whether it is faithful (`faithful_turn`;
    None when it has no answer verdict), and, once the consistency checks are
    counted (`check`), the claims checked and those contradicting an earlier turn."""

    def __init__(self, metric: str = FAITHFULNESS) -> None:
        self.metric = metric
        self._turns: dict[str, dict[int, bool | None]] = defaultdict(dict)
        self._groups: dict[str, dict[str, str | None]] = {}
        self._checked: dict[str, int] = defaultdict(int)
        self._inconsistent: dict[str, dict[int, tuple[str, ...]]] = defaultdict(dict)
        self._fully: dict[str, frozenset[str]] = {}

    def add(self, result: SampleResult) -> None:
        """Count one result, if it is a conversation turn."""
        if result.turn is None:
            return
        conversation = result.turn.conversation_id
        self._turns[conversation][result.turn.turn] = faithful_turn(result)
        # As the breakdowns read a group: "category" is the sample's own field.
        values = {
            k: result.category if k == "category" else v for k, v in result.group_values.items()
        }
        self._groups.setdefault(conversation, values)
        self._fully[result.id] = frozenset(
            c.text for c in result.claims if c.verdict is Verdict.FULLY_SUPPORTED
        )

    def check(self, result: SampleResult) -> None:
        """Count one consistency check (the turn again, judged against the assistant's own
        earlier turns alone: `vera.datasets.consistency_checks`), after its turn's `add`."""
        if result.turn is None or result.status is not SampleStatus.SCORED:
            return
        conversation = result.turn.conversation_id
        self._checked[conversation] += len(result.claims)
        found = inconsistent_claims(self._fully.get(result.id, frozenset()), result)
        if found:
            self._inconsistent[conversation][result.turn.turn] = tuple(c.text for c in found)

    def summary(self) -> ConversationSummary | None:
        """The block, or None when no result was a conversation turn."""
        if not self._turns:
            return None
        conversations = tuple(self._scores(c) for c in sorted(self._turns))
        turns = [self._effective(c) for c in sorted(self._turns)]
        scored = [p for t in turns for p in t.values() if p is not None]
        checked = sum(self._checked.values())
        return ConversationSummary(
            metric=self.metric,
            faithful_turns=sum(scored) / len(scored) if scored else None,
            scored_turns=len(scored),
            unscored_turns=sum(len(t) for t in turns) - len(scored),
            conversations=conversations,
            consistency=self.consistency_of(list(self._turns)),
            checked_claims=checked,
            groups=_groups(conversations, self),
        )

    def _effective(self, conversation: str) -> dict[int, bool | None]:
        """Turn to faithful, a turn contradicting an earlier one counting as unfaithful (as
        `vera conversations` counts it), whether or not it was scored on faithfulness."""
        wrong = self._inconsistent.get(conversation, {})
        return {n: False if n in wrong else p for n, p in self._turns[conversation].items()}

    def consistency_of(self, conversations: list[str]) -> float | None:
        """The share of the checked claims of `conversations` that contradict no earlier
        turn (None when none was checked)."""
        checked = sum(self._checked.get(c, 0) for c in conversations)
        wrong = sum(len(t) for c in conversations for t in self._inconsistent.get(c, {}).values())
        return 1 - wrong / checked if checked else None

    def _scores(self, conversation: str) -> ConversationTurns:
        turns = self._effective(conversation)
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
            consistency=self.consistency_of([conversation]),
            checked_claims=self._checked.get(conversation, 0),
            inconsistent_turns=tuple(sorted(self._inconsistent.get(conversation, {}))),
            inconsistent_claims=tuple(
                InconsistentClaim(turn=turn, text=text)
                for turn, texts in sorted(self._inconsistent.get(conversation, {}).items())
                for text in texts
            ),
            group_values=self._groups.get(conversation, {}),
        )


def inconsistent_claims(confirmed: frozenset[str], check: SampleResult) -> tuple[ClaimRecord, ...]:
    """The claims of a consistency check that contradict an earlier assistant turn and that
    the turn's own sources do not fully support (`confirmed`: the texts of its claims found
    FULLY_SUPPORTED). Where the sources confirm a claim, the earlier turn was the wrong one,
    and its own verdict already says so."""
    if check.status is not SampleStatus.SCORED:
        return ()
    return tuple(
        c for c in check.claims if c.verdict is Verdict.CONTRADICTED and c.text not in confirmed
    )


def _groups(
    conversations: tuple[ConversationTurns, ...], tally: TurnTally
) -> dict[str, dict[str, ConversationGroup]]:
    """Each `--group-by` field's values, with the scores of the conversations of each."""
    members: dict[str, dict[str, list[ConversationTurns]]] = defaultdict(lambda: defaultdict(list))
    for conversation in conversations:
        for field, value in conversation.group_values.items():
            members[field][str(value)].append(conversation)
    return {
        field: {value: _group(group, tally) for value, group in sorted(values.items())}
        for field, values in members.items()
    }


def _group(conversations: list[ConversationTurns], tally: TurnTally) -> ConversationGroup:
    scored = sum(c.scored_turns for c in conversations)
    faithful = sum(c.scored_turns - len(c.unfaithful_turns) for c in conversations)
    return ConversationGroup(
        conversations=len(conversations),
        scored_turns=scored,
        faithful_turns=faithful / scored if scored else None,
        consistency=tally.consistency_of([c.id for c in conversations]),
        checked_claims=sum(c.checked_claims for c in conversations),
    )


def turn_gate_failures(
    report: Report, min_faithful_turns: float | None, min_consistency: float | None = None
) -> list[str]:
    """The conversation gates: the faithful-turn share over every conversation
    (`--min-faithful-turns`), with each conversation's first unfaithful turn named where the
    share misses it, and each conversation's consistency (`--min-consistency`). A run with
    no turn scored on faithfulness, or no claim checked for consistency, measured nothing,
    and fails the gate on it. A run without conversations is refused before
    (`conversation_gates_refused`)."""
    block = report.conversations
    if block is None:
        return []
    return _faithful_turn_failures(block, min_faithful_turns) + _consistency_failures(
        block, min_consistency
    )


def conversation_gates_refused(
    report: Report, min_faithful_turns: float | None, min_consistency: float | None
) -> str | None:
    """Why a gate on a conversation score cannot apply to this run (it has no conversation
    turn), or None: the flag asks for something the data cannot give, a usage error."""
    named = [
        flag
        for flag, value in (
            ("--min-faithful-turns", min_faithful_turns),
            ("--min-consistency", min_consistency),
        )
        if value is not None
    ]
    if not named or report.conversations is not None:
        return None
    return (
        f"{' and '.join(named)} gate conversation scores, but no sample of this run is a "
        "conversation turn: evaluate a conversation dataset (-d conversations, or a file whose "
        "rows hold 'messages' / 'turns' / 'user_input'), or drop the flag"
    )


def _faithful_turn_failures(block: ConversationSummary, least: float | None) -> list[str]:
    if least is None:
        return []
    if block.faithful_turns is None:
        return [
            "faithful turns: --min-faithful-turns gates conversation turns, but this run "
            "scored none on faithfulness (evaluate a conversation dataset with -m faithfulness)"
        ]
    if block.faithful_turns >= least:
        return []
    firsts = ", ".join(
        f"{c.id} turn {c.first_unfaithful_turn}"
        for c in block.conversations
        if c.first_unfaithful_turn is not None
    )
    return [
        f"faithful turns: {block.faithful_turns:.3f} of {block.scored_turns} scored turns is "
        f"below {least:.3f}; first unfaithful: {firsts}"
    ]


def _consistency_failures(block: ConversationSummary, least: float | None) -> list[str]:
    if least is None:
        return []
    measured = [c for c in block.conversations if c.consistency is not None]
    if not measured:
        return [
            "consistency: --min-consistency gates conversations, but this run checked no "
            "claim against an earlier assistant turn (no conversation has two assistant turns "
            "with faithfulness scored, or a --pipeline answered the turns)"
        ]
    return [
        f"consistency: {c.id} {c.consistency:.3f} is below {least:.3f}; turns that "
        f"contradict an earlier one: {', '.join(map(str, c.inconsistent_turns))}"
        for c in measured
        if c.consistency is not None and c.consistency < least
    ]
