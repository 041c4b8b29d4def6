"""Conversation scores from the per-turn results of a run: which turns are faithful, the first
that is not, and how consistent the assistant is with its own earlier turns.

These read finished `SampleResult`s beside the turn samples they came from (a result keeps a
verdict's `context_index`, the sample says which source that context is); they call no judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from vera._results import faithful_turn, inconsistent_claims
from vera._types import Sample, SampleResult, SampleStatus, Verdict
from vera._types._conversations import SOURCE_KIND_KEY, Conversation, SourceKind, Turn

_FROZEN = ConfigDict(frozen=True)
FAITHFULNESS = "faithfulness"


class TurnClaim(BaseModel):
    """One claim of an assistant turn, its verdict, and the source the verdict rests on."""

    model_config = _FROZEN

    text: str
    verdict: Verdict
    source_kind: SourceKind | None
    """None where the judge named no context (NO_EVIDENCE, mostly)."""
    source_turn: int | None = None
    tool_name: str | None = None
    evidence: str = ""


class TurnScore(BaseModel):
    """One assistant turn's outcome. `faithful` says whether the turn is faithful: its
    answer verdict, as for any answer (`vera._results` `faithful_turn`; None when the turn was
    not scored); `inconsistent` lists its claims that contradict the
    assistant's own earlier turns."""

    model_config = _FROZEN

    turn: int
    sample_id: str
    status: SampleStatus
    faithfulness: float | None
    faithful: bool | None
    claims: tuple[TurnClaim, ...] = ()
    inconsistent: tuple[TurnClaim, ...] = ()
    repeated: tuple[str, ...] = ()
    """Sentences that repeat an earlier assistant turn, not verified again."""
    human_faithful: bool | None = None

    @property
    def user_only(self) -> tuple[TurnClaim, ...]:
        """Claims whose support is the user's own words, not a source."""
        return tuple(
            c
            for c in self.claims
            if c.source_kind is SourceKind.USER and c.verdict is not Verdict.CONTRADICTED
        )

    @property
    def flagged(self) -> bool | None:
        """Whether the turn is unfaithful or inconsistent (None when it was not scored)."""
        if self.inconsistent:
            return True
        return None if self.faithful is None else not self.faithful


class ConversationScore(BaseModel):
    """A conversation's aggregates over its assistant turns.

    `faithful_turns` is the share of scored turns that pass faithfulness and contradict no
    earlier turn (None when no turn was scored, never 0); `first_unfaithful_turn` is the turn
    number of the first that does not; `consistency` is the share of checked claims that
    contradict none of the assistant's earlier turns (None when no turn had an earlier one
    to contradict: not applicable, never 1.0 by default).
    """

    model_config = _FROZEN

    id: str
    messages: tuple[Turn, ...]
    """The conversation's turns as read, for showing it as a thread."""
    turns: tuple[TurnScore, ...]
    """One per assistant turn that was verified."""
    faithful_turns: float | None
    first_unfaithful_turn: int | None
    consistency: float | None
    checked_claims: int
    unscored_turns: int


def conversation_score(
    conversation: Conversation,
    samples: Sequence[Sample],
    results: Mapping[str, SampleResult],
    consistency: Mapping[str, SampleResult],
) -> ConversationScore:
    """Score one conversation from its turn samples, their results, and the results of its
    consistency samples (keyed by sample id; see `datasets.conversations`)."""
    turns = tuple(_turn(s, results.get(s.id), consistency.get(s.id)) for s in samples)
    scored = [t for t in turns if t.flagged is not None]
    first = next((t.turn for t in scored if t.flagged), None)
    checked = [r for r in consistency.values() if r.status is SampleStatus.SCORED]
    claims = sum(len(r.claims) for r in checked)
    contradicting = sum(len(t.inconsistent) for t in turns)
    return ConversationScore(
        id=conversation.id,
        messages=conversation.turns,
        turns=turns,
        faithful_turns=(sum(not t.flagged for t in scored) / len(scored)) if scored else None,
        first_unfaithful_turn=first,
        consistency=(1 - contradicting / claims) if claims else None,
        checked_claims=claims,
        unscored_turns=len(turns) - len(scored),
    )


def _turn(sample: Sample, result: SampleResult | None, check: SampleResult | None) -> TurnScore:
    metric = result.results.get(FAITHFULNESS) if result else None
    claims = tuple(_claims(sample, result)) if result else ()
    return TurnScore(
        turn=int(sample.metadata["turn"]),
        sample_id=sample.id,
        status=result.status if result else SampleStatus.ERROR,
        faithfulness=metric.score if metric else None,
        faithful=faithful_turn(result) if result else None,
        claims=claims,
        inconsistent=_inconsistent(sample, claims, check),
        repeated=tuple(sample.metadata.get("repeated", ())),
        human_faithful=sample.human_faithful,
    )


def _inconsistent(
    sample: Sample, claims: tuple[TurnClaim, ...], check: SampleResult | None
) -> tuple[TurnClaim, ...]:
    """The claims that contradict an earlier assistant turn and that the turn's sources do
    not fully support (`vera._results.inconsistent_claims`, which `vera eval`'s conversation
    block counts too)."""
    if check is None:
        return ()
    confirmed = frozenset(c.text for c in claims if c.verdict is Verdict.FULLY_SUPPORTED)
    # The check's contexts are the assistant's earlier turns alone, whatever the index.
    earlier = {"source_kind": SourceKind.ASSISTANT, "source_turn": None, "tool_name": None}
    return tuple(
        TurnClaim(text=c.text, verdict=c.verdict, evidence=c.evidence, **earlier)
        for c in inconsistent_claims(confirmed, check)
    )


def _claims(sample: Sample, result: SampleResult) -> Iterable[TurnClaim]:
    contexts = result.contexts or sample.contexts
    for claim in result.claims:
        index = claim.context_index
        meta = contexts[index].metadata if index is not None and index < len(contexts) else {}
        kind = meta.get(SOURCE_KIND_KEY)
        yield TurnClaim(
            text=claim.text,
            verdict=claim.verdict,
            source_kind=SourceKind(kind) if kind else None,
            source_turn=meta.get("turn"),
            tool_name=meta.get("tool_name"),
            evidence=claim.evidence,
        )
