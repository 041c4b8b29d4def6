"""Conversations verified turn by turn: each assistant turn against what it could rely on,
and each conversation's scores (faithful turns, the first unfaithful one, consistency); and
conversations simulated from scenarios, a simulated user talking to the system.

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
from vera._conversations._scenarios import Scenario, read_scenarios
from vera._conversations._scores import ConversationScore, TurnClaim, TurnScore
from vera._conversations._simulate import STOP_REASONS, SimulationResult, simulate_conversations
from vera._conversations._simulate_estimate import SimulationEstimate, estimate_simulation
from vera._conversations._simulate_summary import (
    simulation_estimate_line,
    simulation_lines,
    write_conversations,
)

__all__ = [
    "HISTORY_KEY",
    "STOP_REASONS",
    "Assistant",
    "BaselineConversations",
    "BaselineSpec",
    "ConversationEstimate",
    "ConversationReport",
    "ConversationScore",
    "Scenario",
    "SimulationEstimate",
    "SimulationResult",
    "TurnClaim",
    "TurnScore",
    "baseline_lines",
    "estimate_conversations",
    "estimate_simulation",
    "evaluate_conversations",
    "load_assistant",
    "pipeline_assistant",
    "read_scenarios",
    "replay",
    "simulate_conversations",
    "simulation_estimate_line",
    "simulation_lines",
    "thread_lines",
    "threads_html",
    "write_conversations",
]
