"""How well a judge finds unfaithful responses, on human labels (RAGTruth, SummEdits, HaluEval).

Reads JSONL files in the format of `../shared/benchmarks/README.md` from the path given (VERA
never depends on them otherwise), runs a judge on every row, and reports, for the unfaithful
class: precision, recall, F1, balanced accuracy and AUROC, overall and per task type; the
character-level F1 of the claims marked unsupported against `hallucinated_spans` (RAGTruth);
and throughput.

A response is flagged unfaithful when any claim is not FULLY_SUPPORTED; its score for AUROC is
`1 - min support` over its claims: the judge's probability that its least supported claim is
unsupported where it gives one (`ClaimVerdict.entailment`), else that of the verdict's weight.

`--fold 1` keeps only the RAGTruth rows whose source document is in fold 1 of the fixed split
the offline judge's verifier was trained with (`training/verifier/`): documents it never saw.

    .venv/bin/python benchmarks/judge_accuracy.py ../shared/benchmarks/ragtruth_dev.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vera.analysis import analyse_claims
from vera.judges.base import Judge
from vera.judges.offline import OfflineJudge
from vera.judges.registry import create_judge
from vera.pipelines.verification import support
from vera.settings import load_settings
from vera.types import Sample, Verdict


def source_of(row_id: str) -> str:
    """A RAGTruth row's source document: every generator's answer about it shares one."""
    match = re.match(r"ragtruth-(\d+)-", row_id)
    return match.group(1) if match else row_id


def fold_of(row_id: str) -> int:
    """A fixed two-way split by source document; the verifier trains on fold 0 only."""
    return hashlib.md5(source_of(row_id).encode()).digest()[0] % 2


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Mann-Whitney AUROC, ties counted half."""
    positives = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    negatives = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    if not positives or not negatives:
        return None
    ranked = sorted((s, y) for s, y in zip(scores, labels, strict=True))
    rank_sum = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        average = (i + j + 1) / 2  # 1-based ranks i+1..j
        rank_sum += average * sum(1 for k in range(i, j) if ranked[k][1] == 1)
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def classification(predicted: Sequence[int], labels: Sequence[int]) -> dict[str, float]:
    tp = sum(p == 1 and y == 1 for p, y in zip(predicted, labels, strict=True))
    fp = sum(p == 1 and y == 0 for p, y in zip(predicted, labels, strict=True))
    fn = sum(p == 0 and y == 1 for p, y in zip(predicted, labels, strict=True))
    tn = sum(p == 0 and y == 0 for p, y in zip(predicted, labels, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    specificity = tn / (tn + fp) if tn + fp else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "balanced_accuracy": (recall + specificity) / 2,
    }


def span_overlap(
    marked: Sequence[tuple[int, int]], gold: Sequence[tuple[int, int]]
) -> tuple[int, int, int]:
    """Characters marked, characters gold, characters in both."""
    marked_chars = {c for start, end in marked for c in range(start, end)}
    gold_chars = {c for start, end in gold for c in range(start, end)}
    return len(marked_chars), len(gold_chars), len(marked_chars & gold_chars)


def summarise(rows: Sequence[dict[str, Any]], outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The figures for `outcomes` (one `{"flagged", "score", "spans"}` per row): classification
    and AUROC overall ("all") and per task type, and span-level figures where rows have spans."""
    groups: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        groups["all"].append(index)
        groups[row.get("task_type") or row.get("dataset", "?")].append(index)
    figures: dict[str, Any] = {}
    for name, indices in groups.items():
        labels = [int(rows[i]["label"]) for i in indices]
        predicted = [outcomes[i]["flagged"] for i in indices]
        scores = [outcomes[i]["score"] for i in indices]
        figures[name] = {
            **classification(predicted, labels),
            "auroc": auroc(scores, labels),
            "n": len(indices),
        }
    marked_total = gold_total = both_total = 0
    for row, outcome in zip(rows, outcomes, strict=True):
        gold = [(s["start"], s["end"]) for s in row.get("hallucinated_spans") or []]
        if "hallucinated_spans" not in row:
            continue
        marked, gold_chars, both = span_overlap(outcome["spans"], gold)
        marked_total, gold_total, both_total = (
            marked_total + marked,
            gold_total + gold_chars,
            both_total + both,
        )
    if gold_total:
        precision = both_total / marked_total if marked_total else 0.0
        recall = both_total / gold_total
        figures["span"] = {
            "precision": precision,
            "recall": recall,
            "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        }
    return figures


async def judge_rows(
    rows: list[dict[str, Any]],
    spec: str,
    concurrency: int,
    min_support: float | None = None,
    model: Path | None = None,
) -> list[dict[str, Any]]:
    settings = load_settings({"judge": spec, "offline_min_support": min_support})
    judge: Judge
    if model is None:
        judge = create_judge(settings.judge, settings)
    elif spec.replace(" ", "").lower() == "offline:learned":
        judge = OfflineJudge(learned=True, min_support=min_support, model_path=model)
    else:
        raise SystemExit("--model needs --judge offline:learned")
    slots = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        sample = Sample(
            id=row["id"], query=row.get("query", ""), response=row["response"],
            contexts=row["contexts"],
        )  # fmt: skip
        async with slots:
            claims, verdicts = await analyse_claims(sample, judge)
        supports = [support(v) for v in verdicts]
        unsupported = [
            c
            for c, v in zip(claims, verdicts, strict=True)
            if v.verdict is not Verdict.FULLY_SUPPORTED
        ]
        return {
            "flagged": int(bool(unsupported)),
            "score": 1.0 - min(supports) if supports else 0.0,
            "spans": [c.span for c in unsupported if c.span is not None],
        }

    return list(await asyncio.gather(*(one(row) for row in rows)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--judge", default="offline")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    parser.add_argument("--fold", type=int, choices=(0, 1), help="only RAGTruth rows of this fold")
    parser.add_argument(
        "--model",
        type=Path,
        help="offline:learned with this support_model.json (train_features.py --write-heldout)",
    )
    parser.add_argument(
        "--min-support",
        type=float,
        help="offline:learned's threshold (vera eval --offline-min-support), to try others",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.path.read_text(encoding="utf-8").splitlines() if line]
    if args.fold is not None:
        rows = [r for r in rows if fold_of(str(r["id"])) == args.fold]
    rows = rows[: args.limit] if args.limit else rows
    started = time.perf_counter()
    outcomes = asyncio.run(
        judge_rows(rows, args.judge, args.concurrency, args.min_support, args.model)
    )
    elapsed = time.perf_counter() - started

    figures: dict[str, Any] = {"judge": args.judge, "rows": len(rows)}
    if args.model is not None:
        figures["model"] = str(args.model)
    if args.min_support is not None:
        figures["min_support"] = args.min_support
    figures.update(summarise(rows, outcomes))
    figures["samples_per_s"] = len(rows) / elapsed
    print(json.dumps(figures, indent=2))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
