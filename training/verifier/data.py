"""Claim-level training pairs for VERA's learned verifier, from the benchmark JSONL files.

Each pair is (claim, evidence, supported): the claim is one of the offline judge's claims (a
RAGTruth response sentence or clause; a whole SummEdits summary, whose label is per summary),
the evidence is what `vera.judges._offline.evidence_for` picks from the contexts, so
training sees exactly what inference will. A RAGTruth claim is unsupported when it overlaps a
human-marked hallucinated span.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vera.judges._offline import evidence_for, extract_claims, passages

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from judge_accuracy import fold_of, source_of

WHITEBOX = "the offline judge's own parts"

__all__ = ["Pair", "fold_of", "ragtruth_pairs", "read_rows", "source_of", "summary_pairs"]

EVIDENCE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Pair:
    row_id: str
    group: str  # the source document: rows sharing one never straddle a train/test split
    task_type: str
    claim: str
    evidence: str
    supported: int
    span: tuple[int, int]


def read_rows(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def ragtruth_pairs(
    rows: list[dict[str, object]], evidence_chars: int = EVIDENCE_CHARS
) -> Iterator[Pair]:
    for row in rows:
        contexts = [str(c) for c in row["contexts"]]  # type: ignore[attr-defined]
        response = str(row["response"])
        spans = [(int(s["start"]), int(s["end"])) for s in row.get("hallucinated_spans") or []]  # type: ignore[attr-defined]
        found = passages(contexts)
        for claim in extract_claims(response):
            start, end = claim.span or (0, len(response))
            bad = any(s < end and start < e for s, e in spans)
            yield Pair(
                str(row["id"]),
                source_of(str(row["id"])),
                str(row["task_type"]),
                claim.text,
                evidence_for(claim.text, contexts, max_chars=evidence_chars, found=found),
                0 if bad else 1,
                (start, end),
            )


def summary_pairs(
    rows: list[dict[str, object]], evidence_chars: int = EVIDENCE_CHARS
) -> Iterator[Pair]:
    for row in rows:
        contexts = [str(c) for c in row["contexts"]]  # type: ignore[attr-defined]
        response = str(row["response"])
        yield Pair(
            str(row["id"]),
            str(row["id"]),
            str(row["task_type"]),
            response,
            evidence_for(response, contexts, max_chars=evidence_chars),
            1 - int(row["label"]),  # type: ignore[call-overload]
            (0, len(response)),
        )
