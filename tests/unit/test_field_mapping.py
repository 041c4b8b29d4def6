"""Column mapping, as RAGAS's `column_map`: `--field contexts=docs`, `fields=` in Python and
`[tool.vera.fields]`, applied by every reader (JSON, JSONL, CSV, Parquet, in-memory rows,
DataFrames), with row errors that still name the file, the line and the column."""

import csv
import json
from pathlib import Path

import pytest
from tests.support.extras import without

import vera
from vera import ConfigError, DatasetError, DatasetRowError, load_dataset, load_settings
from vera.datasets import open_dataset
from vera.datasets._fields import check_field_map, parse_field_option

WHITEBOX = "the dataset readers' own parts"

FACT = "The refund window is 30 days."
ROWS = [
    {"id": f"s{i}", "question": "How long is the refund window?", "docs": [FACT], "answer": FACT}
    for i in range(3)
]
MAP = {"contexts": "docs"}


def _write(tmp_path: Path, fmt: str, rows: list[dict[str, object]] = ROWS) -> Path:
    path = tmp_path / f"d.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "json":
        path.write_text(json.dumps(rows, indent=1))
    elif fmt == "csv":
        with path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(rows[0].keys())
            for row in rows:
                writer.writerow(json.dumps(v) if isinstance(v, list) else v for v in row.values())
    else:
        pd = pytest.importorskip("pandas", reason=without("pandas"))
        pytest.importorskip("pyarrow", reason=without("parquet"))
        pd.DataFrame(rows).to_parquet(path)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet"])
def test_every_file_reader_reads_the_mapped_column(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path, fmt)
    unmapped = list(load_dataset(path))
    assert all(s.contexts == () and "docs" in s.metadata for s in unmapped)
    dataset = load_dataset(path, fields=MAP)
    samples = list(dataset)
    assert [s.context_texts for s in samples] == [[FACT]] * 3
    assert all("docs" not in s.metadata for s in samples)
    assert dataset.unrecognised_fields == set()


@pytest.mark.parametrize("kind", ["rows", "dataframe"])
def test_in_memory_rows_and_dataframes_read_the_mapped_column(kind: str) -> None:
    data: object = ROWS
    if kind == "dataframe":
        data = pytest.importorskip("pandas", reason=without("pandas")).DataFrame(ROWS)
    samples = list(open_dataset(data, fields=MAP))
    assert [s.context_texts for s in samples] == [[FACT]] * 3


def test_a_mapped_column_comes_before_the_fields_usual_names() -> None:
    # "answer" is the response's alias; mapped to the reference it is read as that only.
    rows = [{"query": "q", "response": FACT, "answer": "30 days", "contexts": [FACT]}]
    [sample] = open_dataset(rows, fields={"reference": "answer"})
    assert sample.response == FACT and sample.reference == "30 days"
    both = [{"query": "q", "response": FACT, "docs": [FACT], "contexts": [FACT]}]
    with pytest.raises(DatasetRowError, match="both 'docs' and 'contexts' give the contexts"):
        list(open_dataset(both, fields=MAP))


def test_row_errors_name_the_file_line_and_mapped_column(tmp_path: Path) -> None:
    rows = [*ROWS[:2], {**ROWS[2], "docs": 7}]
    with pytest.raises(DatasetRowError) as caught:
        list(load_dataset(_write(tmp_path, "jsonl", rows), fields=MAP))
    message = str(caught.value)
    assert "d.jsonl" in message and "line 3" in message and "docs" in message
    assert caught.value.field == "docs"


def test_a_wrong_mapping_says_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'context' is not a VERA field.*contexts"):
        check_field_map({"context": "docs"})
    with pytest.raises(ValueError, match="mapped to two fields"):
        check_field_map({"contexts": "docs", "reference": "docs"})
    with pytest.raises(ValueError, match="expected FIELD=COLUMN"):
        parse_field_option(["contextsdocs"])
    assert parse_field_option(["contexts=docs", "query= question "]) == {
        "contexts": "docs",
        "query": "question",
    }
    with pytest.raises(DatasetError, match="not a VERA field"):
        load_dataset(_write(tmp_path, "jsonl"), fields={"docs": "contexts"})


def test_config_files_map_fields_and_flags_add_to_them(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.vera.fields]\ncontexts = "docs"\n')
    settings = load_settings({"fields": {"query": "question"}}, directory=tmp_path)
    assert settings.fields == {"contexts": "docs", "query": "question"}
    (tmp_path / "vera.toml").write_text('[fields]\ncontext = "docs"\n')
    with pytest.raises(ConfigError, match=r"vera.toml.*fields.*not a vera field"):
        load_settings(directory=tmp_path)


def test_python_evaluate_maps_fields_and_refuses_an_unread_contexts_column() -> None:
    report = vera.evaluate(ROWS, fields=MAP)
    assert report.metric_summary["faithfulness"].passed == 3  # every claim found in `docs`
    with pytest.raises(
        ConfigError, match=r"column 'docs' holds a list of texts.*--field contexts=docs"
    ):
        vera.evaluate(ROWS)
