"""The ids a pass over a dataset has used so far, kept off the heap.

Duplicate ids are an error that names where the id was first used, so every id and its row's
location must be remembered until the pass ends. Held in a dict that costs about 230 bytes per
row, which at a million rows is most of a run's memory; held in a private temporary SQLite
database (on disk past SQLite's small page cache, deleted when closed) it costs a few MB at any
size and about 2 µs per row.
"""

from __future__ import annotations

import sqlite3
from types import TracebackType


class SeenIds:
    """Sample ids and the location that first used each; use as a context manager."""

    def __init__(self) -> None:
        # "" opens a fresh temporary database that SQLite removes on close; nothing here needs
        # to survive a crash, so no journal and no syncing.
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(
            "CREATE TABLE seen (id TEXT PRIMARY KEY, location TEXT NOT NULL) WITHOUT ROWID"
        )
        self._db.execute("BEGIN")

    def first_use(self, sample_id: str, location: str) -> str | None:
        """Record that `location` uses `sample_id`; the location that used it first, if any."""
        inserted = self._db.execute(
            "INSERT INTO seen VALUES (?, ?) ON CONFLICT DO NOTHING", (sample_id, location)
        )
        if inserted.rowcount:
            return None
        row = self._db.execute("SELECT location FROM seen WHERE id = ?", (sample_id,)).fetchone()
        return str(row[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SeenIds:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
