"""Conversations verified turn by turn: each assistant turn against what it could rely on,
and each conversation's scores (faithful turns, the first unfaithful one, consistency).

    report = vera._conversations.evaluate_conversations("conversations")
    report.conversations[0].first_unfaithful_turn

See docs/conversations.md.
"""

from vera._conversations._baselines import BaselineConversations, BaselineSpec
from vera._conversations._evaluate import (
    ConversationEstimate,
    ConversationReport,
    estimate_conversations,
    evaluate_conversations,
)
from vera._conversations._html import threads_html
from vera._conversations._render import baseline_lines, thread_lines
from vera._conversations._replay import (
    HISTORY_KEY,
    Assistant,
    load_assistant,
    pipeline_assistant,
    replay,
)
from vera._conversations._scores import ConversationScore, TurnClaim, TurnScore

__all__ = [
    "HISTORY_KEY",
    "Assistant",
    "BaselineConversations",
    "BaselineSpec",
    "ConversationEstimate",
    "ConversationReport",
    "ConversationScore",
    "TurnClaim",
    "TurnScore",
    "baseline_lines",
    "estimate_conversations",
    "evaluate_conversations",
    "load_assistant",
    "pipeline_assistant",
    "replay",
    "thread_lines",
    "threads_html",
]
