"""The migration registry of `SqliteFile`: each feature's tables versioned apart in one file."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from vera import StoreError
from vera._sqlite_file import Migration, Schema, SqliteFile

WHITEBOX = "the SQLite file layer's registry, below every feature that uses it"


def _step(table: str, ran: list[str]) -> Migration:
    def step(db: sqlite3.Connection) -> None:
        ran.append(table)
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (x)")

    return step


def _open(
    path: Path, *schemas: Schema, read_only: bool = False, legacy: tuple[dict[str, int], ...] = ()
) -> SqliteFile:
    return SqliteFile(
        path, what="the file", flag="--file", schemas=schemas, read_only=read_only, legacy=legacy
    )


def _state(path: Path) -> tuple[int, dict[str, int], set[str]]:
    with closing(sqlite3.connect(path)) as db:
        layout = db.execute("PRAGMA user_version").fetchone()[0]
        versions = dict(db.execute("SELECT feature, version FROM schema_versions").fetchall())
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return layout, versions, tables - {"schema_versions"}


def test_a_feature_adds_a_migration_without_touching_another(tmp_path: Path) -> None:
    path, ran = tmp_path / "f.sqlite", []
    first = Schema("first", (_step("a1", ran),))
    second = Schema("second", (_step("b1", ran),))
    _open(path, first, second).close()
    assert ran == ["a1", "b1"]
    grown = Schema("first", (_step("a1", ran), _step("a2", ran)))
    file = _open(path, grown, second)
    file.close()
    assert ran == ["a1", "b1", "a2"]  # only the new step of `first` ran
    assert _state(path) == (1, {"first": 2, "second": 1}, {"a1", "a2", "b1"})


def test_a_feature_adopted_later_keeps_the_file_and_its_other_features(tmp_path: Path) -> None:
    path, ran = tmp_path / "f.sqlite", []
    file = _open(path, Schema("first", (_step("a1", ran),)))
    try:
        assert file.version_of("later") == 0
        file.adopt(Schema("later", (_step("c1", ran), _step("c2", ran))))
        assert file.version_of("later") == 2
    finally:
        file.close()
    assert _state(path) == (1, {"first": 1, "later": 2}, {"a1", "c1", "c2"})


def test_a_reader_checks_a_feature_but_never_writes(tmp_path: Path) -> None:
    path, ran = tmp_path / "f.sqlite", []
    _open(path, Schema("first", (_step("a1", ran),))).close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    reader = _open(path, read_only=True)
    try:
        reader.adopt(Schema("first", (_step("a1", ran), _step("a2", ran))))  # older file: read
        reader.adopt(Schema("absent", (_step("z1", ran),)))
        assert (reader.version_of("first"), reader.version_of("absent")) == (1, 0)
    finally:
        reader.close()
    with pytest.raises(StoreError, match="version 1 of its 'first' tables, written by a newer"):
        _open(path, Schema("first", ()), read_only=True)
    assert ran == ["a1"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_file_of_the_single_chain_is_read_by_its_legacy_versions(tmp_path: Path) -> None:
    path, ran = tmp_path / "f.sqlite", []
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE a1 (x)")
        db.execute("CREATE TABLE b1 (x)")
        db.execute("PRAGMA user_version = 2")
    legacy = ({"first": 1}, {"first": 1, "second": 1})
    reader = _open(path, read_only=True, legacy=legacy)
    assert (reader.version_of("first"), reader.version_of("second")) == (1, 1)
    reader.close()
    _open(path, Schema("first", (_step("a1", ran), _step("a2", ran))), legacy=legacy).close()
    assert ran == ["a2"]
    assert _state(path) == (3, {"first": 2, "second": 1}, {"a1", "a2", "b1"})
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA user_version = 4")
    with pytest.raises(StoreError, match="layout version 4, written by a newer VERA"):
        _open(path, legacy=legacy)


def test_two_writers_adopting_one_feature_apply_it_once(tmp_path: Path) -> None:
    path, ran = tmp_path / "f.sqlite", []
    one, two = _open(path), _open(path)
    try:
        schema = Schema("first", (_step("a1", ran),))
        one.adopt(schema)
        two.adopt(Schema("first", (_step("a1", ran),)))
    finally:
        one.close()
        two.close()
    assert ran == ["a1"]  # the second reads the version the first recorded: nothing left
