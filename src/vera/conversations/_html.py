"""Conversations as one HTML page of threads: every turn in order, each verified assistant
turn with its claims, verdicts and sources. Everything from the data is escaped by the
template engine (`autoescape` is always on)."""

from __future__ import annotations

from importlib.resources import files

from jinja2 import Environment, PackageLoader, StrictUndefined

from vera.conversations._evaluate import ConversationReport
from vera.conversations._render import source_label
from vera.conversations._scores import ConversationScore, TurnScore

__all__ = ["threads_html"]


def threads_html(report: ConversationReport) -> str:
    """The page, self-contained (its style inlined, the HTML report's own)."""
    env = Environment(
        loader=PackageLoader("vera.conversations", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    css = (files("vera.render") / "templates" / "report.css").read_text(encoding="utf-8")
    return env.get_template("threads.html.j2").render(
        report=report,
        css=css,
        share=_share,
        source=source_label,
        turns_by_number=_by_number,
    )


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _by_number(score: ConversationScore) -> dict[int, TurnScore]:
    return {t.turn: t for t in score.turns}
