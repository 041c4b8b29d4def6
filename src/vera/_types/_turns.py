"""Where a sample sits in a conversation, and a run's conversation scores over its turns.

A conversation dataset gives one sample per assistant turn (see `vera.datasets.turn_samples`);
each result keeps its `TurnRef`, so a run's report can score the conversations as well as the
turns (`Report.conversations`). Both are omitted from the JSON of a run that has no turns, so
the reports of ordinary datasets do not change.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vera._types._samples import Sample

GROUP_KEY = "turn_group"
"""The metadata key of a turn sample naming the group of turns a judge may verify together
(`vera.judges._turns`)."""
GROUP_SIZE_KEY = "turn_group_size"
"""The metadata key of a turn sample saying how many turn samples its group has."""
MAX_TURNS_PER_GROUP = 8
"""Turns of one conversation verified together at most: the run's default concurrency, so
the turns of a group waiting for each other never hold every slot of a default run."""


def group_turns(samples: list[Sample], prefix: str) -> list[Sample]:
    """One conversation's turn `samples`, each told its group: runs of at most
    `MAX_TURNS_PER_GROUP` consecutive turns, keyed `prefix` and the run's number."""
    out = []
    for start in range(0, len(samples), MAX_TURNS_PER_GROUP):
        run = samples[start : start + MAX_TURNS_PER_GROUP]
        tag = {GROUP_KEY: f"{prefix}#{start // MAX_TURNS_PER_GROUP}", GROUP_SIZE_KEY: len(run)}
        out += [s.model_copy(update={"metadata": {**s.metadata, **tag}}) for s in run]
    return out


_FROZEN = ConfigDict(frozen=True)


class TurnRef(BaseModel):
    """The conversation a turn sample came from, and its turn number (its position in the
    conversation, counting every message)."""

    model_config = _FROZEN

    conversation_id: str
    turn: int


class InconsistentClaim(BaseModel):
    """A claim of an assistant turn that contradicts the assistant's own earlier turns, named
    by its turn and its text."""

    model_config = _FROZEN

    turn: int
    text: str


class ConversationTurns(BaseModel):
    """One conversation's scores over its assistant turns in one run.

    A turn is faithful when its answer verdict is, as for any answer (no claim NO_EVIDENCE
    or CONTRADICTED; PARTIALLY_SUPPORTED by the judge's rule: `vera._results.faithful_turn`)
    and, where consistency was checked, no claim contradicts the assistant's own earlier
    turns; `faithful_turns` is the share of the scored turns that are (None when none was
    scored, never 0), `first_unfaithful_turn` the number of the first that is not.
    `consistency` is the share of checked claims that contradict no earlier assistant turn
    (None when no turn had an earlier one, or the run did not check: not applicable, never
    1.0 by default).
    """

    model_config = _FROZEN

    id: str
    turns: tuple[int, ...]
    """The turn numbers of the conversation's assistant turns in the run."""
    scored_turns: int
    unfaithful_turns: tuple[int, ...]
    faithful_turns: float | None
    first_unfaithful_turn: int | None
    consistency: float | None = None
    checked_claims: int = 0
    """Claims checked against the assistant's earlier turns."""
    inconsistent_turns: tuple[int, ...] = ()
    """The turns with a claim that contradicts an earlier assistant turn."""
    inconsistent_claims: tuple[InconsistentClaim, ...] = ()
    """Each claim that contradicts an earlier assistant turn, with its turn (the claims
    behind `inconsistent_turns`)."""
    group_values: dict[str, str | None] = Field(default_factory=dict)
    """The conversation's value of each `--group-by` field: that of its turns (a field of
    the conversation row, its `category` or `metadata`, every turn carries)."""


class ConversationGroup(BaseModel):
    """The conversations sharing one value of a `--group-by` field: their faithful-turn share
    over all their scored turns, and their consistency over all their checked claims."""

    model_config = _FROZEN

    conversations: int
    scored_turns: int
    faithful_turns: float | None
    consistency: float | None = None
    checked_claims: int = 0


class ConversationSummary(BaseModel):
    """The conversation block of a run's report: each conversation's scores, and the share of
    faithful turns over all of them (None when the run scored no turn or no faithfulness)."""

    model_config = _FROZEN

    metric: str
    """The metric the turns were scored with ("faithfulness"); whether a turn is faithful is
    its answer verdict (`vera._results.faithful_turn`)."""
    faithful_turns: float | None
    scored_turns: int
    unscored_turns: int
    """Turns with no faithfulness result: errors, skipped, or faithfulness not run."""
    conversations: tuple[ConversationTurns, ...]
    consistency: float | None = None
    """The share of checked claims, over every conversation, that contradict no earlier
    assistant turn (None when none was checked)."""
    checked_claims: int = 0
    groups: dict[str, dict[str, ConversationGroup]] = Field(default_factory=dict)
    """By `--group-by` field, then value: the conversations' scores of each group."""


def turn_ref(sample: Sample) -> TurnRef | None:
    """The sample's place in its conversation, from the `conversation_id` and `turn` metadata
    that `turn_samples` writes (and that a flattened conversation file may carry); None for a
    sample without both, or whose turn is no whole number."""
    conversation = sample.metadata.get("conversation_id")
    turn = sample.metadata.get("turn")
    if conversation is None or isinstance(turn, bool):
        return None
    try:
        number = int(turn) if isinstance(turn, int | str) else None
    except ValueError:
        return None
    return None if number is None else TurnRef(conversation_id=str(conversation), turn=number)
