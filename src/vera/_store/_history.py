"""Run history: every run and each sample's result, in one SQLite file, written as it happens.

A result is committed the moment its sample finishes, so a killed run loses nothing it
finished, and `vera eval --resume RUN_ID` evaluates only what is left. Finished runs keep their
whole report, so any report can be rendered again, and two runs compared, from the store.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
import warnings
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vera._json import loads_bounded
from vera._plan._plan import RunPlan
from vera._plan._settings import GIVEN, Settings
from vera._sqlite_file import DEFAULT_LOCK_TIMEOUT, Migration, SqliteFile, StoreError
from vera._types._errors import ConfigError
from vera._types._fingerprint import RegressionCheck, RunFingerprint
from vera._types._report import Report, SampleResult
from vera._types._secrets import redact
from vera.providers._batch import INTENT_PREFIX, BatchRecord

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


_LABELS = """
CREATE TABLE IF NOT EXISTS labels (
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


def _m3_labels(db: sqlite3.Connection) -> None:
    """Version 3: the labels people give in `vera view --review`, beside the judge's verdicts
    (never in place of them). Rows are only added: the newest per sample (and claim) counts,
    and the older ones stay as the record of who said what when."""
    db.execute(_LABELS)
    db.execute("CREATE INDEX IF NOT EXISTS labels_by_run ON labels (run_id, sample_id, id)")


def _m4_batches(db: sqlite3.Connection) -> None:
    """Version 4: the provider batches of `--batch` runs, recorded as soon as the provider
    accepted them, so a resumed run takes their results instead of paying for them again.
    `keys` is the zlib-compressed JSON list of the request ids (response-cache keys)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS batches (run_id TEXT NOT NULL REFERENCES runs(id), "
        "batch_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, "
        "status TEXT NOT NULL, succeeded INTEGER NOT NULL, failed INTEGER NOT NULL, "
        "requests INTEGER NOT NULL, keys BLOB NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, PRIMARY KEY (run_id, batch_id))"
    )


def _m5_monitor(db: sqlite3.Connection) -> None:
    """Version 5: `vera monitor`'s windows (each one a run), what each received, kept and
    dropped, the alerts raised on them, and the index that finds a trace's result by its id
    (a trace is evaluated once)."""
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


def _m6_pass_results(db: sqlite3.Connection) -> None:
    """Version 6: the results of a run's other passes (its baselines'), by pass name, so the
    paired statistics read their pairs from the file and no pass keeps its samples."""
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


_MIGRATIONS: tuple[Migration, ...] = (
    _m1_tables,
    _m2_indexes,
    _m3_labels,
    _m4_batches,
    _m5_monitor,
    _m6_pass_results,
)
"""The history's layout, one numbered step each (see `vera._sqlite_file.Migration`): a writer
that opens a file applies those it lacks; a reader reads an older file as it is. Add a step at
the end; never change or remove one that has shipped."""

_BATCHES_VERSION = _MIGRATIONS.index(_m4_batches) + 1
"""The first layout with the `batches` table; a reader of an older file finds no batches."""
_MONITOR_VERSION = _MIGRATIONS.index(_m5_monitor) + 1
"""The first layout with `vera monitor`'s tables; no run of an older file is a window."""

HISTORY_MIGRATIONS = _MIGRATIONS
"""For a module that keeps its own tables in the history (`vera._monitor`) and opens it with
`SqliteFile` itself: the same steps, so either opener brings the file to the same layout."""

HISTORY_SCHEMA_VERSION = len(_MIGRATIONS)
"""The history layout this VERA writes, in the file's `PRAGMA user_version`."""

PAGE_SIZE = 50
"""Runs on one page of `RunStore.page` (and of `vera view`'s list)."""

_BATCH = 500
"""Results read from the store per query when streaming them."""


def _pack(result: SampleResult) -> bytes:
    """A result as stored: its JSON, compressed (a sample's claims and reasons repeat words)."""
    return zlib.compress(result.model_dump_json().encode("utf-8"), 6)


def _unpack(payload: bytes | str) -> SampleResult:
    # Results stored before compression are JSON text.
    text = zlib.decompress(payload) if isinstance(payload, bytes) else payload
    return SampleResult.model_validate_json(text)


class RunRecord(BaseModel):
    """One stored run: what was asked (`options`), how far it got, and its report if done."""

    model_config = ConfigDict(frozen=True)

    id: str
    created: float
    dataset: str
    options: dict[str, Any]
    """The run's plan as stored (`RunPlan` fields)."""
    status: str
    """"running" until the run ends (a killed run stays "running"), then "finished"; "stopped"
    when the run could not record everything (a full disk): its report, where stored, says
    why, and `--resume` completes it."""
    finished_samples: int
    metrics: dict[str, float | None] = {}


@dataclass(frozen=True)
class DamagedRun:
    """A stored run whose row cannot be read back (edited by hand, a disk error): listings
    skip it and say so, naming it, and never fail because of it."""

    id: str
    field: str
    """What is damaged: "options", "report" or "row" (a column of the wrong type)."""
    reason: str
    history: Path

    def __str__(self) -> str:
        return (
            f"run {self.id} in {self.history} is damaged (its stored {self.field}: {self.reason})"
        )


class DamagedRunError(ConfigError):
    """A run asked for by id whose stored row or report cannot be read back."""

    def __init__(self, run: DamagedRun) -> None:
        super().__init__(f"{run}: it cannot be read back; run it again")
        self.run = run


@dataclass(frozen=True)
class RunPage:
    """One page of the history's runs, newest first (`RunStore.page`)."""

    records: list[RunRecord]
    damaged: list[DamagedRun]
    """Runs of this page whose rows cannot be read, left out of `records`."""
    total: int
    """Runs in the whole history, damaged ones included."""
    number: int
    """This page, from 1."""
    size: int

    @property
    def pages(self) -> int:
        """How many pages the history has (at least 1, even when empty)."""
        return max(1, -(-self.total // self.size))


@dataclass(frozen=True)
class StoredLabel:
    """One label a person gave (`RunStore.add_label`): of a sample's whole response (`claim`
    None: "faithful" or "unfaithful") or of one of its claims (a verdict's value)."""

    id: int
    run_id: str
    sample_id: str
    claim: str | None
    label: str
    note: str
    reviewer: str
    queue: str
    created: float


class RunStore:
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
            migrations=_MIGRATIONS,
            lock_timeout=lock_timeout,
            read_only=read_only,
        )

    @property
    def schema_version(self) -> int:
        """The file's layout version: `HISTORY_SCHEMA_VERSION` once a writer opened it; an
        older number when only read (readers never migrate)."""
        return self._file.version

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

    def add_result(self, run_id: str, position: int, result: SampleResult) -> None:
        """Store one finished sample, at once."""
        self._file.execute(
            "INSERT OR REPLACE INTO results (run_id, sample_id, position, result) "
            "VALUES (?, ?, ?, ?)",
            (run_id, result.id, position, _pack(result)),
        )

    def add_pass_result(
        self, run_id: str, pass_name: str, position: int, result: SampleResult
    ) -> None:
        """Store one finished sample of the run's pass `pass_name` (a baseline's), at once."""
        self._file.execute(
            "INSERT OR REPLACE INTO pass_results (run_id, pass, sample_id, position, result) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, pass_name, result.id, position, _pack(result)),
        )

    def paired(
        self, run_id: str, other: str, *, other_pass: str | None = None, batch: int = _BATCH
    ) -> Iterator[tuple[SampleResult, SampleResult]]:
        """The results of `run_id` paired with those of `other` (or of its pass
        `other_pass`) that have the same sample id, in sample-id order, read `batch` pairs at
        a time: what paired statistics read, so no run is held in memory at once."""
        table, where, params = "results", "", tuple[str, ...]()
        if other_pass is not None:
            table, where, params = "pass_results", "AND b.pass = ? ", (other_pass,)
        sql = (
            f"SELECT a.sample_id, a.result, b.result FROM results a JOIN {table} b "
            f"ON b.run_id = ? {where}AND b.sample_id = a.sample_id "
            "WHERE a.run_id = ? AND a.sample_id > ? ORDER BY a.sample_id LIMIT ?"
        )
        last = ""
        while True:
            rows = self._file.execute(sql, (other, *params, run_id, last, batch))
            for sample_id, mine, theirs in rows:
                last = sample_id
                yield _unpack(mine), _unpack(theirs)
            if len(rows) < batch:
                return

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
        with its results: kept, it would list as a finished run of its dataset."""
        for table in ("pass_results", "results", "batches"):
            self._file.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
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

    def save_batch(self, run_id: str, batch: BatchRecord) -> None:
        """Record a provider batch of the run, or its new status and counts."""
        keys = zlib.compress(json.dumps(list(batch.keys)).encode("utf-8"), 6)
        self._file.execute(
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

    def batches(self, run_id: str, *, intents: bool = False) -> list[BatchRecord]:
        """The provider batches of a run, oldest first (none in a file from before them);
        with `intents`, the intents recorded before each batch was created too (their
        `batch_id` starts with `INTENT_PREFIX`, see `vera.providers._batch`)."""
        if self._file.version < _BATCHES_VERSION:
            return []
        rows = self._file.execute(
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

    def monitor_window(self, run_id: str) -> tuple[str, bool] | None:
        """(monitor, closed) where the run is a window of `vera monitor`, else None: such a
        run is finished by its monitor when the window closes, never with `--resume`."""
        if self._file.version < _MONITOR_VERSION:
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

    def iter_results(self, run_id: str, *, batch: int = _BATCH) -> Iterator[SampleResult]:
        """The finished samples of a run in dataset order, read `batch` at a time, so a run
        of any size is never held in memory at once."""
        for _, result in self.iter_positioned(run_id, batch=batch):
            yield result

    def iter_positioned(
        self, run_id: str, *, batch: int = _BATCH, damaged: str = "raise"
    ) -> Iterator[tuple[int, SampleResult]]:
        """`iter_results` with each result's dataset position. A stored result that cannot be
        read back raises `StoreError` naming it, or with `damaged="skip"` is left out with a
        warning (a resumed run evaluates that sample again)."""
        position = -1
        while True:
            rows = self._file.execute(
                "SELECT position, result, sample_id FROM results WHERE run_id = ? "
                "AND position > ? ORDER BY position LIMIT ?",
                (run_id, position, batch),
            )
            for found, payload, sample_id in rows:
                position = found
                result = self._readable(run_id, sample_id, payload, damaged)
                if result is not None:
                    yield found, result
            if len(rows) < batch:
                return

    def _readable(
        self, run_id: str, sample_id: str, payload: bytes | str, damaged: str
    ) -> SampleResult | None:
        try:
            return _unpack(payload)
        except zlib.error:
            why = "it does not decompress"
        except ValueError:  # not UTF-8, not JSON, or not a result
            why = "it is not a readable result"
        problem = (
            f"{self.path}: the stored result of sample {sample_id!r} in run {run_id} is "
            f"damaged ({why})"
        )
        if damaged != "skip":
            raise StoreError(f"{problem}; `vera eval --resume {run_id}` evaluates it again")
        warnings.warn(f"{problem}; it is evaluated again", stacklevel=2)
        return None

    def finished(self, run_id: str) -> Mapping[str, SampleResult]:
        """The finished samples of a run by sample id, read from the file one at a time as
        they are looked up (what `--resume` keeps, without holding a large run in memory; a
        damaged one is missing, with a warning, and evaluated again)."""
        self.get(run_id)  # a clear error for an unknown id
        return _StoredResults(self, run_id)

    def result(self, run_id: str, sample_id: str, *, damaged: str = "raise") -> SampleResult | None:
        """One stored sample's result (None: the run has no such sample; a damaged one is a
        `StoreError`, or with `damaged="skip"` None with a warning, as `iter_positioned`)."""
        rows = self._file.execute(
            "SELECT result FROM results WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
        )
        return self._readable(run_id, sample_id, rows[0][0], damaged) if rows else None

    def add_labels(
        self,
        run_id: str,
        sample_id: str,
        labels: Sequence[tuple[str | None, str]],
        *,
        reviewer: str,
        queue: str,
        note: str = "",
    ) -> list[StoredLabel]:
        """Store a person's labels of one sample, (claim or None for the whole response,
        label) each, `note` with the first, as one INSERT: one transaction that only adds
        rows. The caller checks what they say (`vera._review._review.add_label`)."""
        created, note = time.time(), redact(note)
        rows = [
            (run_id, sample_id, claim, label, note if i == 0 else "", reviewer, queue, created)
            for i, (claim, label) in enumerate(labels)
        ]
        marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows))
        ids = self._file.execute(
            "INSERT INTO labels (run_id, sample_id, claim, label, note, reviewer, queue, "
            f"created) VALUES {marks} RETURNING id",
            [value for row in rows for value in row],
        )
        # Row ids grow in insertion order; RETURNING promises no order, so they are sorted.
        found = sorted(int(row[0]) for row in ids)
        return [StoredLabel(i, *row) for i, row in zip(found, rows, strict=True)]

    def labels(self, run_id: str) -> list[StoredLabel]:
        """Every label of a run, oldest first; none in a file from before labels existed
        (read as it is, never migrated by a reader)."""
        if not self._file.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'labels'"
        ):
            return []
        rows = self._file.execute(
            "SELECT id, run_id, sample_id, claim, label, note, reviewer, queue, created "
            "FROM labels WHERE run_id = ? ORDER BY id",
            (run_id,),
        )
        return [StoredLabel(*row) for row in rows]

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
                DamagedRun(run_id, "report", _first_error(exc), self.path)
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

    def last_finished(
        self, *, digest: str | None = None, dataset: str | None = None, exclude: str | None = None
    ) -> RunRecord | None:
        """The newest finished run with fingerprint `digest` (or, with `dataset`, of that
        dataset whatever its plan), other than `exclude`: a regression gate's baseline."""
        where, params = "WHERE status = 'finished' AND id != ?", [exclude or ""]
        if digest is not None:
            # json_valid first: a damaged report must not make SQLite's json_extract raise.
            where += " AND json_valid(report) AND json_extract(report, '$.fingerprint.digest') = ?"
            params.append(digest)
        if dataset is not None:
            where += " AND dataset = ?"
            params.append(dataset)
        records, _ = self._records(where, tuple(params), limit=1)
        return records[0] if records else None

    def _records(
        self, where: str = "", params: tuple[Any, ...] = (), *, limit: int = -1, offset: int = 0
    ) -> tuple[list[RunRecord], list[DamagedRun]]:
        """The runs `where` selects, newest first, and those of them whose row cannot be read.
        Only the page's ids are sorted; its metric means are read out of each stored report
        by SQLite (never the whole report), and a report that is not JSON is not parsed."""
        rows = self._file.execute(
            "SELECT r.id, r.created, r.dataset, r.options, r.status, "
            "CASE WHEN json_valid(r.report) THEN json_extract(r.report, '$.metrics') END, "
            "(SELECT COUNT(*) FROM results s WHERE s.run_id = r.id), "
            "r.report IS NOT NULL AND NOT json_valid(r.report) "
            "FROM runs r WHERE r.id IN "
            f"(SELECT id FROM runs {where} ORDER BY created DESC, id DESC LIMIT ? OFFSET ?) "
            "ORDER BY r.created DESC, r.id DESC",
            (*params, limit, offset),
        )
        records: list[RunRecord] = []
        damaged: list[DamagedRun] = []
        for row in rows:
            read = _record(row, self.path)
            if isinstance(read, RunRecord):
                records.append(read)
            else:
                damaged.append(read)
        return records, damaged

    def select(
        self,
        *,
        dataset: str | None = None,
        finished: bool = False,
        before: str | None = None,
        limit: int | None = None,
        full: bool = False,
    ) -> tuple[list[RunRecord], list[DamagedRun]]:
        """`list`'s runs, and the damaged rows it skipped, for a caller that shows them itself
        (`vera view`) rather than as warnings."""
        where, params = _filters(dataset=dataset, finished=finished, before=before, full=full)
        return self._records(where, params, limit=-1 if limit is None else limit)

    def list(
        self,
        *,
        dataset: str | None = None,
        finished: bool = False,
        before: str | None = None,
        limit: int | None = None,
        full: bool = False,
    ) -> list[RunRecord]:
        """Runs, newest first: every run, or those of `dataset`, only `finished` ones, those
        stored before run `before` (an id), at most `limit`; with `full`, no `--quick` run (a
        trend compares whole runs of a dataset, not its first samples). A run whose row is
        damaged is skipped with a warning naming it, so one bad row never hides the others."""
        records, damaged = self.select(
            dataset=dataset, finished=finished, before=before, limit=limit, full=full
        )
        for run in damaged:
            warnings.warn(f"{run}; skipped it, the other runs are listed", stacklevel=2)
        return records

    def page(self, number: int = 1, size: int = PAGE_SIZE) -> RunPage:
        """Page `number` (from 1) of every run, newest first, `size` runs a page: only that
        page is read, whatever the history's size. Damaged rows are given in
        `RunPage.damaged`, not warned about (the caller shows them)."""
        if number < 1 or size < 1:
            raise ConfigError(f"page {number} of {size} runs: both start at 1")
        total = int(self._file.execute("SELECT COUNT(*) FROM runs")[0][0])
        records, damaged = self._records(limit=size, offset=(number - 1) * size)
        return RunPage(records, damaged, total=total, number=number, size=size)

    def close(self) -> None:
        self._file.close()


_FULL_RUN = "(CASE WHEN json_valid(options) THEN json_extract(options, '$.quick') END) IS NOT 1"
"""A run that was not `--quick` (its stored plan says so; a damaged plan is not taken for
one, and is reported where it is read)."""


def _filters(
    *, dataset: str | None, finished: bool, before: str | None, full: bool = False
) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause of `RunStore.list`; values are always bound, never spliced in."""
    clauses: list[str] = [_FULL_RUN] if full else []
    params: list[Any] = []
    if dataset is not None:
        clauses.append("dataset = ?")
        params.append(dataset)
    if finished:
        clauses.append("status = 'finished'")
    if before is not None:
        clauses.append("(created, id) < (SELECT created, id FROM runs WHERE id = ?)")
        params.append(before)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def _record(row: Sequence[Any], history: Path) -> RunRecord | DamagedRun:
    """One row of `RunStore._records` as a record, or what is damaged in it."""
    run_id = str(row[0])
    if row[7]:
        return DamagedRun(run_id, "report", "not JSON", history)
    try:
        options = loads_bounded(row[3])  # stored data: nesting bounded, never recursed
    except (TypeError, ValueError) as exc:
        return DamagedRun(run_id, "options", f"not JSON: {exc}", history)
    try:
        metrics = loads_bounded(row[5]) if row[5] else {}
    except (TypeError, ValueError):
        return DamagedRun(run_id, "report", "its metrics are not JSON", history)
    try:
        return RunRecord(
            id=run_id,
            created=row[1],
            dataset=row[2],
            options=options,
            status=row[4],
            finished_samples=row[6],
            metrics=metrics,
        )
    except ValidationError as exc:
        return DamagedRun(run_id, "row", _first_error(exc), history)


class HistoryBatchJournal:
    """The `BatchJournal` of one run (`vera.providers._batch`): its batches in the history
    where the run has one, and each change of state told to `progress`."""

    def __init__(
        self,
        store: RunStore | None,
        run_id: str | None,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.store, self.run_id, self._progress = store, run_id, progress

    def recorded(self) -> list[BatchRecord]:
        if self.store is None or self.run_id is None:
            return []
        return self.store.batches(self.run_id, intents=True)

    def save(self, record: BatchRecord) -> None:
        if self.store is not None and self.run_id is not None:
            self.store.save_batch(self.run_id, record)

    def progress(self, line: str) -> None:
        if self._progress is not None:
            self._progress(line)


def open_history(settings: Settings) -> RunStore:
    """The run store `settings` name (`history_path`, `lock_timeout`)."""
    return RunStore(
        settings.history_path or DEFAULT_HISTORY_PATH, lock_timeout=settings.lock_timeout
    )


def regression_without_history(plan: RunPlan) -> ConfigError:
    """Why a regression gate cannot run with the history off (it would compare with nothing
    and pass), saying how to turn the history on: raised as exit 2."""
    asked = f"--baseline-run {plan.baseline_run}" if plan.baseline_run else "--regression"
    return ConfigError(
        f"{asked} compares this run with a stored one, but the run history is off "
        "(--no-history, history = false in vera.toml, or history=False in Python); drop that "
        f"so runs are stored in {DEFAULT_HISTORY_PATH}, or name the history that holds the "
        "runs to compare with (--history-path PATH, history=PATH)"
    )


def regression_baseline(
    store: RunStore, plan: RunPlan, fingerprint: RunFingerprint, dataset: str
) -> RegressionCheck:
    """The stored run a regression gate of `plan` compares with, checked before any sample
    is evaluated.

    `--baseline-run` names it; it must have finished and have the same fingerprint, unless
    `plan.any_plan` (then the differences are kept, to be reported). Otherwise it is the newest
    finished run with the same fingerprint (with `any_plan`, the newest of `dataset`), or none
    (`compared_with` None: nothing to compare, said so). A mismatch is a `ConfigError` that
    lists what differs, field by field.
    """
    history = str(store.path)
    if plan.baseline_run is None:
        found = store.last_finished(
            digest=None if plan.any_plan else fingerprint.digest,
            dataset=dataset if plan.any_plan else None,
        )
        if found is None:
            return RegressionCheck(
                compared_with=None, fingerprint=fingerprint.digest, history=history
            )
        run_id = found.id
    else:
        run_id = store.get(plan.baseline_run).id
        if store.aggregates(run_id) is None:
            raise ConfigError(
                f"--baseline-run {run_id}: that run did not finish, so it has no scores to "
                f"compare with; finish it (vera eval --resume {run_id}) or name another run "
                "(vera runs list)"
            )
    differences = fingerprint.differences(store.fingerprint(run_id))
    if differences and not plan.any_plan:
        raise ConfigError(
            f"--baseline-run {run_id} measured something else than this run, so their scores "
            f"cannot be compared: {'; '.join(differences)}. Run the same plan, or pass "
            "--any-plan (any_plan=True) to compare anyway"
        )
    return RegressionCheck(
        compared_with=run_id,
        fingerprint=fingerprint.digest,
        differences=tuple(differences),
        history=history,
    )


class _StoredResults(Mapping[str, SampleResult]):
    """A stored run's results as a read-only mapping, each read when it is looked up."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        self._store = store
        self._run_id = run_id

    def __getitem__(self, sample_id: str) -> SampleResult:
        found = self._store.result(self._run_id, sample_id, damaged="skip")
        if found is None:
            raise KeyError(sample_id)
        return found

    def __len__(self) -> int:
        rows = self._store._file.execute(
            "SELECT COUNT(*) FROM results WHERE run_id = ?", (self._run_id,)
        )
        return int(rows[0][0])

    def __iter__(self) -> Iterator[str]:
        rows = self._store._file.execute(
            "SELECT sample_id FROM results WHERE run_id = ? ORDER BY position", (self._run_id,)
        )
        return (str(row[0]) for row in rows)
