"""The baselines' pass results in the run history: the results of a run's other passes (its
baselines'), by pass name, so the paired statistics read their pairs from the file and no pass
keeps its samples. This module owns the `passes` feature of the history file (its `Schema`, see
`vera._sqlite_file`) and every query of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from vera._sqlite_file import Schema
from vera._store._history import RunStore
from vera._store._results import pack_result
from vera._types._report import SampleResult


def _m1_pass_results(db: sqlite3.Connection) -> None:
    """Version 1: one row per sample of a pass, its result stored as in `results`."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS pass_results (
    run_id TEXT NOT NULL REFERENCES runs(id),
    pass TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    result BLOB NOT NULL,  -- as in results
    PRIMARY KEY (run_id, pass, sample_id)
)"""
    )


PASSES = Schema("passes", (_m1_pass_results,))
"""The pass results' tables (history layout 6 of the single chain before the registry)."""


def add_pass_result(
    store: RunStore, run_id: str, pass_name: str, position: int, result: SampleResult
) -> None:
    """Store one finished sample of the run's pass `pass_name` (a baseline's), at once."""
    store.file.adopt(PASSES)
    store.file.execute(
        "INSERT OR REPLACE INTO pass_results (run_id, pass, sample_id, position, result) "
        "VALUES (?, ?, ?, ?, ?)",
        (run_id, pass_name, result.id, position, pack_result(result)),
    )


def pass_pairs(
    store: RunStore, run_id: str, pass_name: str
) -> Iterator[tuple[SampleResult, SampleResult]]:
    """The results of `run_id` paired with those of its pass `pass_name` that have the same
    sample id, in sample-id order, read a batch at a time (see `RunStore.pairs`); none from
    a file without the passes' tables, which a reader never adds."""
    if store.file.read_only and store.file.version_of(PASSES.name) == 0:
        return iter(())
    store.file.adopt(PASSES)
    return store.pairs(run_id, "pass_results b ON b.run_id = ? AND b.pass = ?", (run_id, pass_name))
