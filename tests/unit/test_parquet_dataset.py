"""Parquet datasets: streamed by row group, typed columns, errors naming row and row group."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.docs import run_example
from tests.support.extras import without

import vera
from vera import DatasetError, DatasetRowError, load_dataset

pa = pytest.importorskip("pyarrow", reason=without("parquet"))
pq = pytest.importorskip("pyarrow.parquet", reason=without("parquet"))

CONTEXT = pa.struct([("id", pa.string()), ("text", pa.string())])


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: Any, group: int = 2) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=group)
    return path


def plain_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "question": f"What is item {i}?",
            "answer": f"Item {i} is red.",
            "retrieved_contexts": [f"Item {i} is red.", "Other text."],
            "latency_ms": 10.0 * i,
        }
        for i in range(1, n + 1)
    ]


PLAIN = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("retrieved_contexts", pa.list_(pa.string())),
        ("latency_ms", pa.float64()),
    ]
)


def test_rows_of_several_row_groups_with_a_list_column(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", plain_rows(5), PLAIN, group=2)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    dataset = load_dataset(path)
    samples = list(dataset)
    assert dataset.format == "parquet" and dataset.size_hint() == 5
    assert [s.id for s in samples] == ["s1", "s2", "s3", "s4", "s5"]
    assert samples[4].query == "What is item 5?" and samples[4].response == "Item 5 is red."
    assert samples[4].context_texts == ["Item 5 is red.", "Other text."]
    assert samples[4].latency_ms == 50.0


def test_struct_contexts_and_nested_metadata_are_python_objects(tmp_path: Path) -> None:
    schema = pa.schema(
        [
            ("response", pa.string()),
            ("contexts", pa.list_(CONTEXT)),
            ("metadata", pa.struct([("team", pa.string()), ("tags", pa.list_(pa.string()))])),
            ("asked_at", pa.timestamp("us")),
        ]
    )
    row = {
        "response": "r",
        "contexts": [{"id": "d1", "text": "one"}, {"id": "d2", "text": "two"}],
        "metadata": {"team": "search", "tags": ["a", "b"]},
        "asked_at": datetime.datetime(2026, 1, 2, 3, 4, 5),
    }
    [sample] = load_dataset(write_parquet(tmp_path / "d.parquet", [row], schema))
    assert [(c.id, c.text) for c in sample.contexts] == [("d1", "one"), ("d2", "two")]
    # An unknown column goes into metadata as JSON-ready text, as a JSONL row's would.
    assert sample.metadata == {
        "asked_at": "2026-01-02T03:04:05",
        "team": "search",
        "tags": ["a", "b"],
    }


def bad_rows() -> tuple[list[dict[str, Any]], Any]:
    rows: list[dict[str, Any]] = [
        {"id": f"s{i}", "response": "r", "contexts": [{"id": "d", "text": "t"}]}
        for i in range(1, 6)
    ]
    rows[3]["contexts"] = [{"id": "d", "text": "t"}, {"id": "d9", "text": None}]
    schema = pa.schema(
        [("id", pa.string()), ("response", pa.string()), ("contexts", pa.list_(CONTEXT))]
    )
    return rows, schema


def test_a_bad_row_is_named_by_row_and_row_group(tmp_path: Path) -> None:
    rows, schema = bad_rows()
    path = write_parquet(tmp_path / "d.parquet", rows, schema, group=2)
    with pytest.raises(DatasetRowError) as info:
        list(load_dataset(path))
    assert info.value.location == "row 4 (row group 1)"
    assert info.value.field == "contexts[1].text"
    assert str(info.value).startswith(f"{path}: row 4 (row group 1), field 'contexts[1].text'")


def test_skip_invalid_records_the_bad_row(tmp_path: Path) -> None:
    rows, schema = bad_rows()
    path = write_parquet(tmp_path / "d.parquet", rows, schema, group=2)
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == ["s1", "s2", "s3", "s5"]
    [skipped] = dataset.invalid_rows
    assert (skipped.location, skipped.field) == ("row 4 (row group 1)", "contexts[1].text")


def test_rows_stream_one_row_group_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_parquet(tmp_path / "d.parquet", plain_rows(6), PLAIN, group=2)
    asked: list[list[int]] = []
    real = pq.ParquetFile.iter_batches

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(list(kwargs["row_groups"]))
        return real(self, *args, **kwargs)

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole table was read")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    monkeypatch.setattr(pq.ParquetFile, "read", refuse)
    monkeypatch.setattr(pq, "read_table", refuse)
    assert len(list(load_dataset(path))) == 6
    assert asked == [[0], [1], [2]]


def test_evaluate_a_parquet_file_end_to_end(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", plain_rows(3), PLAIN, group=2)
    report = vera.evaluate(path)
    assert [s.id for s in report.samples] == ["s1", "s2", "s3"]
    results = [s.results["faithfulness"] for s in report.samples]
    # Each answer copies its context: the offline judge passes it, well clear of 0.5.
    assert all(r.passed and r.score is not None and r.score >= 0.9 for r in results)
    mean = sum(r.score or 0.0 for r in results) / len(results)
    assert report.metrics["faithfulness"] == pytest.approx(mean)
    assert json.loads(report.to_json())["samples"][0]["id"] == "s1"


def test_format_parquet_reads_any_extension(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.bin", plain_rows(2), PLAIN)
    assert [s.id for s in load_dataset(path, format="parquet")] == ["s1", "s2"]
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(path)


def test_not_a_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    path.write_text("id,response\n1,r\n")
    with pytest.raises(DatasetError, match=r"d\.parquet: not a readable Parquet file"):
        load_dataset(path)


def test_missing_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_parquet(tmp_path / "d.parquet", plain_rows(1), PLAIN)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import now raises ImportError
    with pytest.raises(DatasetError, match=r"pip install 'vera-eval\[parquet\]'"):
        load_dataset(path)


def test_cli_format_help_names_parquet_and_otlp() -> None:
    from typer.testing import CliRunner

    from vera.cli import app

    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "parquet" in result.output and "otlp" in result.output


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path: Path) -> None:
    done = run_example("parquet.md", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "'faithfulness':" in done.stdout and "['q1', 'q2', 'q3']" in done.stdout
