"""VERA's `tool_call_accuracy` beside RAGAS's `ToolCallAccuracy` on the bundled agent rows.

RAGAS is no dependency of VERA: install it in an environment of its own and name its python.
The script runs itself there with `--score-ragas` (that half reads the JSONL file and imports
only RAGAS), scores the same rows with VERA here, and prints both, row by row, as Markdown
(docs/metrics.md shows the table and explains each difference). RAGAS 0.4.3 imports
`langchain_community.chat_models.vertexai`, which langchain-community 0.4 no longer has: pin
it below 0.4, as the install line does.

    python3 -m venv /tmp/agents-peers/venv
    /tmp/agents-peers/venv/bin/pip install ragas==0.4.3 "langchain-community<0.4"
    .venv/bin/python benchmarks/ragas_tool_call_accuracy.py \\
        --ragas-python /tmp/agents-peers/venv/bin/python
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

WHITEBOX = "the agent metrics' own parts; the built-in metric classes behind the names"

ROWS = Path(__file__).resolve().parents[1] / "src/vera/datasets/examples/agents.jsonl"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROWS.read_text(encoding="utf-8").splitlines() if line]


def _ragas_messages(messages: list[dict[str, Any]]) -> list[Any]:
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage

    out: list[Any] = []
    for message in messages:
        role = message["role"]
        if role == "user":
            out.append(HumanMessage(content=message["content"]))
        elif role == "tool":
            out.append(ToolMessage(content=message["content"]))
        elif role == "assistant":
            calls = [
                ToolCall(name=c["function"]["name"], args=json.loads(c["function"]["arguments"]))
                for c in message.get("tool_calls") or []
            ]
            out.append(AIMessage(content=message["content"] or "", tool_calls=calls or None))
    return out


async def _score_ragas() -> dict[str, dict[str, float]]:
    from ragas.messages import ToolCall
    from ragas.metrics.collections import ToolCallAccuracy

    scores: dict[str, dict[str, float]] = {}
    for row in _rows():
        if "expected_tool_calls" not in row:
            continue  # RAGAS needs reference_tool_calls; VERA says not applicable
        reference = [
            ToolCall(name=c["name"], args=c["arguments"]) for c in row["expected_tool_calls"]
        ]
        messages = _ragas_messages(row["messages"])
        scores[row["id"]] = {}
        for label, strict in (("ordered", True), ("unordered", False)):
            metric = ToolCallAccuracy(strict_order=strict)
            result = await metric.ascore(user_input=messages, reference_tool_calls=reference)
            scores[row["id"]][label] = float(result.value)
    return scores


def _score_vera() -> dict[str, dict[str, float | None]]:
    import vera
    from vera.metrics._agent_calls import ToolCallOptions
    from vera.metrics._agent_tools import ToolCallAccuracy

    scores: dict[str, dict[str, float | None]] = {}
    for label, ordered in (("ordered", True), ("unordered", False)):
        metric = ToolCallAccuracy(options=ToolCallOptions(ordered=ordered))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = vera.evaluate(str(ROWS), metrics=[metric])
        for sample in report.samples:  # a conversation's calls are scored on its last answer
            score = sample.results["tool_call_accuracy"].score
            conversation = scores.setdefault(sample.id.split("/")[0], {})
            if score is not None or label not in conversation:
                conversation[label] = score
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ragas-python", help="the python of an environment with ragas")
    parser.add_argument("--score-ragas", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score_ragas:
        print(json.dumps(asyncio.run(_score_ragas())))
        return
    if not args.ragas_python:
        parser.error("--ragas-python is required (see the module docstring)")
    ran = subprocess.run(
        [args.ragas_python, __file__, "--score-ragas"], capture_output=True, text=True, check=True
    )
    theirs = json.loads(ran.stdout.strip().splitlines()[-1])
    ours = _score_vera()
    print(
        "| row | VERA ordered | RAGAS strict_order=True | VERA unordered "
        "| RAGAS strict_order=False |"
    )
    print("|---|---|---|---|---|")
    for row in _rows():
        rid = row["id"]
        cells = []
        for label in ("ordered", "unordered"):
            mine = ours.get(rid, {}).get(label)
            cells.append("n/a" if mine is None else f"{mine:.3f}")
            other = theirs.get(rid, {}).get(label)
            cells.append("n/a (no reference)" if other is None else f"{other:.3f}")
        print(f"| {rid} | " + " | ".join(cells) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
