"""Run history: every run and each sample's result, in one SQLite file, written as it happens.

A result is committed the moment its sample finishes, so a killed run loses nothing it
finished, and `vera eval --resume RUN_ID` evaluates only what is left. Finished runs keep their
whole report, so any report can be rendered again, and two runs compared, from the store.
"""

from __future__ import annotations

import time
import uuid
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vera.datasets.nesting import loads_bounded
from vera.errors import ConfigError
from vera.plan import RunPlan
from vera.report import Report, SampleResult
from vera.settings import Settings
from vera.sqlite_file import DEFAULT_LOCK_TIMEOUT, SqliteFile, StoreError
from vera.types.secrets import redact

__all__ = ["DEFAULT_HISTORY_PATH", "RunRecord", "RunStore", "open_history"]

DEFAULT_HISTORY_PATH = Path(".vera") / "runs.sqlite"
"""Relative to the working directory: a project's history lives with the project."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    dataset TEXT NOT NULL,
    options TEXT NOT NULL,
    status TEXT NOT NULL,
    report TEXT
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(id),
    sample_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    result BLOB NOT NULL,  -- zlib-compressed JSON (plain JSON text in older files)
    PRIMARY KEY (run_id, sample_id)
);
"""


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


class RunStore:
    """Runs and their results in a SQLite file, safe to share between threads and processes.

    Each result is its own transaction, committed before the next sample is reported. What is
    stored has its secrets taken out (`redact`): a key in a base URL never reaches the file.
    """

    def __init__(
        self,
        path: Path | str = DEFAULT_HISTORY_PATH,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        read_only: bool = False,
    ) -> None:
        """`read_only` opens an existing history for reading and never creates or changes the
        file: a missing file is a `StoreError` that says so (what reading commands use)."""
        self.path = Path(path)
        self._file = SqliteFile(
            self.path,
            what="the run history",
            flag="--history",
            schema=_SCHEMA,
            lock_timeout=lock_timeout,
            read_only=read_only,
        )

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
            return RunPlan.model_validate(record.options)
        except ValidationError as exc:
            raise ConfigError(f"run {record.id}: its stored plan is not readable ({exc})") from None

    def add_result(self, run_id: str, position: int, result: SampleResult) -> None:
        """Store one finished sample, at once."""
        self._file.execute(
            "INSERT OR REPLACE INTO results (run_id, sample_id, position, result) "
            "VALUES (?, ?, ?, ?)",
            (run_id, result.id, position, _pack(result)),
        )

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

    def finish(self, run_id: str, report: Report) -> None:
        """Store the run's report and mark it finished."""
        # The samples are in `results` already; the report keeps only its aggregates, so
        # each sample is stored once (see `report`, which puts them back).
        aggregates = report.model_copy(update={"samples": ()})
        self._file.execute(
            "UPDATE runs SET status = 'finished', report = ? WHERE id = ?",
            (aggregates.to_json(indent=None), run_id),
        )

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

    def get(self, run_id: str) -> RunRecord:
        """One run, by id or by a unique prefix of its id."""
        records = self._records("WHERE r.id = ?", (run_id,)) or self._records(
            "WHERE substr(r.id, 1, length(?)) = ?", (run_id, run_id)
        )
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
        return Report.model_validate_json(rows[0][0]).model_copy(update={"samples": ()})

    def report(self, run_id: str) -> Report:
        """The stored report of a finished run."""
        record = self.get(run_id)
        rows = self._file.execute("SELECT report FROM runs WHERE id = ?", (record.id,))
        row = rows[0] if rows else None
        if row is None or row[0] is None:
            raise ConfigError(
                f"run {record.id} did not finish; `vera eval --resume {record.id}` completes it"
            )
        report = Report.model_validate_json(row[0])
        if report.samples or not report.counts.get("total"):
            return report  # stored whole, by an earlier version
        return report.model_copy(update={"samples": tuple(self.iter_results(record.id))})

    def _records(self, where: str = "", params: tuple[str, ...] = ()) -> list[RunRecord]:
        # Only the metric means are read out of each stored report, by SQLite, not the report.
        rows = self._file.execute(
            "SELECT r.id, r.created, r.dataset, r.options, r.status, "
            "json_extract(r.report, '$.metrics'), "
            "(SELECT COUNT(*) FROM results s WHERE s.run_id = r.id) "
            f"FROM runs r {where} ORDER BY r.created DESC, r.id DESC",
            params,
        )
        return [
            RunRecord(
                id=row[0],
                created=row[1],
                dataset=row[2],
                options=loads_bounded(row[3]),  # stored data: nesting bounded, never recursed
                status=row[4],
                finished_samples=row[6],
                metrics=loads_bounded(row[5]) if row[5] else {},
            )
            for row in rows
        ]

    def list(self) -> list[RunRecord]:
        """Every run, newest first."""
        return self._records()

    def close(self) -> None:
        self._file.close()


def open_history(settings: Settings) -> RunStore:
    """The run store `settings` name (`history_path`, `lock_timeout`)."""
    return RunStore(
        settings.history_path or DEFAULT_HISTORY_PATH, lock_timeout=settings.lock_timeout
    )
