"""Histories written by every earlier layout open with the per-feature migration registry.

Before the registry, the history had one chain of six migrations and its number in
`PRAGMA user_version`. Each file here is built with that chain's own SQL, as VERA wrote it, at
each version 0..6, with a row in every table it had; the new code reads it as it is (a reader
changes no byte), upgrades it when it writes (nothing lost), and each feature then adds its own
tables when it opens the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from contextlib import closing
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from vera import RunStore, SampleResult, StoreError, cli, create_app
from vera._monitor import MonitorHistory
from vera._monitor._store import read_windows
from vera._review._labels import add_labels, stored_labels
from vera._run._passes import add_pass_result, pass_pairs
from vera._sqlite_file import Schema, SqliteFile
from vera.providers._batch import BatchRecord
from vera.providers._batch_journal import save_batch

WHITEBOX = "each feature's own tables and queries in the history, on files of older layouts"

RUN = "20250101-000000-abcdef"

CHAIN = (
    # 1: runs and results
    [
        "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created REAL NOT NULL, "
        "dataset TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL, report TEXT)",
        "CREATE TABLE IF NOT EXISTS results (run_id TEXT NOT NULL REFERENCES runs(id), "
        "sample_id TEXT NOT NULL, position INTEGER NOT NULL, result BLOB NOT NULL, "
        "PRIMARY KEY (run_id, sample_id))",
    ],
    # 2: indexes
    [
        "CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created, id)",
        "CREATE INDEX IF NOT EXISTS runs_by_dataset ON runs (dataset, status, created, id)",
    ],
    # 3: labels
    [
        "CREATE TABLE IF NOT EXISTS labels (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "run_id TEXT NOT NULL REFERENCES runs(id), sample_id TEXT NOT NULL, claim TEXT, "
        "label TEXT NOT NULL, note TEXT NOT NULL, reviewer TEXT NOT NULL, queue TEXT NOT NULL, "
        "created REAL NOT NULL)",
        "CREATE INDEX IF NOT EXISTS labels_by_run ON labels (run_id, sample_id, id)",
    ],
    # 4: batches
    [
        "CREATE TABLE IF NOT EXISTS batches (run_id TEXT NOT NULL REFERENCES runs(id), "
        "batch_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, "
        "status TEXT NOT NULL, succeeded INTEGER NOT NULL, failed INTEGER NOT NULL, "
        "requests INTEGER NOT NULL, keys BLOB NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, PRIMARY KEY (run_id, batch_id))"
    ],
    # 5: monitor
    [
        "CREATE TABLE IF NOT EXISTS monitor_windows (run_id TEXT PRIMARY KEY REFERENCES "
        "runs(id), monitor TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, "
        "closed INTEGER NOT NULL DEFAULT 0, "
        + ", ".join(
            f"{name} INTEGER NOT NULL DEFAULT 0"
            for name in (
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
        )
        + ", UNIQUE (monitor, start))",
        "CREATE TABLE IF NOT EXISTS monitor_alerts (run_id TEXT NOT NULL REFERENCES runs(id), "
        "created REAL NOT NULL, rule TEXT NOT NULL, metric TEXT NOT NULL, mean REAL, "
        "message TEXT NOT NULL, webhook TEXT)",
        "CREATE INDEX IF NOT EXISTS results_by_sample ON results (sample_id)",
    ],
    # 6: pass results
    [
        "CREATE TABLE IF NOT EXISTS pass_results (run_id TEXT NOT NULL REFERENCES runs(id), "
        "pass TEXT NOT NULL, sample_id TEXT NOT NULL, position INTEGER NOT NULL, "
        "result BLOB NOT NULL, PRIMARY KEY (run_id, pass, sample_id))"
    ],
)
"""The history's migrations 1..6 as VERA applied them before each feature had its version."""

ROWS = (
    [],
    [],
    [
        "INSERT INTO labels (run_id, sample_id, claim, label, note, reviewer, queue, created) "
        f"VALUES ('{RUN}', 's1', NULL, 'faithful', 'ok', 'ana', 'triage', 1.0)"
    ],
    [
        "INSERT INTO batches VALUES ('{run}', 'b1', 'openai', 'gpt', 'submitted', 0, 0, 1, "
        "X'{keys}', 1.0, 1.0)".format(
            run=RUN, keys=zlib.compress(json.dumps(["k1"]).encode()).hex()
        )
    ],
    [
        "INSERT INTO monitor_windows (run_id, monitor, start, end, spans) "
        f"VALUES ('{RUN}', 'm', 0, 60, 4)"
    ],
    [],
)
"""A row in each table a version added (the runs and results rows are added to every file)."""

LATEST = {"runs": 2, "labels": 1, "batches": 1, "monitor": 1, "passes": 1}

HELD = (
    {},
    {"runs": 1},
    {"runs": 2},
    {"runs": 2, "labels": 1},
    {"runs": 2, "labels": 1, "batches": 1},
    {"runs": 2, "labels": 1, "batches": 1, "monitor": 1},
    LATEST,
)
"""The features' versions a file of each old layout holds."""


def _result(sample_id: str, score: float) -> SampleResult:
    return SampleResult.model_validate(
        {"id": sample_id, "status": "scored", "scores": {"faithfulness": score}}
    )


def _old_history(path: Path, version: int) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        for step in CHAIN[: max(version, 1)]:  # version 0 files had the runs and results
            for sql in step:
                db.execute(sql)
        db.execute("INSERT INTO runs VALUES (?, 1.0, 'd', '{}', 'running', NULL)", (RUN,))
        db.execute(
            "INSERT INTO results VALUES (?, 's1', 0, ?)",
            (RUN, zlib.compress(_result("s1", 0.5).model_dump_json().encode())),
        )
        for rows in ROWS[:version]:
            for sql in rows:
                db.execute(sql)
        if version >= 6:
            db.execute(
                "INSERT INTO pass_results VALUES (?, 'naive', 's1', 0, ?)",
                (RUN, zlib.compress(_result("s1", 0.25).model_dump_json().encode())),
            )
        db.execute(f"PRAGMA user_version = {version}")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _versions(path: Path) -> tuple[int, dict[str, int]]:
    with closing(sqlite3.connect(path)) as db:
        layout = db.execute("PRAGMA user_version").fetchone()[0]
        rows = db.execute("SELECT feature, version FROM schema_versions").fetchall()
    return layout, dict(rows)


def _features_read(store: RunStore, version: int) -> None:
    """What each feature reads of the file, checked against the rows of its version."""
    assert [r.id for r in store.list()] == [RUN]
    assert [r.scores for r in store.iter_results(RUN)] == [{"faithfulness": 0.5}]
    labels = stored_labels(store, RUN)
    assert [(x.label, x.reviewer) for x in labels] == ([("faithful", "ana")] * (version >= 3))
    batches = store.batches(RUN)
    assert [(b.batch_id, b.keys) for b in batches] == ([("b1", ("k1",))] * (version >= 4))
    assert store.monitor_window(RUN) == (("m", False) if version >= 5 else None)


@pytest.mark.parametrize("version", range(7))
def test_a_history_of_each_older_layout_is_read_as_it_is(tmp_path: Path, version: int) -> None:
    path = tmp_path / "runs.sqlite"
    _old_history(path, version)
    before = _digest(path)
    store = RunStore(path, read_only=True)
    try:
        _features_read(store, version)
        pairs = list(pass_pairs(store, RUN, "naive"))
        assert [(a.scores, b.scores) for a, b in pairs] == [
            ({"faithfulness": 0.5}, {"faithfulness": 0.25})
        ] * (version >= 6)
    finally:
        store.close()
    windows = read_windows(path)
    assert [(w.monitor, w.counts["spans"]) for w in windows] == ([("m", 4)] * (version >= 5))
    assert _digest(path) == before  # no reader wrote a byte


@pytest.mark.parametrize("version", range(7))
def test_a_history_of_each_older_layout_is_upgraded_by_a_writer_and_keeps_its_rows(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "runs.sqlite"
    _old_history(path, version)
    store = RunStore(path)
    try:
        # The store records what the old number stood for and adds only its own tables.
        assert _versions(path) == (7, {**HELD[version], "runs": 2})
        _features_read(store, version)
        # Each feature adds its tables when it writes; the rows from before stay.
        add_labels(store, RUN, "s1", [(None, "unfaithful")], reviewer="bo", queue="triage")
        save_batch(store.file, RUN, BatchRecord("b2", "openai", "gpt", "submitted", ("k2",)))
        add_pass_result(store, RUN, "naive", 0, _result("s1", 0.75))
        written = {"runs": 2, "labels": 1, "batches": 1, "passes": 1}
        assert _versions(path) == (7, {**HELD[version], **written})
        assert len(stored_labels(store, RUN)) == 1 + (version >= 3)
        assert [b.batch_id for b in store.batches(RUN)] == ["b1"] * (version >= 4) + ["b2"]
    finally:
        store.close()
    MonitorHistory(path).close()
    assert _versions(path) == (7, LATEST)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("version", [0, 3, 6])
def test_vera_view_reads_an_older_history_without_writing(tmp_path: Path, version: int) -> None:
    path = tmp_path / "runs.sqlite"
    _old_history(path, version)
    before = _digest(path)
    app = create_app(path, allowed_hosts=["127.0.0.1"])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        listed = client.get("/")
        assert listed.status_code == 200 and RUN in listed.text
        shown = client.get(f"/runs/{RUN}")  # it never finished: said, from what is stored
        assert shown.status_code == 409 and RUN in shown.text
        window = "an open monitor window" if version >= 5 else "has not finished"
        assert window in shown.text
    assert _digest(path) == before


def test_a_feature_written_by_a_newer_vera_is_refused_and_the_others_still_work(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.sqlite"
    _old_history(path, 6)
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE schema_versions SET version = 2 WHERE feature = 'labels'")
    store = RunStore(path)
    try:
        assert [r.id for r in store.list()] == [RUN]  # the runs' tables are known
        for read in (
            lambda: stored_labels(store, RUN),
            lambda: add_labels(
                store, RUN, "s1", [(None, "faithful")], reviewer="a", queue="triage"
            ),
        ):
            with pytest.raises(StoreError) as raised:
                read()
            message = str(raised.value)
            assert f"the run history {path} has version 2 of its 'labels' tables" in message
            assert "written by a newer VERA" in message and "upgrade vera-eval" in message
    finally:
        store.close()
    assert _versions(path)[1]["labels"] == 2  # left as it was


def test_runs_tables_of_a_newer_vera_are_refused_by_every_command_with_exit_2(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE schema_versions SET version = 3 WHERE feature = 'runs'")
    before = _digest(path)
    for read_only in (False, True):
        with pytest.raises(StoreError, match="version 3 of its 'runs' tables"):
            RunStore(path, read_only=read_only)
    listed = CliRunner().invoke(cli.app, ["runs", "list", "--history", str(path)])
    assert listed.exit_code == 2, listed.output
    assert str(path) in listed.output.replace("\n", "") and "newer VERA" in listed.output
    assert _digest(path) == before


def test_two_features_cannot_claim_one_name_in_a_file(tmp_path: Path) -> None:
    def make(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS t (x)")

    file = SqliteFile(
        tmp_path / "f.sqlite", what="the file", flag="--f", schemas=[Schema("a", (make,))]
    )
    try:
        with pytest.raises(ValueError, match="two schemas are named 'a'"):
            file.adopt(Schema("a", (make, make)))
    finally:
        file.close()


def test_a_discarded_run_leaves_no_row_in_any_features_table(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    _old_history(path, 6)
    store = RunStore(path)
    try:
        store.discard(RUN)
        assert store.list() == []
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as db:
        tables = ("runs", "results", "labels", "batches", "monitor_windows", "pass_results")
        left = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
    assert left == dict.fromkeys(tables, 0)
