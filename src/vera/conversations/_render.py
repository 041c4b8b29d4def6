"""Conversations as threads, in plain text: each turn in order, each verified assistant turn
with its claims, verdicts and the source each verdict rests on."""

from __future__ import annotations

from collections.abc import Iterator

from vera.conversations._scores import ConversationScore, TurnClaim, TurnScore
from vera.types._conversations import Role, Turn

__all__ = ["source_label", "thread_lines"]

_WIDTH = 96


def thread_lines(score: ConversationScore) -> Iterator[str]:
    """The conversation as lines of text, its aggregates first."""
    yield f"Conversation {score.id}: " + _summary(score)
    verified = {t.turn: t for t in score.turns}
    for number, turn in enumerate(score.messages, start=1):
        yield from _turn_lines(number, turn, verified.get(number))


def _summary(score: ConversationScore) -> str:
    share = "n/a" if score.faithful_turns is None else f"{score.faithful_turns:.2f}"
    first = score.first_unfaithful_turn or "none"
    consistency = (
        "n/a (no earlier turn)" if score.consistency is None else (f"{score.consistency:.2f}")
    )
    text = f"faithful turns {share} · first unfaithful turn {first} · consistency {consistency}"
    if score.unscored_turns:
        text += f" · {score.unscored_turns} turn(s) not scored"
    return text


def _turn_lines(number: int, turn: Turn, verified: TurnScore | None) -> Iterator[str]:
    label = turn.role.value if turn.role is not Role.TOOL else f"tool {turn.tool_name or ''}"
    if turn.role is Role.ASSISTANT and not turn.content.strip():
        calls = ", ".join(c.name for c in turn.tool_calls)
        yield f"  {number:>2} assistant → calls {calls}"
        return
    yield f"  {number:>2} {label.strip()}: {_short(turn.content)}"
    if verified is None:
        return
    badge = {True: "UNFAITHFUL", False: "faithful", None: "not scored"}[verified.flagged]
    score = "—" if verified.faithfulness is None else f"{verified.faithfulness:.2f}"
    yield f"       └ {badge} (faithfulness {score})"
    for claim in verified.claims:
        yield f"         · {claim.verdict.value} [{source_label(claim)}] {_short(claim.text, 60)}"
    for claim in verified.inconsistent:
        yield f"         ! contradicts an earlier assistant turn: {_short(claim.text, 60)}"
    for sentence in verified.repeated:
        yield f"         = repeats an earlier turn, not verified again: {_short(sentence, 50)}"


def source_label(claim: TurnClaim) -> str:
    """Where a verdict rests: its source kind, tool name and turn."""
    if claim.source_kind is None:
        return "no source"
    where = claim.source_kind.value
    if claim.tool_name:
        where += f" {claim.tool_name}"
    if claim.source_turn is not None:
        where += f", turn {claim.source_turn}"
    return where


def _short(text: str, width: int = _WIDTH - 20) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
