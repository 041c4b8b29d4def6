"""In-memory data (lists, generators, DataFrames, Hugging Face datasets) validated exactly as a
dataset file's rows are, and `open_dataset` routing every kind of data to the right source."""

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.support.extras import without

from vera import ConfigError, Dataset, DatasetError, DatasetRowError, Sample, load_dataset
from vera.datasets import open_dataset
from vera.datasets._inmemory import InMemoryDataset
from vera.datasets._source import SampleSource

WHITEBOX = "the in-memory data source"

# The pandas and hf extras (pip install -e '.[test-all]'); the light test install skips this.
datasets = pytest.importorskip("datasets", reason=without("hf"))
pd = pytest.importorskip("pandas", reason=without("pandas"))


def test_dicts_use_the_files_field_aliases() -> None:
    rows = [
        {
            "question": "Q1",
            "answer": "A1",
            "retrieved_contexts": ["C1", "C2"],
            "ground_truth": "R1",
            "team": "x",
        },
        {"user_input": "Q2", "actual_output": "A2", "retrieval_context": "C3"},
    ]
    data = open_dataset(rows)
    assert isinstance(data, InMemoryDataset) and isinstance(data, SampleSource)
    first, second = list(data)
    assert (first.id, first.query, first.response, first.reference) == ("row-1", "Q1", "A1", "R1")
    assert first.context_texts == ["C1", "C2"]
    assert first.metadata == {"team": "x"}
    assert (second.id, second.query, second.context_texts) == ("row-2", "Q2", ["C3"])
    assert (data.name, data.size_hint(), data.documents) == ("samples", 2, ())


def test_samples_are_taken_as_they_are() -> None:
    samples = [Sample(id="a", response="x"), Sample(id="b", response="y")]
    data = open_dataset(samples, name="mine")
    got = list(data)
    assert got[0] is samples[0] and got[1] is samples[1]
    assert data.name == "mine"


def test_a_generator_is_kept_so_a_second_pass_gives_the_same_samples() -> None:
    read: list[int] = []

    def rows() -> Iterator[dict[str, str]]:
        for i in range(3):
            read.append(i)
            yield {"id": f"s{i}", "answer": f"a{i}"}

    data = open_dataset(rows())
    assert data.size_hint() is None
    first = list(data)
    second = list(data)
    assert [s.id for s in first] == ["s0", "s1", "s2"]
    assert second == first
    assert read == [0, 1, 2]  # the generator itself was read once
    assert data.size_hint() == 3


def test_a_pass_broken_off_early_does_not_lose_rows() -> None:
    data = open_dataset(iter([{"id": "a"}, {"id": "b"}, {"id": "c"}]))
    for sample in data:
        assert sample.id == "a"
        break
    assert [s.id for s in data] == ["a", "b", "c"]


def test_dataframe_rows_become_plain_python() -> None:
    frame = pd.DataFrame(
        {
            "question": ["Q1", "Q2"],
            "answer": ["A1", "A2"],
            "retrieved_contexts": [["C1"], np.array(["C2", "C3"])],
            "reference": ["R1", np.nan],
            "latency_ms": [12.0, np.nan],
            "tags": [("t1", "t2"), None],
            "count": [np.int64(3), np.int64(4)],
        }
    )
    data = open_dataset(frame)
    assert (data.name, data.size_hint()) == ("dataframe", 2)
    first, second = list(data)
    assert first.context_texts == ["C1"] and second.context_texts == ["C2", "C3"]
    assert (first.reference, first.latency_ms) == ("R1", 12.0)
    # A missing cell is absent, as an empty CSV cell is: no reference, not "unanswerable".
    assert (second.reference, second.latency_ms, second.answerable) == (None, None, None)
    assert first.metadata == {"tags": ["t1", "t2"], "count": 3}
    assert type(first.metadata["count"]) is int
    assert second.metadata == {"count": 4}


class _MyFrame(pd.DataFrame):
    """A DataFrame subclass from outside pandas, as GeoPandas' is."""


def test_a_dataframe_subclass_is_read_by_rows() -> None:
    data = open_dataset(_MyFrame({"id": ["a", "b"], "answer": ["x", "y"]}))
    assert (data.name, [s.id for s in data]) == ("dataframe", ["a", "b"])


def test_an_explicit_null_reference_in_a_dict_still_marks_unanswerable() -> None:
    [sample] = list(open_dataset([{"question": "Q", "answer": "A", "reference": None}]))
    assert sample.answerable is False


def test_hugging_face_dataset_rows() -> None:
    hf = datasets.Dataset.from_list(
        [
            {"question": "Q1", "answer": "A1", "contexts": ["C1"], "reference": "R1"},
            {"question": "Q2", "answer": "A2", "contexts": ["C2", "C3"]},
        ]
    )
    data = open_dataset(hf)
    assert isinstance(data, InMemoryDataset)
    assert (data.name, data.size_hint()) == ("hf_dataset", 2)
    first, second = list(data)
    assert (first.query, first.response, first.reference) == ("Q1", "A1", "R1")
    # Arrow fills the missing reference with None; that is an absent cell, not a null answer.
    assert (second.context_texts, second.reference, second.answerable) == (
        ["C2", "C3"],
        None,
        None,
    )
    assert [s.id for s in data] == ["row-1", "row-2"]


def test_hugging_face_dataset_name_comes_from_its_info() -> None:
    hf = datasets.Dataset.from_list(
        [{"answer": "A"}], info=datasets.DatasetInfo(dataset_name="squad")
    )
    assert open_dataset(hf).name == "squad"


def test_a_dataset_dict_asks_for_one_split() -> None:
    splits = datasets.DatasetDict({"test": datasets.Dataset.from_list([{"answer": "A"}])})
    with pytest.raises(ConfigError, match=r"several splits \('test'\); pass one"):
        open_dataset(splits)


BAD_LATENCY = [
    {"answer": "a", "latency_ms": "1"},
    {"answer": "b", "latency_ms": "2"},
    {"answer": "c", "latency_ms": "abc"},
]


def _gen(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield from rows


@pytest.mark.parametrize(
    ("make", "label"),
    [
        (list, "<rows>"),
        (_gen, "<rows>"),
        (pd.DataFrame, "<DataFrame>"),
        (datasets.Dataset.from_list, "<Hugging Face dataset>"),
    ],
    ids=["list", "generator", "dataframe", "hf"],
)
def test_a_row_error_names_source_row_and_field(
    make: Callable[[list[dict[str, Any]]], object], label: str
) -> None:
    data = open_dataset(make(BAD_LATENCY))
    with pytest.raises(DatasetRowError) as caught:
        list(data)
    error = caught.value
    assert (error.path, error.location, error.field) == (label, "row 3", "latency_ms")
    assert "valid number" in error.problem and "'abc'" in error.problem
    assert str(error).startswith(f"{label}: row 3, field 'latency_ms': ")


def test_a_field_is_named_as_the_user_spelled_it() -> None:
    frame = pd.DataFrame({"answer": ["a", "b"], "retrieved_contexts": [["c"], 5]})
    with pytest.raises(DatasetRowError) as caught:
        list(open_dataset(frame))
    assert (caught.value.location, caught.value.field) == ("row 2", "retrieved_contexts")


def test_in_memory_and_file_rows_fail_the_same_way(tmp_path: Path) -> None:
    row = {"answer": "a", "contexts": [{"text": 3}]}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(DatasetRowError) as from_file:
        list(load_dataset(path))
    with pytest.raises(DatasetRowError) as from_memory:
        list(open_dataset([row]))
    assert from_file.value.field == from_memory.value.field == "contexts[0].text"
    assert from_file.value.problem == from_memory.value.problem


def test_a_row_that_is_neither_sample_nor_mapping() -> None:
    with pytest.raises(
        DatasetRowError,
        match=r"^<rows>: row 2: expected a Sample or a mapping of sample fields, got int$",
    ):
        list(open_dataset([{"answer": "a"}, 3]))


@pytest.mark.parametrize(
    "rows",
    [
        [{"id": "x", "answer": "a"}, {"id": "x", "answer": "b"}],
        [Sample(id="x"), Sample(id="x")],
        [Sample(id="x"), {"id": "x"}],
    ],
    ids=["dicts", "samples", "mixed"],
)
def test_duplicate_ids_raise(rows: list[object]) -> None:
    with pytest.raises(DatasetRowError) as caught:
        list(open_dataset(rows))
    assert (caught.value.location, caught.value.field) == ("row 2", "id")
    assert caught.value.problem == "duplicate id 'x' (first used at row 1)"


def test_skip_invalid_collects_rows_and_resets_each_pass() -> None:
    rows = [{"id": "a"}, {"id": "b", "latency_ms": -1}, 7, {"id": "a"}, {"id": "c"}]
    data = open_dataset(iter(rows), skip_invalid=True)
    for _ in range(2):
        assert [s.id for s in data] == ["a", "c"]
        assert [(r.location, r.field) for r in data.invalid_rows] == [
            ("row 2", "latency_ms"),
            ("row 3", None),
            ("row 4", "id"),
        ]
    assert data.invalid_rows[0].message.startswith("<rows>: row 2, field 'latency_ms': ")


def test_duplicate_dataframe_columns_are_refused() -> None:
    frame = pd.DataFrame([["a", "b"]], columns=["answer", "answer"])
    with pytest.raises(DatasetError, match=r"<DataFrame>: duplicate column names \['answer'\]"):
        list(open_dataset(frame))


def test_open_dataset_reads_files_and_bundled_names(tmp_path: Path) -> None:
    example = open_dataset("example")
    assert isinstance(example, Dataset)
    assert example.name == "example"
    assert [s.id for s in example] == [s.id for s in load_dataset("example")]
    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": "a", "answer": "x"}\n', encoding="utf-8")
    found = open_dataset(path, name="renamed")
    assert isinstance(found, Dataset) and isinstance(found, SampleSource)
    assert (found.name, [s.id for s in found]) == ("renamed", ["a"])


def test_open_dataset_returns_a_source_as_it_is() -> None:
    example = load_dataset("example")
    assert open_dataset(example) is example
    assert example.name == "example"
    assert open_dataset(example, name="other", skip_invalid=True) is example
    assert (example.name, example.skip_invalid) == ("other", True)
    rows = InMemoryDataset([{"answer": "a"}])
    assert open_dataset(rows) is rows


@pytest.mark.parametrize(
    "one", [Sample(id="only", response="r"), {"id": "only", "answer": "r"}], ids=["sample", "dict"]
)
def test_a_single_sample_or_mapping_is_one_row(one: object) -> None:
    data = open_dataset(one)
    assert [(s.id, s.response) for s in data] == [("only", "r")]
    assert data.size_hint() == 1


@pytest.mark.parametrize("bad", [3, None, b"bytes", object()], ids=["int", "none", "bytes", "obj"])
def test_anything_else_is_a_config_error(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"cannot read samples from .*; expected a dataset file"):
        open_dataset(bad)


def test_format_applies_to_files_only() -> None:
    with pytest.raises(ConfigError, match="format='csv' applies to dataset files only"):
        open_dataset([{"answer": "a"}], format="csv")


@pytest.mark.slow
def test_lists_need_neither_pandas_nor_datasets() -> None:
    code = (
        "import sys\n"
        "from vera.datasets import open_dataset\n"
        "assert [s.id for s in open_dataset([{'id': 'a'}])] == ['a']\n"
        "print(sorted({'pandas', 'datasets'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
