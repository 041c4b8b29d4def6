"""What `vera generate --conversations` prints and writes: plain lines and the JSONL file."""

from __future__ import annotations

import json
from pathlib import Path

from vera.generate._conversations import STOP_REASONS, SimulationResult
from vera.generate._summary import usage_line
from vera.render._outputs import atomic_text

__all__ = ["simulation_lines", "write_conversations"]


def simulation_lines(result: SimulationResult) -> list[str]:
    """Conversations written, why each stopped, the user turns dropped, and the spend."""
    written = len(result.conversations)
    lines = [f"Wrote {written} of {result.scenarios} simulated conversations; stopped by:"]
    for reason, meaning in STOP_REASONS.items():
        if result.stops.get(reason):
            lines.append(f"  {reason}: {result.stops[reason]} ({meaning})")
    lines.append(
        f"User turns dropped for a fact neither the documents nor the scenario give: "
        f"{result.invented_turns}"
    )
    if result.scenarios_dropped:
        lines.append(
            f"{result.scenarios_dropped} scenario(s) asked of the generator were not written "
            "well (a reply or an entry of the wrong shape, or a failed call) and were skipped."
        )
    if result.empty:
        lines.append(
            f"{result.empty} conversation(s) ended before one user turn was answered and were "
            "not written."
        )
    lines.append(usage_line(result.usage))
    if result.stopped:
        lines.append(f"Stopped early: {result.stopped}")
    return lines


def write_conversations(result: SimulationResult, path: Path) -> None:
    """The conversations as JSONL, one a line (`vera eval --dataset PATH` reads it)."""
    rows = [json.dumps(row, ensure_ascii=False) for row in result.conversations]
    with atomic_text(path, what="the simulated conversations") as out:
        out.write("\n".join(rows) + "\n")
