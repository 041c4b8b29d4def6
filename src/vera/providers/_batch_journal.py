"""The provider batch journal's tables in the run history: the batches of `--batch` runs,
recorded as soon as the provider accepted them, so a resumed run takes their results instead of
paying for them again. This module owns the `batches` feature of the history file (its
`Schema`, see `vera._sqlite_file`) and every query of it.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Callable

from vera._sqlite_file import Schema, SqliteFile
from vera.providers._batch import INTENT_PREFIX, BatchRecord


def _m1_batches(db: sqlite3.Connection) -> None:
    """Version 1: one row per batch of a run; `keys` is the zlib-compressed JSON list of the
    request ids (response-cache keys)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS batches (run_id TEXT NOT NULL REFERENCES runs(id), "
        "batch_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, "
        "status TEXT NOT NULL, succeeded INTEGER NOT NULL, failed INTEGER NOT NULL, "
        "requests INTEGER NOT NULL, keys BLOB NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, PRIMARY KEY (run_id, batch_id))"
    )


BATCHES = Schema("batches", (_m1_batches,))
"""The batch journal's tables (history layout 4 of the single chain before the registry)."""


def save_batch(file: SqliteFile, run_id: str, batch: BatchRecord) -> None:
    """Record a provider batch of the run, or its new status and counts."""
    file.adopt(BATCHES)
    keys = zlib.compress(json.dumps(list(batch.keys)).encode("utf-8"), 6)
    file.execute(
        "INSERT INTO batches (run_id, batch_id, provider, model, status, succeeded, failed, "
        "requests, keys, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run_id, batch_id) DO UPDATE SET status = excluded.status, "
        "succeeded = excluded.succeeded, failed = excluded.failed, "
        "updated = excluded.updated",
        (
            run_id,
            batch.batch_id,
            batch.provider,
            batch.model,
            batch.status,
            batch.succeeded,
            batch.failed,
            len(batch.keys),
            keys,
            batch.created,
            time.time(),
        ),
    )


def stored_batches(file: SqliteFile, run_id: str, *, intents: bool = False) -> list[BatchRecord]:
    """The provider batches of a run, oldest first (none in a file without the journal's
    tables, which a reader never adds); with `intents`, the intents recorded before each batch
    was created too (their `batch_id` starts with `INTENT_PREFIX`)."""
    if file.version_of(BATCHES.name) == 0:
        return []
    file.adopt(BATCHES)  # refuses tables of a newer VERA
    rows = file.execute(
        "SELECT batch_id, provider, model, status, succeeded, failed, keys, created "
        "FROM batches WHERE run_id = ? AND (? OR substr(batch_id, 1, ?) != ?) "
        "ORDER BY created, batch_id",
        (run_id, intents, len(INTENT_PREFIX), INTENT_PREFIX),
    )
    return [
        BatchRecord(
            batch_id=row[0],
            provider=row[1],
            model=row[2],
            status=row[3],
            succeeded=row[4],
            failed=row[5],
            keys=tuple(json.loads(zlib.decompress(row[6]))),
            created=row[7],
        )
        for row in rows
    ]


class HistoryBatchJournal:
    """The `BatchJournal` of one run (`vera.providers._batch`): its batches in the history
    file where the run has one, and each change of state told to `progress`."""

    def __init__(
        self,
        file: SqliteFile | None,
        run_id: str | None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.file, self.run_id, self._progress = file, run_id, progress

    def recorded(self) -> list[BatchRecord]:
        if self.file is None or self.run_id is None:
            return []
        return stored_batches(self.file, self.run_id, intents=True)

    def save(self, record: BatchRecord) -> None:
        if self.file is not None and self.run_id is not None:
            save_batch(self.file, self.run_id, record)

    def progress(self, line: str) -> None:
        if self._progress is not None:
            self._progress(line)
