"""VERA's `tool_call_accuracy` beside DeepEval's `ToolCorrectnessMetric` on the bundled agent
rows, as `ragas_tool_call_accuracy.py` does for RAGAS (docs/metrics.md explains the table).

DeepEval is no dependency of VERA: install it in an environment of its own and name its python.
Its metric is scored with `evaluation_params=[INPUT_PARAMETERS]` (arguments compared, as VERA
does) and no `available_tools` (no model is called: the script sets a dummy OpenAI key only
because the metric builds its default model when created):

    python3 -m venv /tmp/agents-peers/deval
    /tmp/agents-peers/deval/bin/pip install deepeval==4.3.1
    .venv/bin/python benchmarks/deepeval_tool_correctness.py \\
        --deepeval-python /tmp/agents-peers/deval/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from typing import Any

from ragas_tool_call_accuracy import ROWS, _rows, _score_vera


def _score_deepeval() -> dict[str, dict[str, float]]:
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams

    scores: dict[str, dict[str, float]] = {}
    for row in _rows():
        if "expected_tool_calls" not in row:
            continue  # DeepEval would score 0 or 1 on an empty list; VERA says not applicable
        called = [
            ToolCall(
                name=c["function"]["name"], input_parameters=json.loads(c["function"]["arguments"])
            )
            for m in row["messages"]
            for c in m.get("tool_calls") or []
        ]
        expected = [
            ToolCall(name=c["name"], input_parameters=c["arguments"])
            for c in row["expected_tool_calls"]
        ]
        case = LLMTestCase(
            input=row["messages"][1]["content"],
            actual_output=row["messages"][-1]["content"],
            tools_called=called,
            expected_tools=expected,
        )
        scores[row["id"]] = {}
        for label, ordering in (("ordered", True), ("unordered", False)):
            metric = ToolCorrectnessMetric(
                evaluation_params=[ToolCallParams.INPUT_PARAMETERS],
                should_consider_ordering=ordering,
                async_mode=False,
            )
            scores[row["id"]][label] = float(metric.measure(case, _show_indicator=False))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deepeval-python", help="the python of an environment with deepeval")
    parser.add_argument("--score-deepeval", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score_deepeval:
        print(json.dumps(_score_deepeval()))
        return
    if not args.deepeval_python:
        parser.error("--deepeval-python is required (see the module docstring)")
    env = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "OPENAI_API_KEY": "sk-unused"}
    ran = subprocess.run(
        [args.deepeval_python, __file__, "--score-deepeval"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    theirs: dict[str, Any] = json.loads(ran.stdout.strip().splitlines()[-1])
    ours = _score_vera()
    print(f"rows: {ROWS.name}")
    print("| row | VERA ordered | DeepEval ordering | VERA unordered | DeepEval no ordering |")
    print("|---|---|---|---|---|")
    for row in _rows():
        cells = []
        for label in ("ordered", "unordered"):
            mine = ours.get(row["id"], {}).get(label)
            other = theirs.get(row["id"], {}).get(label)
            cells.append("n/a" if mine is None else f"{mine:.3f}")
            cells.append("n/a" if other is None else f"{other:.3f}")
        print(f"| {row['id']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
