"""A stored run as listings read it: its record, or what is damaged in its row, and a page of
them (`RunStore.get`, `list`, `page`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vera._json import loads_bounded
from vera._sqlite_file import SqliteFile
from vera._types._errors import ConfigError

PAGE_SIZE = 50
"""Runs on one page of `RunStore.page` (and of `vera view`'s list)."""


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


class RunListing:
    """The listings of the `runs` table: records, newest first, with the rows that cannot be
    read set apart (a part of `RunStore`, which owns the file)."""

    path: Path
    _file: SqliteFile

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
            read = run_record(row, self.path)
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
        where, params = run_filters(dataset=dataset, finished=finished, before=before, full=full)
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


FULL_RUN = "(CASE WHEN json_valid(options) THEN json_extract(options, '$.quick') END) IS NOT 1"
"""A run that was not `--quick` (its stored plan says so; a damaged plan is not taken for
one, and is reported where it is read)."""


def run_filters(
    *, dataset: str | None, finished: bool, before: str | None, full: bool = False
) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause of `RunStore.list`; values are always bound, never spliced in."""
    clauses: list[str] = [FULL_RUN] if full else []
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


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def run_record(row: Sequence[Any], history: Path) -> RunRecord | DamagedRun:
    """One row of `RunListing._records` as a record, or what is damaged in it."""
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
        return DamagedRun(run_id, "row", first_error(exc), history)
