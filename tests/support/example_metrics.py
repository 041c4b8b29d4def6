"""The built-in metrics with something to score on the bundled example: every one but the agent
metrics, which read tool calls the example has none of (they are not applicable there)."""

from __future__ import annotations

import vera

AGENT_METRICS = frozenset({"tool_call_accuracy", "tool_argument_correctness", "trajectory_match"})
EXAMPLE_METRICS = [
    m for m in vera.metrics.METRIC_REGISTRY.builtin_names() if m not in AGENT_METRICS
]
