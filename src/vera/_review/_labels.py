"""The review's tables in the run history: the labels people give in `vera view --review`,
beside the judge's verdicts (never in place of them). Rows are only added: the newest per sample
(and claim) counts, and the older ones stay as the record of who said what when. This module
owns the `labels` feature of the history file (its `Schema`, see `vera._sqlite_file`) and every
query of it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from vera._sqlite_file import Schema
from vera._store._history import RunStore
from vera._types._secrets import redact


def _m1_labels(db: sqlite3.Connection) -> None:
    """Version 1: the labels, and the index that reads a run's in order."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id),
    sample_id TEXT NOT NULL,
    claim TEXT,  -- NULL: the label of the whole response; else the claim's text
    label TEXT NOT NULL,  -- faithful / unfaithful, or the verdict a person gave the claim
    note TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    queue TEXT NOT NULL,
    created REAL NOT NULL
)"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS labels_by_run ON labels (run_id, sample_id, id)")


LABELS = Schema("labels", (_m1_labels,))
"""The review's tables (history layout 3 of the single chain before the registry)."""


@dataclass(frozen=True)
class StoredLabel:
    """One label a person gave (`add_labels`): of a sample's whole response (`claim` None:
    "faithful" or "unfaithful") or of one of its claims (a verdict's value)."""

    id: int
    run_id: str
    sample_id: str
    claim: str | None
    label: str
    note: str
    reviewer: str
    queue: str
    created: float


def add_labels(
    store: RunStore,
    run_id: str,
    sample_id: str,
    labels: Sequence[tuple[str | None, str]],
    *,
    reviewer: str,
    queue: str,
    note: str = "",
) -> list[StoredLabel]:
    """Store a person's labels of one sample, (claim or None for the whole response, label)
    each, `note` with the first, as one INSERT: one transaction that only adds rows. The
    caller checks what they say (`vera._review._review.add_label`)."""
    store.file.adopt(LABELS)
    created, note = time.time(), redact(note)
    rows = [
        (run_id, sample_id, claim, label, note if i == 0 else "", reviewer, queue, created)
        for i, (claim, label) in enumerate(labels)
    ]
    marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows))
    ids = store.file.execute(
        "INSERT INTO labels (run_id, sample_id, claim, label, note, reviewer, queue, "
        f"created) VALUES {marks} RETURNING id",
        [value for row in rows for value in row],
    )
    # Row ids grow in insertion order; RETURNING promises no order, so they are sorted.
    found = sorted(int(row[0]) for row in ids)
    return [StoredLabel(i, *row) for i, row in zip(found, rows, strict=True)]


def stored_labels(store: RunStore, run_id: str) -> list[StoredLabel]:
    """Every label of a run, oldest first; none in a file without the review's tables (read
    as it is, never migrated by a reader)."""
    if store.file.version_of(LABELS.name) == 0:
        return []
    store.file.adopt(LABELS)  # refuses tables of a newer VERA
    rows = store.file.execute(
        "SELECT id, run_id, sample_id, claim, label, note, reviewer, queue, created "
        "FROM labels WHERE run_id = ? ORDER BY id",
        (run_id,),
    )
    return [StoredLabel(*row) for row in rows]
