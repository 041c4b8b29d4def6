"""Conversations as threads, in plain text: each turn in order, each verified assistant turn
with its claims, verdicts and the source each verdict rests on."""

from __future__ import annotations

from collections.abc import Iterator

from vera._conversations._baselines import BaselineConversations
from vera._conversations._scores import ConversationScore, TurnClaim, TurnScore
from vera._types._conversations import Role, Turn

_WIDTH = 96


def thread_lines(score: ConversationScore) -> Iterator[str]:
    """The conversation as lines of text, its aggregates first."""
    yield f"Conversation {score.id}: " + _summary(score)
    verified = {t.turn: t for t in score.turns}
    for number, turn in enumerate(score.messages, start=1):
        yield from _turn_lines(number, turn, verified.get(number), score.first_unfaithful_turn)


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


def _turn_lines(
    number: int, turn: Turn, verified: TurnScore | None, first: int | None
) -> Iterator[str]:
    if turn.role is Role.ASSISTANT and not turn.content.strip():
        yield f"  {number:>2} assistant → calls {_calls(turn)}"
        return
    yield f"  {number:>2} {_who(turn)}: {_short(turn.content)}"
    # Tools a turn called and saw on itself (DeepEval's `tools_called`) show under it.
    for result in turn.tool_results:
        yield f"       ↳ {_tool(result.tool_name, result.call_id)}: {_short(result.text, 60)}"
    if turn.role is Role.ASSISTANT and turn.tool_calls:
        yield f"       → calls {_calls(turn)}"
    if turn.contexts:
        yield f"       ({len(turn.contexts)} retrieved context(s))"
    if verified is not None:
        yield from _verdict_lines(verified, first)


def _who(turn: Turn) -> str:
    return turn.role.value if turn.role is not Role.TOOL else _tool(turn.tool_name, turn.call_id)


def _tool(name: str | None, call_id: str | None) -> str:
    return " ".join(p for p in ("tool", name, _call_id(call_id)) if p)


def _calls(turn: Turn) -> str:
    return ", ".join(" ".join(p for p in (c.name, _call_id(c.id)) if p) for c in turn.tool_calls)


def _call_id(call_id: str | None) -> str | None:
    return f"({call_id})" if call_id else None


def _verdict_lines(verified: TurnScore, first: int | None) -> Iterator[str]:
    badge = {True: "UNFAITHFUL", False: "faithful", None: "not scored"}[verified.flagged]
    score = "—" if verified.faithfulness is None else f"{verified.faithfulness:.2f}"
    marked = " · first unfaithful turn" if verified.turn == first else ""
    yield f"       └ {badge} (faithfulness {score}){marked}"
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


def baseline_lines(baseline: BaselineConversations, system_turns: int) -> Iterator[str]:
    """A baseline's faithful-turn share and consistency, then per metric the paired
    difference (system minus baseline) with its 95 % interval, p-value and paired turns."""
    share, consistency = baseline.faithful_turns, baseline.consistency
    yield (
        f"Baseline {baseline.name}: faithful turns {_figure(share)} · consistency "
        f"{_figure(consistency)} ({baseline.checked_claims} checked claims) · "
        f"{baseline.scored_turns} turn(s) scored"
    )
    metrics = baseline.comparison.metrics if baseline.comparison else {}
    for metric, found in metrics.items():
        interval = (
            "n/a"
            if found.ci_low is None or found.ci_high is None
            else f"[{found.ci_low:+.3f}, {found.ci_high:+.3f}]"
        )
        p_value = "n/a" if found.p_value is None else f"{found.p_value:.3g}"
        yield (
            f"  {metric}: system - baseline {_figure(found.difference, '+.3f')}, "
            f"95% CI {interval}, p {p_value}, "
            f"{found.paired_samples} paired turn(s) of {system_turns}"
        )
    for error in baseline.errors:
        yield f"  ! replay failed: {_short(error)}"


def _figure(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)
