"""A run's conversation block on the console: the faithful-turn share and where each
conversation first went wrong (the HTML report's "Conversations" section says the same)."""

from __future__ import annotations

from vera._types import ConversationGroup, ConversationSummary

_NAMED = 6
"""Conversations named by their first unfaithful turn before the rest are counted."""


def conversation_lines(block: ConversationSummary) -> list[str]:
    """The block as lines of text: the share over every turn, then the first unfaithful turns."""
    share = "n/a" if block.faithful_turns is None else f"{block.faithful_turns:.3f}"
    unscored = f", {block.unscored_turns} not scored" if block.unscored_turns else ""
    lines = [
        f"Conversations: {len(block.conversations)}, faithful turns {share} "
        f"(the answer verdict: no claim unsupported or contradicted, over "
        f"{block.scored_turns} scored turns{unscored})"
    ]
    if block.consistency is not None:
        inconsistent = [c for c in block.conversations if c.inconsistent_turns]
        lines.append(
            f"Consistency {block.consistency:.3f} (claims that contradict no earlier assistant "
            f"turn, over {block.checked_claims} checked); {len(inconsistent)} conversation(s) "
            "contradict an earlier turn"
        )
    for field, groups in block.groups.items():
        shown = "; ".join(f"{value} {_group(group)}" for value, group in groups.items())
        lines.append(f"Conversations by {field}: {shown}")
    wrong = [c for c in block.conversations if c.first_unfaithful_turn is not None]
    if wrong:
        named = ", ".join(f"{c.id} turn {c.first_unfaithful_turn}" for c in wrong[:_NAMED])
        more = f" and {len(wrong) - _NAMED} more" if len(wrong) > _NAMED else ""
        lines.append(f"First unfaithful turn: {named}{more}")
    return lines


def _group(group: ConversationGroup) -> str:
    share = "n/a" if group.faithful_turns is None else f"{group.faithful_turns:.3f}"
    consistency = "" if group.consistency is None else f", consistency {group.consistency:.3f}"
    return f"({group.conversations}): faithful turns {share}{consistency}"
