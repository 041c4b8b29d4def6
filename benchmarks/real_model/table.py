"""The real-model benchmark's table, from the JSON that run.py and peers.py wrote.

One line per framework, mode and row set; then, per row set, the answer-verdict balanced
accuracy of each on the rows every one of them scored (runs stopped early judged different
numbers of rows: only the rows all judged compare like with like).

    python benchmarks/real_model/table.py benchmarks/real_model/results/*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rows import balanced_accuracy, row_sets

COLUMNS = (
    "| framework · mode | rows | scored / errored | re-asked (of calls) | calls a sample "
    "| prompt / completion tokens a sample | s a sample | balanced accuracy: any claim "
    "unsupported (score < 1) | score < 0.5 |"
)


def _flags(run: dict[str, Any]) -> dict[str, int]:
    """Each scored row's flag (1: the answer is judged unfaithful), by row id."""
    if "verdicts" in run:
        return {k: int(v == "unfaithful") for k, v in run["verdicts"].items() if v != "error"}
    return {k: int(v < 1.0) for k, v in run.get("scores", {}).items() if v is not None}


def _line(run: dict[str, Any]) -> str:
    name = run["framework"] + (f" · {run['mode']}" if run.get("mode") else "")
    reasked = run.get("invalid_replies_reasked")
    asked = "—" if reasked is None else f"{reasked} of {run['calls']}"
    return (
        f"| {name} | {run['rows']} | {run['scored']} of {run['samples']} / {run['errored']} "
        f"| {asked} | {run['calls_per_sample']} | {run['prompt_tokens_per_sample']:,} / "
        f"{run['completion_tokens_per_sample']:,} | {run['seconds_per_sample']} "
        f"| {run['balanced_accuracy']} | {run['balanced_accuracy_below_half']} |"
    )


def main() -> None:
    runs = [run for path in sys.argv[1:] for run in json.loads(Path(path).read_text())]
    print(COLUMNS)
    print("|" + " --- |" * COLUMNS.count(" |"))
    for run in runs:
        print(_line(run))
    labels = {r["id"]: r["label"] for rows in row_sets(10, 10).values() for r in rows}
    for rows in sorted({run["rows"] for run in runs}):
        of_set = [run for run in runs if run["rows"] == rows and _flags(run)]
        common = set.intersection(*(set(_flags(run)) for run in of_set)) if of_set else set()
        if len(of_set) < 2 or not common:
            continue
        figures = []
        for run in of_set:
            flags = _flags(run)
            pairs = [(labels[i], flags[i]) for i in sorted(common)]
            figures.append(f"{run['framework']} {balanced_accuracy(pairs)}")
        hallucinated = sum(labels[i] for i in common)
        print(
            f"\n{rows}, the {len(common)} rows all scored ({hallucinated} hallucinated): "
            + ", ".join(figures)
        )


if __name__ == "__main__":
    main()
