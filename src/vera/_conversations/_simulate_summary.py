"""What `vera generate --conversations` prints and writes: plain lines and the JSONL file."""

from __future__ import annotations

import json
from pathlib import Path

from vera._conversations._simulate import STOP_REASONS, SimulationResult
from vera._conversations._simulate_estimate import SimulationEstimate
from vera._generate._summary import _usd, usage_line
from vera.render._outputs import atomic_text


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


def simulation_estimate_line(estimate: SimulationEstimate) -> str:
    """The dry run's figures, and what they leave out."""
    written = f"{estimate.scenario_calls} scenario-writing, " if estimate.scenario_calls else ""
    return (
        f"Dry run · {estimate.scenarios} scenarios of up to {estimate.turns} user turns · at most "
        f"{written}{estimate.simulator_calls} simulated-user and {estimate.judge_calls} judge "
        f"({estimate.judge}) calls · about {estimate.prompt_tokens} prompt and "
        f"{estimate.completion_tokens} completion tokens · {_usd(estimate.cost_usd)} if every "
        f"conversation runs to the turn limit; at least {estimate.least_calls} calls if every "
        "simulated user stops at once. Your assistant's own calls are not counted: the dry run "
        "does not run it. No call was made."
    )


def write_conversations(result: SimulationResult, path: Path) -> None:
    """The conversations as JSONL, one a line (`vera eval --dataset PATH` reads it)."""
    rows = [json.dumps(row, ensure_ascii=False) for row in result.conversations]
    with atomic_text(path, what="the simulated conversations") as out:
        out.write("\n".join(rows) + "\n")
