"""Run history: every run and each sample's result, in one SQLite file, written as it happens.

A result is committed the moment its sample finishes, so a killed run loses nothing it
finished, and `vera eval --resume RUN_ID` evaluates only what is left. Finished runs keep their
whole report, so any report can be rendered again, and two runs compared, from the store.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from vera._plan._plan import RunPlan
from vera._plan._settings import GIVEN, Settings
from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT, Schema, SqliteFile, StoreError
from vera._store._records import (
    PAGE_SIZE,
    DamagedRun,
    DamagedRunError,
    RunListing,
    RunRecord,
    first_error,
)
from vera._store._results import ResultTable, StoredResults
from vera._types._errors import ConfigError
from vera._types._fingerprint import RunFingerprint
from vera._types._report import Report, SampleResult
from vera._types._secrets import redact
from vera.providers._batch import BatchRecord
from vera.providers._batch_journal import stored_batches

DEFAULT_HISTORY_PATH = Path(".vera") / "runs.sqlite"
"""Relative to the working directory: a project's history lives with the project."""

_RUNS = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    dataset TEXT NOT NULL,
    options TEXT NOT NULL,
    status TEXT NOT NULL,
    report TEXT
)"""
_RESULTS = """
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(id),
    sample_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    result BLOB NOT NULL,  -- zlib-compressed JSON (plain JSON text in older files)
    PRIMARY KEY (run_id, sample_id)
)"""


def _m1_tables(db: sqlite3.Connection) -> None:
    """Version 1: the runs and their results. Files from before versions existed (0) hold
    these already, so it creates only what is missing."""
    db.execute(_RUNS)
    db.execute(_RESULTS)


def _m2_indexes(db: sqlite3.Connection) -> None:
    """Version 2: what keeps a page of the list, a dataset's trend and the previous run
    bounded: an ordered walk of an index, not a scan of every stored report."""
    db.execute("CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created, id)")
    db.execute("CREATE INDEX IF NOT EXISTS runs_by_dataset ON runs (dataset, status, created, id)")


RUNS = Schema("runs", (_m1_tables, _m2_indexes))
"""The history's own tables: runs and their results. Each other feature that keeps tables in
the history owns them in its own package and adopts them on this file when it opens it (the
review's labels, the batch journal, the monitor's windows, the baselines' pass results)."""

HISTORY_LEGACY: tuple[dict[str, int], ...] = (
    {"runs": 1},
    {"runs": 2},
    {"runs": 2, "labels": 1},
    {"runs": 2, "labels": 1, "batches": 1},
    {"runs": 2, "labels": 1, "batches": 1, "monitor": 1},
    {"runs": 2, "labels": 1, "batches": 1, "monitor": 1, "passes": 1},
)
"""What a history of `user_version` N, written before each feature had its own version, holds:
the features of the one chain of six migrations it had (runs, indexes, labels, batches, monitor,
pass results). Never change it: it describes files that exist."""


class RunStore(ResultTable, RunListing):
    """Runs and their results in a SQLite file, safe to share between threads and processes.

    Each result is its own transaction, committed before the next sample is reported. What is
    stored has its secrets taken out (`redact`): a key in a base URL never reaches the file.
    """

    DEFAULT_PATH = DEFAULT_HISTORY_PATH
    PAGE_SIZE = PAGE_SIZE

    def __init__(
        self,
        path: Path | str = DEFAULT_HISTORY_PATH,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        read_only: bool = False,
        what: str = "the run history",
        flag: str = "--history",
        scratch: bool = False,
    ) -> None:
        """`read_only` opens an existing history for reading and never creates or changes the
        file: a missing file is a `StoreError` that says so (what reading commands use).
        `what` and `flag` name the file and what chooses it in error messages; `scratch` is a
        store thrown away after its run (see `SqliteFile`)."""
        self.path = Path(path)
        self._file = SqliteFile(
            self.path,
            what=what,
            flag=flag,
            scratch=scratch,
            schemas=(RUNS,),
            legacy=HISTORY_LEGACY,
            lock_timeout=lock_timeout,
            read_only=read_only,
        )

    @property
    def file(self) -> SqliteFile:
        """The history file, for a feature that keeps its own tables in it: it adopts its
        `Schema` on this file (see `vera._sqlite_file`) and runs its own queries."""
        return self._file

    def start(self, dataset: str, plan: RunPlan) -> str:
        """Record a new run of `plan` and return its id (time-ordered, unique)."""
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        self._file.execute(
            "INSERT INTO runs (id, created, dataset, options, status) VALUES (?, ?, ?, ?, ?)",
            (run_id, time.time(), redact(dataset), redact(plan.model_dump_json()), "running"),
        )
        return run_id

    def plan(self, run_id: str) -> RunPlan:
        """The plan a stored run was started with, exactly as it was asked for."""
        record = self.get(run_id)
        if "plan_version" not in record.options:
            raise ConfigError(
                f"run {record.id} was stored by an earlier VERA version without its run plan "
                "and cannot be resumed; start it again"
            )
        try:
            plan = RunPlan.model_validate(record.options)
        except ValidationError as exc:
            raise ConfigError(f"run {record.id}: its stored plan is not readable ({exc})") from None
        stored = record.options.get("settings")
        if isinstance(stored, dict) and GIVEN not in stored:  # stored before plans kept it
            plan = plan.model_copy(update={"settings": plan.settings.given_by_value()})
        return plan

    def stop(self, run_id: str, report: Report) -> bool:
        """Mark a run that could not record everything `stopped`, with its report (whose
        `stopped` says why) where the file still takes it, else without. Never raises: it is
        called when the file has already failed; False when even the status did not change."""
        aggregates = report.model_copy(update={"samples": ()}).to_json(indent=None)
        for sql, params in (
            ("UPDATE runs SET status = 'stopped', report = ? WHERE id = ?", (aggregates, run_id)),
            ("UPDATE runs SET status = 'stopped' WHERE id = ?", (run_id,)),
        ):
            try:
                self._file.execute(sql, params)
                return True
            except StoreError:
                continue
        return False

    def discard(self, run_id: str) -> None:
        """Remove a run that measured nothing (refused as bad input after it started, exit 2),
        with its rows in every table keyed by run (whichever feature owns it): kept, it would
        list as a finished run of its dataset."""
        tables = self._file.execute(
            "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c "
            "WHERE m.type = 'table' AND m.name != 'runs' AND c.name = 'run_id' ORDER BY m.name"
        )
        for (table,) in tables:
            self._file.execute(f'DELETE FROM "{table}" WHERE run_id = ?', (run_id,))
        self._file.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def finish(self, run_id: str, report: Report) -> None:
        """Store the run's report and mark it finished."""
        # The samples are in `results` already; the report keeps only its aggregates, so
        # each sample is stored once (see `report`, which puts them back).
        aggregates = report.model_copy(update={"samples": ()})
        self._file.execute(
            "UPDATE runs SET status = 'finished', report = ? WHERE id = ?",
            (aggregates.to_json(indent=None), run_id),
        )

    def batches(self, run_id: str, *, intents: bool = False) -> list[BatchRecord]:
        """The provider batches of a run, oldest first (see `vera.providers._batch_journal`,
        which owns their tables)."""
        return stored_batches(self._file, run_id, intents=intents)

    def monitor_window(self, run_id: str) -> tuple[str, bool] | None:
        """(monitor, closed) where the run is a window of `vera monitor`, else None: such a
        run is finished by its monitor when the window closes, never with `--resume`."""
        # The monitor's tables are `vera._monitor`'s; the store only reads this, by name, for
        # `vera runs` and `vera view`, which ask it of any run.
        if self._file.version_of("monitor") == 0:
            return None
        rows = self._file.execute(
            "SELECT monitor, closed FROM monitor_windows WHERE run_id = ?", (run_id,)
        )
        return (str(rows[0][0]), bool(rows[0][1])) if rows else None

    def results(self, run_id: str) -> dict[str, SampleResult]:
        """The finished samples of a run, by sample id (what `--resume` keeps: a damaged one
        is left out, with a warning, and evaluated again)."""
        self.get(run_id)  # a clear error for an unknown id
        return {r.id: r for _, r in self.iter_positioned(run_id, damaged="skip")}

    def finished(self, run_id: str) -> Mapping[str, SampleResult]:
        """The finished samples of a run by sample id, read from the file one at a time as
        they are looked up (what `--resume` keeps, without holding a large run in memory; a
        damaged one is missing, with a warning, and evaluated again)."""
        self.get(run_id)  # a clear error for an unknown id
        return StoredResults(self, run_id)

    def get(self, run_id: str) -> RunRecord:
        """One run, by id or by a unique prefix of its id."""
        found = self._records("WHERE id = ?", (run_id,))
        if not any(found):
            found = self._records("WHERE substr(id, 1, length(?)) = ?", (run_id, run_id))
        records, damaged = found
        if damaged and not records:
            raise DamagedRunError(damaged[0])
        if not records:
            raise ConfigError(f"no run {run_id!r} in {self.path}; `vera runs list` shows them")
        if len(records) > 1:
            raise ConfigError(f"run id {run_id!r} is ambiguous: {', '.join(r.id for r in records)}")
        return records[0]

    def aggregates(self, run_id: str) -> Report | None:
        """A finished run's report without its samples (its counts, summaries and figures,
        none of its results read back); None for a run that did not finish."""
        record = self.get(run_id)
        rows = self._file.execute("SELECT report FROM runs WHERE id = ?", (record.id,))
        if not rows or rows[0][0] is None:
            return None
        return self._stored_report(record.id, rows[0][0]).model_copy(update={"samples": ()})

    def _stored_report(self, run_id: str, text: str) -> Report:
        try:
            return Report.model_validate_json(text)
        except ValidationError as exc:
            raise DamagedRunError(
                DamagedRun(run_id, "report", first_error(exc), self.path)
            ) from None

    def report(self, run_id: str, *, samples: bool = True) -> Report:
        """The stored report of a finished run; with `samples=False` without the samples kept
        in `results` (none read back: what a caller that streams them with `paired` reads; a
        report an earlier version stored whole keeps the samples it holds)."""
        record = self.get(run_id)
        rows = self._file.execute("SELECT report FROM runs WHERE id = ?", (record.id,))
        row = rows[0] if rows else None
        if row is None or row[0] is None:
            raise ConfigError(
                f"run {record.id} did not finish; `vera eval --resume {record.id}` completes it"
            )
        report = self._stored_report(record.id, row[0])
        if report.samples or not report.counts.total or not samples:
            return report  # stored whole, by an earlier version
        return report.model_copy(update={"samples": tuple(self.iter_results(record.id))})

    def fingerprint(self, run_id: str) -> RunFingerprint | None:
        """What a finished run measured (see `vera._run._fingerprint`); None for a run that did not
        finish or was stored before runs had fingerprints."""
        record = self.get(run_id)
        rows = self._file.execute(
            "SELECT CASE WHEN json_valid(report) THEN json_extract(report, '$.fingerprint') END "
            "FROM runs WHERE id = ?",
            (record.id,),
        )
        if not rows or rows[0][0] is None:
            return None
        return RunFingerprint.model_validate_json(rows[0][0])

    def close(self) -> None:
        self._file.close()


def open_history(settings: Settings) -> RunStore:
    """The run store `settings` name (`history_path`, `lock_timeout`)."""
    return RunStore(
        settings.history_path or DEFAULT_HISTORY_PATH, lock_timeout=settings.lock_timeout
    )
