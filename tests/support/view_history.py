"""A run history of real runs for `vera view`'s tests, made through the library.

The bundled `technical` dataset through the naive-rag pipeline; `example` judged by
`offline:learned` with every claim it can place fully supported (A, `offline_min_support` 0) and
then by `offline` (B), whose verdicts differ enough for a significant change; and an `example` run
left unfinished after three samples, as a killed process leaves it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from vera import RunStore, Settings, run_plan
from vera._plan import DatasetRef, build_plan

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

METRICS = ["faithfulness", "hallucination_rate"]


@dataclass
class History:
    path: Path
    technical: str
    a: str
    """`example` judged by offline:learned at `offline_min_support` 0."""
    b: str
    """`example` judged by offline, after A."""
    running: str

    @property
    def ids(self) -> list[str]:
        return [self.technical, self.a, self.b, self.running]


def stored_run(
    path: Path,
    source: str,
    judge: str,
    pipeline: str | None = None,
    offline_min_support: float | None = None,
) -> str:
    """A finished run of `source` on `METRICS`, stored in the history at `path`; its id."""
    settings = Settings(
        judge=judge, history_path=path, cache=False, offline_min_support=offline_min_support
    )
    plan = build_plan(
        dataset=DatasetRef(source=source), metrics=METRICS, settings=settings, pipeline=pipeline
    )
    run_id = run_plan(plan).run_id
    assert run_id is not None
    return run_id


def make_history(folder: Path) -> History:
    path = folder / "runs.sqlite"
    technical = stored_run(path, "technical", "offline", pipeline="naive-rag")
    a = stored_run(path, "example", "offline:learned", offline_min_support=0.0)
    b = stored_run(path, "example", "offline")
    return History(path, technical, a, b, _unfinished(path, b))


def _unfinished(path: Path, like: str) -> str:
    """A run of `example` as a killed process leaves it: started, three samples stored, and
    never finished (what the runner writes as it goes, without the rest of the run)."""
    store = RunStore(path)
    try:
        plan = store.plan(like)
        run_id = store.start("example", plan)
        for position, result in enumerate(list(store.iter_results(like))[:3]):
            store.add_result(run_id, position, result)
    finally:
        store.close()
    return run_id


def copy_runs(path: Path, like: str, count: int, *, datasets: int = 1) -> list[str]:
    """`count` more finished runs in the history at `path`: copies of run `like`'s row (its
    plan and stored report, no results), one minute apart and older than every run there,
    spread over `datasets` dataset names (`like`'s, then NAME-1, NAME-2...). Their ids, newest
    first. What a long history looks like to the list, made in one statement."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        (oldest,) = db.execute("SELECT MIN(created) FROM runs").fetchone()
        db.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO runs (id, created, dataset, options, status, report) "
            "SELECT printf('copy-%06d', i), ? - 60 * i, "
            "CASE WHEN i % ? = 0 THEN r.dataset ELSE r.dataset || '-' || (i % ?) END, "
            "r.options, r.status, r.report FROM n, runs r WHERE r.id = ?",
            (count, oldest, datasets, datasets, like),
        )
    finally:
        db.close()
    return [f"copy-{i:06d}" for i in range(1, count + 1)]


def damage(path: Path, run_id: str, column: str, value: object) -> None:
    """Overwrite one column of a stored run, as a hand edit or a bad disk would."""
    assert column in {"options", "report", "created", "status"}
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
    finally:
        db.close()
