"""Conversations as one HTML page of threads: every turn in order, each verified assistant
turn with its claims, verdicts and sources. The threads are the HTML report's own partial
(`vera.render`'s `thread.html.j2`), fed from the conversation scores; everything from the data
is escaped by the template engine (`autoescape` is always on)."""

from __future__ import annotations

from vera._conversations._evaluate import ConversationReport
from vera._conversations._render import source_label
from vera._conversations._scores import ConversationScore, TurnClaim, TurnScore
from vera.render._html import STYLE, template_environment
from vera.render._threads import (
    INCONSISTENT_NOTE,
    Thread,
    ThreadClaim,
    ThreadTurn,
    thread_message,
)


def threads_html(report: ConversationReport) -> str:
    """The page, self-contained (its style inlined, the HTML report's own)."""
    env = template_environment("vera._conversations")
    return env.get_template("threads.html.j2").render(
        report=report,
        css=STYLE,
        share=_share,
        threads=[conversation_thread(c) for c in report.conversations],
    )


def conversation_thread(score: ConversationScore) -> Thread:
    """One scored conversation as the thread the HTML report shows."""
    verified = {t.turn: _verdicts(score, t) for t in score.turns}
    consistency = (
        "n/a (no earlier turn)" if score.consistency is None else _share(score.consistency)
    )
    facts: tuple[tuple[str, str], ...] = (
        ("faithful turns", _share(score.faithful_turns)),
        ("first unfaithful turn", str(score.first_unfaithful_turn or "none")),
        ("consistency", consistency),
    )
    if score.unscored_turns:
        facts += (("not scored", f"{score.unscored_turns} turn(s)"),)
    messages = tuple(
        thread_message(n, turn, verified.get(n)) for n, turn in enumerate(score.messages, start=1)
    )
    flagged = any(t.flagged for t in score.turns)
    return Thread(score.id, messages, facts, flagged)


def _verdicts(score: ConversationScore, turn: TurnScore) -> ThreadTurn:
    return ThreadTurn(
        sample_id=turn.sample_id,
        status=turn.status.value,
        score=turn.faithfulness,
        flagged=turn.flagged,
        first_unfaithful=turn.turn == score.first_unfaithful_turn,
        claims=tuple(_claim(c) for c in turn.claims),
        inconsistent=tuple(_claim(c, INCONSISTENT_NOTE) for c in turn.inconsistent),
        repeated=turn.repeated,
    )


def _claim(claim: TurnClaim, note: str = "") -> ThreadClaim:
    kind = claim.source_kind.value if claim.source_kind is not None else None
    return ThreadClaim(claim.text, claim.verdict, source_label(claim), kind, note)


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
