"""The report's and the run history's layout versions: `vera eval`'s JSON keeps seed 001's
layout and adds `schema_version`; the history is brought up to date by numbered migrations when
a writer opens it, read as it is by a reader, and refused when a newer VERA wrote it."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

import vera
from vera import Report, RunStore, StoreError, cli
from vera._results import REPORT_SCHEMA_VERSION, Counts
from vera._review._labels import stored_labels
from vera._sqlite_file import Schema, SqliteFile
from vera.providers import ChatResponse
from vera.providers._cache import ResponseCache

WHITEBOX = "the report builder, on hand-made results; the history's batch journal and schema"

LAYOUT = Path(__file__).parents[1] / "support" / "report_layout_example.json"
"""The key paths, in document order, of `vera eval -d example -o r.json` as written before the
report had a schema version (lists collapsed to `[]`), and the answer verdicts added since
(`samples[].verdict`, `answers`: optional fields, absent where no claim was verified, which an
older reader ignores)."""

OLD_HISTORY_SQL = """
CREATE TABLE runs (id TEXT PRIMARY KEY, created REAL NOT NULL, dataset TEXT NOT NULL,
    options TEXT NOT NULL, status TEXT NOT NULL, report TEXT);
CREATE TABLE results (run_id TEXT NOT NULL REFERENCES runs(id), sample_id TEXT NOT NULL,
    position INTEGER NOT NULL, result TEXT NOT NULL, PRIMARY KEY (run_id, sample_id));
"""
"""The history as VERA wrote it before layout versions and indexes: results as JSON text,
each finished report stored whole, samples included."""


def _paths(value: Any, at: str, found: list[str]) -> list[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{at}.{key}"
            if path not in found:
                found.append(path)
            _paths(inner, path, found)
    elif isinstance(value, list):
        for inner in value:
            _paths(inner, at + "[]", found)
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("report") / "r.json"
    result = CliRunner().invoke(
        cli.app, ["eval", "-d", "example", "-o", str(out), "--no-history", "--no-cache"]
    )
    assert result.exit_code == 1, result.output  # unfaithful answers: gate
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_the_example_report_keeps_its_layout_with_the_schema_version_first(
    written: dict[str, Any],
) -> None:
    assert next(iter(written)) == "schema_version"
    assert written["schema_version"] == REPORT_SCHEMA_VERSION == 2
    rest = {key: value for key, value in written.items() if key != "schema_version"}
    assert _paths(rest, "", []) == json.loads(LAYOUT.read_text(encoding="utf-8"))


def test_the_written_json_reads_back_into_the_same_report(written: dict[str, Any]) -> None:
    report = Report.model_validate(written)
    assert report.to_dict() == written
    assert isinstance(report.counts, Counts)
    assert report.counts.scored == report.counts["scored"] == written["counts"]["scored"] == 28


def test_counts_read_by_attribute_or_by_key(written: dict[str, Any]) -> None:
    counts = Report.model_validate(written).counts
    assert counts.get("errors") == 0 and counts.get("no such count", -1) == -1
    with pytest.raises(KeyError):
        counts["model_config"]


def test_seed_figures_are_typed_beside_the_metric_means(written: dict[str, Any]) -> None:
    report = Report.model_validate(written)
    assert set(report.metrics) == {"faithfulness", "latency_p99_ms"}
    assert report.metric_means == {"faithfulness": written["metrics"]["faithfulness"]}
    assert report.figures.latency_p99_ms == written["metrics"]["latency_p99_ms"]
    assert report.figures.f1_score is None


def test_a_report_from_before_versions_reads_as_the_current_one(written: dict[str, Any]) -> None:
    old = {key: value for key, value in written.items() if key != "schema_version"}
    assert Report.model_validate(old).to_dict() == written


def test_a_report_from_a_newer_vera_is_refused(written: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="schema_version 3, written by a newer VERA"):
        Report.model_validate({**written, "schema_version": 3})


def _old_history(path: Path) -> tuple[str, Report]:
    """A history file as the code before layout versions left it, holding one finished run."""
    report = vera.evaluate("example")
    whole = {k: v for k, v in report.to_dict().items() if k != "schema_version"}
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(OLD_HISTORY_SQL)
        db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
            ("20250101-000000-abcdef", 1.0, "example", "{}", "finished", json.dumps(whole)),
        )
        db.executemany(
            "INSERT INTO results VALUES (?, ?, ?, ?)",
            [
                ("20250101-000000-abcdef", s.id, i, s.model_dump_json())
                for i, s in enumerate(report.samples)
            ],
        )
    return "20250101-000000-abcdef", report


def _layout(path: Path) -> tuple[int, set[str]]:
    with closing(sqlite3.connect(path)) as db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    return version, {name for name in indexes if not name.startswith("sqlite_autoindex")}


def test_an_old_history_is_read_as_it_is_then_migrated_by_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    run_id, report = _old_history(path)
    assert _layout(path) == (0, set())

    reader = RunStore(path, read_only=True)
    assert reader.file.version_of("runs") == 0
    assert [r.id for r in reader.list()] == [run_id]
    assert reader.report(run_id).samples == report.samples
    assert stored_labels(reader, run_id) == []  # no labels table yet, and none made by reading
    reader.close()
    assert _layout(path) == (0, set())  # a reader changed nothing

    writer = RunStore(path)
    assert writer.file.version_of("runs") == 2
    # The store adopts only its own tables; the review's are made when a label is given.
    assert _layout(path) == (7, {"runs_by_time", "runs_by_dataset"})
    assert _versions(path) == {"runs": 2}
    assert stored_labels(writer, run_id) == []
    assert writer.get(run_id).metrics == report.metrics
    assert list(writer.iter_results(run_id)) == list(report.samples)
    assert writer.report(run_id).counts == report.counts
    writer.close()


def _versions(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as db:
        return dict(db.execute("SELECT feature, version FROM schema_versions").fetchall())


def test_a_new_history_is_made_at_the_current_version(tmp_path: Path) -> None:
    RunStore(tmp_path / "runs.sqlite").close()
    assert _layout(tmp_path / "runs.sqlite") == (7, {"runs_by_time", "runs_by_dataset"})
    assert _versions(tmp_path / "runs.sqlite") == {"runs": 2}


def test_a_history_from_a_newer_vera_is_refused_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 8")
    for read_only in (False, True):
        with pytest.raises(StoreError, match="layout version 8, written by a newer VERA"):
            RunStore(path, read_only=read_only)
    assert _layout(path)[0] == 8  # neither touched it
    listed = CliRunner().invoke(cli.app, ["runs", "list", "--history", str(path)])
    assert listed.exit_code == 2
    assert "newer VERA" in listed.output and "upgrade vera-eval" in listed.output
    evaluated = CliRunner().invoke(
        cli.app, ["eval", "-d", "example", "--history", str(path), "--no-cache"]
    )
    assert evaluated.exit_code == 2
    assert "layout version 8" in evaluated.output


def test_an_old_response_cache_is_migrated_and_keeps_its_replies(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, response TEXT, created REAL)")
        db.execute(
            "INSERT INTO responses VALUES ('k', ?, 1.0)",
            (ChatResponse(text="hi").model_dump_json(),),
        )
    cache = ResponseCache(path)
    found = cache.get("k")
    assert found is not None and found.text == "hi"
    assert _layout(path)[0] == 2  # its one feature's version is in schema_versions now
    assert _versions(path) == {"responses": 1}


def test_a_failed_migration_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "file.sqlite"

    def first(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE kept (x)")

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half (x)")
        db.execute("INSERT INTO no_such_table VALUES (1)")

    SqliteFile(path, what="the file", flag="--file", schemas=[Schema("x", (first,))]).close()
    with pytest.raises(StoreError, match="no such table"):
        SqliteFile(path, what="the file", flag="--file", schemas=[Schema("x", (first, broken))])
    with closing(sqlite3.connect(path)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert tables == {"kept", "schema_versions"}
    assert _versions(path) == {"x": 1}


def test_a_response_cache_from_a_newer_vera_is_refused_and_left_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "responses.sqlite"
    ResponseCache(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE schema_versions SET version = 2 WHERE feature = 'responses'")
    with pytest.raises(StoreError) as raised:
        ResponseCache(path)
    message = str(raised.value)
    assert f"the response cache {path} has version 2 of its 'responses' tables" in message
    assert "newer VERA" in message and "--cache-path" in message
    assert _versions(path) == {"responses": 2}
