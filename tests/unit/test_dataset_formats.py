"""Dataset formats come from one registry: the built-ins, and plugins declared under the
`vera.dataset_formats` entry-point group of a real distribution written to a temporary folder.
Every message and the `--format` help list what is registered."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.plugin import PLUGIN_MODULE, write_plugin

from vera import ConfigError, DatasetError, DatasetRowError, load_dataset
from vera.datasets import FORMAT_REGISTRY
from vera.datasets._formats import dataset_format, format_help

WHITEBOX = "the format lookup behind the messages"

# A whole format in one module: a reader, and the `DatasetFormat` naming its extension.
TSV_SOURCE = """
from vera.datasets import DatasetFormat, RawRow, invalid_data


def read_tsv(path):
    with path.open(encoding="utf-8") as fh:
        header = fh.readline().rstrip("\\n").split("\\t")
        for number, line in enumerate(fh, start=2):
            cells = line.rstrip("\\n").split("\\t")
            if len(cells) != len(header):
                data = invalid_data(f"expected {len(header)} cells, found {len(cells)}")
            else:
                data = dict(zip(header, cells))
            yield RawRow(f"line {number}", data)


TSV = DatasetFormat(read_tsv, (".tsv",), summary="tab-separated", text_cells=True)
CLASH = DatasetFormat(read_tsv, (".csv",))
NOT_A_FORMAT = object()
"""


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    FORMAT_REGISTRY.reset_plugins()
    yield
    sys.modules.pop(PLUGIN_MODULE, None)
    FORMAT_REGISTRY.reset_plugins()


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: str) -> None:
    folder = write_plugin(tmp_path / "site", TSV_SOURCE, f"[vera.dataset_formats]\n{entries}\n")
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()


def tsv_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.tsv"
    path.write_text(
        'id\tresponse\tcontexts\ns1\tParis.\t["Paris is in France."]\ns2\ttoo\tmany\tcells\n',
        encoding="utf-8",
    )
    return path


def test_the_built_in_formats_are_registered_in_order() -> None:
    assert FORMAT_REGISTRY.names() == ["json", "jsonl", "csv", "parquet", "otlp"]
    assert dataset_format(".JSONL").extensions == (".jsonl", ".ndjson")


def test_an_unknown_format_name_lists_the_registered_ones(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("")
    with pytest.raises(DatasetError) as error:
        load_dataset(path, format="yaml")
    assert str(error.value) == (
        "unknown dataset format 'yaml'; expected json, jsonl, csv, parquet or otlp"
    )


def test_an_unknown_extension_lists_the_registered_extensions(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text("hello")
    with pytest.raises(DatasetError) as error:
        load_dataset(path)
    assert str(error.value) == (
        f"{path}: unknown dataset format '.txt'; expected a .json, .jsonl, .ndjson, .csv or "
        ".parquet file (or pass format='jsonl' / --format)"
    )


def test_the_format_help_lists_the_built_ins_with_their_summaries() -> None:
    assert format_help() == (
        "Dataset format when the extension does not say: json, jsonl, csv, parquet, otlp "
        "(OpenTelemetry traces; found by content in .json/.jsonl files), or an installed "
        "plugin's."
    )


def test_a_plugin_format_is_read_by_extension_with_row_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, "tsv = vera_test_plugin:TSV")
    dataset = load_dataset(tsv_file(tmp_path), skip_invalid=True)
    samples = list(dataset)
    assert dataset.format == "tsv"
    # text_cells: the contexts cell is parsed out of its text, as CSV's is.
    assert [(s.id, [c.text for c in s.contexts]) for s in samples] == [
        ("s1", ["Paris is in France."])
    ]
    assert [row.message for row in dataset.invalid_rows] == [
        f"{tmp_path / 'rows.tsv'}: line 3: expected 3 cells, found 4"
    ]
    with pytest.raises(DatasetRowError, match="line 3: expected 3 cells"):
        list(load_dataset(tsv_file(tmp_path)))


def test_a_plugin_format_is_named_in_messages_and_chosen_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, "tsv = vera_test_plugin:TSV")
    other = tmp_path / "rows.data"
    other.write_bytes(tsv_file(tmp_path).read_bytes())
    assert load_dataset(other, format="TSV", skip_invalid=True).format == "tsv"
    with pytest.raises(DatasetError, match=r"expected json, jsonl, csv, parquet, otlp or tsv$"):
        load_dataset(other, format="yaml")
    with pytest.raises(DatasetError, match=r"\.csv, \.parquet or \.tsv file"):
        load_dataset(other)


def test_a_plugin_may_not_take_a_built_in_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, "clash = vera_test_plugin:CLASH")
    path = tmp_path / "d.csv"
    path.write_text("id,response\ns1,ok\n")
    with pytest.raises(ConfigError, match=r"'csv' and 'clash' both claim the extension '\.csv'"):
        load_dataset(path)


def test_a_plugin_that_is_no_format_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, "odd = vera_test_plugin:NOT_A_FORMAT")
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "response": "ok"}\n')
    with pytest.raises(ConfigError, match=r"'odd' is object, not a vera\.datasets\.DatasetFormat"):
        load_dataset(path, format="odd")
