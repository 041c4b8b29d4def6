"""The monitor's part of the run history: its windows (each one a run of `RunStore`), the
counts of what each window received, kept and dropped, and the alerts raised on them.

The tables are in the history file beside the runs, so `vera runs`, `vera compare` and `vera
view` see a window as the run it is; this module owns them: the `monitor` feature of that file
(its `Schema`, see `vera._sqlite_file`) and every query of it but `RunStore.monitor_window`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vera._plan import RunPlan
from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT, Schema, SqliteFile
from vera._store._history import RunStore

MONITOR_COUNTS = (
    "spans",
    "traces",
    "kept",
    "not_sampled",
    "filtered",
    "dropped",
    "over_budget",
    "incomplete",
    "invalid",
    "duplicates",
    "errors",
)
"""The counters of a monitor window (`monitor_windows` columns), see `vera._monitor`."""


def _m1_monitor(db: sqlite3.Connection) -> None:
    """Version 1: the windows (each one a run), what each received, kept and dropped, the
    alerts raised on them, and the index that finds a trace's result by its id (a trace is
    evaluated once)."""
    counts = ", ".join(f"{name} INTEGER NOT NULL DEFAULT 0" for name in MONITOR_COUNTS)
    db.execute(
        "CREATE TABLE IF NOT EXISTS monitor_windows (run_id TEXT PRIMARY KEY REFERENCES "
        "runs(id), monitor TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, "
        f"closed INTEGER NOT NULL DEFAULT 0, {counts}, UNIQUE (monitor, start))"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS monitor_alerts (run_id TEXT NOT NULL REFERENCES runs(id), "
        "created REAL NOT NULL, rule TEXT NOT NULL, metric TEXT NOT NULL, mean REAL, "
        "message TEXT NOT NULL, webhook TEXT)"
    )
    db.execute("CREATE INDEX IF NOT EXISTS results_by_sample ON results (sample_id)")


MONITOR = Schema("monitor", (_m1_monitor,))
"""The monitor's tables (history layout 5 of the single chain before the registry)."""


@dataclass(frozen=True)
class StoredAlert:
    run_id: str
    created: float
    rule: str
    metric: str
    mean: float | None
    message: str
    webhook: str | None


@dataclass(frozen=True)
class StoredWindow:
    """One window as stored: its run, its span of time and its counts."""

    run_id: str
    monitor: str
    start: float
    end: float
    closed: bool
    counts: dict[str, int]
    evaluated: int
    alerts: list[StoredAlert] = field(default_factory=list)


def dataset_name(monitor: str) -> str:
    """The dataset a monitor's windows are stored under."""
    return f"monitor:{monitor}"


class MonitorHistory:
    """The history as `vera monitor` writes it: windows, their results, counts and alerts."""

    def __init__(self, path: Path | str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
        self.runs = RunStore(path, lock_timeout=lock_timeout)
        try:
            self.runs.file.adopt(MONITOR)
        except BaseException:
            self.runs.close()
            raise
        self._file = self.runs.file

    @property
    def path(self) -> Path:
        return self.runs.path

    def window(self, monitor: str, start: float, end: float, plan: RunPlan) -> str:
        """The run id of `monitor`'s window starting at `start`, created when new."""
        found = self._window_id(monitor, start)
        if found is not None:
            return found
        run_id = self.runs.start(dataset_name(monitor), plan)
        self._file.execute(
            "INSERT OR IGNORE INTO monitor_windows (run_id, monitor, start, end) "
            "VALUES (?, ?, ?, ?)",
            (run_id, monitor, start, end),
        )
        return self._window_id(monitor, start) or run_id

    def _window_id(self, monitor: str, start: float) -> str | None:
        rows = self._file.execute(
            "SELECT run_id FROM monitor_windows WHERE monitor = ? AND start = ?", (monitor, start)
        )
        return str(rows[0][0]) if rows else None

    def add_counts(self, run_id: str, deltas: Mapping[str, int]) -> None:
        """Add `deltas` to a window's counters, in one statement."""
        names = [name for name, value in deltas.items() if value and name in MONITOR_COUNTS]
        if not names:
            return
        assignments = ", ".join(f"{name} = {name} + ?" for name in names)
        self._file.execute(
            f"UPDATE monitor_windows SET {assignments} WHERE run_id = ?",
            (*(deltas[name] for name in names), run_id),
        )

    def evaluated(self, monitor: str, trace_id: str) -> bool:
        """Whether a window of `monitor` holds the result of trace `trace_id` already."""
        rows = self._file.execute(
            "SELECT 1 FROM results r JOIN monitor_windows w ON r.run_id = w.run_id "
            "WHERE r.sample_id = ? AND w.monitor = ? LIMIT 1",
            (trace_id, monitor),
        )
        return bool(rows)

    def next_position(self, run_id: str) -> int:
        rows = self._file.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM results WHERE run_id = ?", (run_id,)
        )
        return int(rows[0][0])

    def open_windows(self, monitor: str) -> list[tuple[str, float, float]]:
        """`monitor`'s windows not closed yet, oldest first: (run id, start, end)."""
        rows = self._file.execute(
            "SELECT run_id, start, end FROM monitor_windows WHERE monitor = ? AND closed = 0 "
            "ORDER BY start",
            (monitor,),
        )
        return [(str(r[0]), float(r[1]), float(r[2])) for r in rows]

    def check_writable(self) -> None:
        """`StoreWriteError` now, not at the first window, when the history is read-only (a
        statement that changes nothing still needs the write lock)."""
        self._file.execute("UPDATE monitor_windows SET closed = closed WHERE 0")

    def mark_closed(self, run_id: str) -> None:
        self._file.execute("UPDATE monitor_windows SET closed = 1 WHERE run_id = ?", (run_id,))

    def add_alert(
        self, run_id: str, rule: str, metric: str, mean: float | None, message: str
    ) -> int:
        """Store an alert; its row id, to record the webhook's answer on."""
        self._file.execute(
            "INSERT INTO monitor_alerts (run_id, created, rule, metric, mean, message) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, time.time(), rule, metric, mean, message),
        )
        return int(self._file.execute("SELECT MAX(rowid) FROM monitor_alerts")[0][0])

    def webhook_answer(self, alert: int, answer: str) -> None:
        self._file.execute("UPDATE monitor_alerts SET webhook = ? WHERE rowid = ?", (answer, alert))

    def close(self) -> None:
        self.runs.close()


def read_windows(
    path: Path | str, *, monitor: str | None = None, limit: int = 168
) -> list[StoredWindow]:
    """The newest `limit` windows (of `monitor`, or of every monitor), oldest first, read
    without writing; none from a history older than the monitor's tables."""
    store = RunStore(path, read_only=True)
    file = store.file
    try:
        if file.version_of(MONITOR.name) == 0:
            return []
        file.adopt(MONITOR)  # refuses tables of a newer VERA
        where, params = ("WHERE monitor = ?", (monitor,)) if monitor else ("", ())
        columns = ", ".join(MONITOR_COUNTS)
        rows = file.execute(
            f"SELECT run_id, monitor, start, end, closed, {columns}, "
            "(SELECT COUNT(*) FROM results r WHERE r.run_id = w.run_id) "
            f"FROM monitor_windows w {where} ORDER BY start DESC LIMIT ?",
            (*params, limit),
        )
        alerts = _alerts(file, [str(r[0]) for r in rows])
    finally:
        store.close()
    windows = [
        StoredWindow(
            run_id=str(r[0]),
            monitor=str(r[1]),
            start=float(r[2]),
            end=float(r[3]),
            closed=bool(r[4]),
            counts=dict(zip(MONITOR_COUNTS, (int(v) for v in r[5:-1]), strict=True)),
            evaluated=int(r[-1]),
            alerts=alerts.get(str(r[0]), []),
        )
        for r in rows
    ]
    return windows[::-1]


def _alerts(file: SqliteFile, run_ids: list[str]) -> dict[str, list[StoredAlert]]:
    if not run_ids:
        return {}
    marks = ", ".join("?" for _ in run_ids)
    rows = file.execute(
        "SELECT run_id, created, rule, metric, mean, message, webhook FROM monitor_alerts "
        f"WHERE run_id IN ({marks}) ORDER BY created",
        run_ids,
    )
    found: dict[str, list[StoredAlert]] = {}
    for row in rows:
        found.setdefault(str(row[0]), []).append(StoredAlert(*row))
    return found
