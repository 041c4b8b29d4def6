"""The rows every framework judges in the real-model benchmark, and how their verdicts score.

Plain JSON, no VERA import: the peers' runner (`peers.py`) reads the same rows in its own
virtual environment. Two sets, each a fixed, deterministic choice:

- "example": the bundled example's first N samples; a sample is hallucinated when its
  `metadata.planted` names the error planted in it.
- "ragtruth": the first N rows of each task type (QA, Summary, Data2txt) of the shared RAGTruth
  dev file, taken in turns by type; RAGTruth's label (1: the response has a hallucinated span).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXAMPLE = ROOT / "src" / "vera" / "datasets" / "examples" / "example.jsonl"
RAGTRUTH = ROOT / "benchmarks" / "data" / "ragtruth_dev.jsonl"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"

Row = dict[str, Any]
"""{id, query, response, contexts: [text], label: 0 | 1}."""


def _texts(contexts: list[Any]) -> list[str]:
    return [c["text"] if isinstance(c, dict) else str(c) for c in contexts]


def example_rows(count: int) -> list[Row]:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    return [
        {
            "id": r["id"],
            "query": r["query"],
            "response": r["response"],
            "contexts": _texts(r["contexts"]),
            "label": int((r.get("metadata") or {}).get("planted") is not None),
        }
        for r in rows[:count]
    ]


def ragtruth_rows(per_task: int) -> list[Row]:
    """The first `per_task` rows of each task type, in turns (one of each type, then the
    next of each), so that a run stopped early has judged the types alike."""
    by_task: dict[str, list[Row]] = {}
    for line in RAGTRUTH.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        taken = by_task.setdefault(row["task_type"], [])
        if len(taken) >= per_task:
            continue
        taken.append(
            {
                "id": row["id"],
                "query": row["query"],
                "response": row["response"],
                "contexts": _texts(row["contexts"]),
                "label": int(row["label"]),
            }
        )
    turns = zip(*(by_task[task] for task in sorted(by_task)), strict=False)
    return [row for turn in turns for row in turn]


def row_sets(example: int, ragtruth: int) -> dict[str, list[Row]]:
    sets = {"example": example_rows(example), "ragtruth": ragtruth_rows(ragtruth)}
    return {name: rows for name, rows in sets.items() if rows}


def balanced_accuracy(pairs: list[tuple[int, int]]) -> float | None:
    """Mean recall of both classes, for (label, flagged) pairs; None without both classes."""
    recalls = []
    for cls in (0, 1):
        of_class = [flagged for label, flagged in pairs if label == cls]
        if not of_class:
            return None
        recalls.append(sum(flagged == cls for flagged in of_class) / len(of_class))
    return round(sum(recalls) / 2, 3)
