"""A scripted simulated user for the loopback server, in the dialect of the `simulate_user`
prompt; every other prompt (the judge's) gets `scripted_openai`.

It reads the prompt as a model would: the scenario's goal (the line "Goal: ..." of its
<scenario> section) and how many user turns the <conversation> section holds, and sends the
scripted reply of that goal at that index (the last one again past the end). A fake, explicit
in what it does: the replies are the test's own. A call of the `simulate_scenarios` prompt
gets `scenarios`, as they are given (entries of any shape).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from tests.support.loopback import Recorded, Reply, ok_openai
from tests.support.scripted import scripted_openai, section

__all__ = ["SimulatedUser", "say"]


def say(
    message: str,
    *cited: tuple[str, str],
    goal_reached: bool = False,
    give_up: bool = False,
) -> dict[str, Any]:
    """One reply of the simulated user; `cited` are (document id, quote) pairs."""
    citations = [{"document_id": d, "quote": q} for d, q in cited]
    return {
        "message": message,
        "citations": citations,
        "goal_reached": goal_reached,
        "give_up": give_up,
    }


class SimulatedUser:
    """`loopback.default`: scripted user replies by goal, the scripted judge for the rest."""

    def __init__(
        self, script: dict[str, Sequence[dict[str, Any]]], scenarios: Sequence[Any] = ()
    ) -> None:
        self.script = script
        self.scenarios = list(scenarios)
        self.scenario_prompts: list[str] = []
        self.asked: list[tuple[str, int]] = []
        """(goal, user turns so far) of each simulated-user call, in arrival order."""
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        prompt = request.json["messages"][-1]["content"]
        if "JSON object with the key scenarios" in prompt:
            with self._lock:
                self.scenario_prompts.append(prompt)
            return ok_openai(json.dumps({"scenarios": self.scenarios}))
        if "<scenario>\n" not in prompt:
            return scripted_openai(request)
        goal = section(prompt, "scenario").splitlines()[0].removeprefix("Goal: ")
        lines = section(prompt, "conversation").splitlines()
        turns = sum(line.startswith("user: ") for line in lines)
        with self._lock:
            self.asked.append((goal, turns))
        replies = self.script[goal]
        return ok_openai(json.dumps(replies[min(turns, len(replies) - 1)]))
