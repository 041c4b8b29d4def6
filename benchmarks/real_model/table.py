"""The real-model benchmark's table, from the JSON that run.py and peers.py wrote.

One line per run (named by its JSON file: framework, mode, variant) and row set; then, per
row set, the answer-verdict balanced accuracy of the first run and each other one on the rows
both scored (runs stopped early judged different numbers of rows: only the rows both judged
compare like with like).

    python benchmarks/real_model/table.py benchmarks/real_model/results/*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rows import balanced_accuracy, row_sets

COLUMNS = (
    "| run (results/*.json) | rows | scored / errored | re-asked (of calls) | calls a sample "
    "| prompt / completion tokens a sample | s a sample | balanced accuracy: any claim "
    "unsupported (score < 1) | score < 0.5 |"
)


def _flags(run: dict[str, Any]) -> dict[str, int]:
    """Each scored row's flag (1: the answer is judged unfaithful), by row id."""
    if "verdicts" in run:
        return {k: int(v == "unfaithful") for k, v in run["verdicts"].items() if v != "error"}
    return {k: int(v < 1.0) for k, v in run.get("scores", {}).items() if v is not None}


def _line(run: dict[str, Any]) -> str:
    name = run["source"]
    reasked = run.get("invalid_replies_reasked")
    asked = "—" if reasked is None else f"{reasked} of {run['calls']}"
    return (
        f"| {name} | {run['rows']} | {run['scored']} of {run['samples']} / {run['errored']} "
        f"| {asked} | {run['calls_per_sample']} | {run['prompt_tokens_per_sample']:,} / "
        f"{run['completion_tokens_per_sample']:,} | {run['seconds_per_sample']} "
        f"| {run['balanced_accuracy']} | {run['balanced_accuracy_below_half']} |"
    )


def main() -> None:
    runs = [
        {**run, "source": Path(path).stem}
        for path in sys.argv[1:]
        for run in json.loads(Path(path).read_text())
    ]
    print(COLUMNS)
    print("|" + " --- |" * COLUMNS.count(" |"))
    for run in runs:
        print(_line(run))
    labels = {r["id"]: r["label"] for rows in row_sets(10, 10).values() for r in rows}
    for rows in sorted({run["rows"] for run in runs}):
        first, *others = [run for run in runs if run["rows"] == rows and _flags(run)]
        for other in others:
            common = sorted(set(_flags(first)) & set(_flags(other)))
            if not common:
                continue
            shown = [
                f"{run['source']} "
                f"{balanced_accuracy([(labels[i], _flags(run)[i]) for i in common])}"
                for run in (first, other)
            ]
            hallucinated = sum(labels[i] for i in common)
            print(
                f"\n{rows}, the {len(common)} rows both scored ({hallucinated} hallucinated): "
                + " against ".join(shown)
            )


if __name__ == "__main__":
    main()
