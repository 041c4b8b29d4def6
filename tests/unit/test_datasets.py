"""Loading datasets: every format, every tool's field names, and every kind of bad input."""

import json
from pathlib import Path

import pytest

from vera import DatasetError, DatasetRowError, Sample, load_dataset


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_vera_fields(tmp_path: Path) -> None:
    row = {
        "id": "s1",
        "query": "q",
        "response": "r",
        "contexts": ["plain", {"id": "d1", "text": "obj", "source": "a.md"}],
        "reference": "ref",
        "citations": ["d1", {"document_id": "d2", "quote": "x"}],
        "category": "fact_single",
        "latency_ms": 12.5,
        "metadata": {"k": 1},
    }
    [sample] = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])))
    assert sample.context_texts == ["plain", "obj"]
    assert sample.contexts[1].id == "d1" and sample.contexts[1].source == "a.md"
    assert [c.document_id for c in sample.citations] == ["d1", "d2"]
    assert (sample.reference, sample.category, sample.latency_ms) == ("ref", "fact_single", 12.5)
    assert sample.metadata == {"k": 1}


@pytest.mark.parametrize(
    "row",
    [
        # RAGAS
        {"user_input": "Q", "response": "A", "retrieved_contexts": ["C1", "C2"], "reference": "R"},
        # DeepEval
        {
            "input": "Q",
            "actual_output": "A",
            "retrieval_context": ["C1", "C2"],
            "expected_output": "R",
        },
        # Axion
        {
            "query": "Q",
            "actual_output": "A",
            "retrieved_content": ["C1", "C2"],
            "expected_output": "R",
        },
    ],
    ids=["ragas", "deepeval", "axion"],
)
def test_other_tools_field_names(tmp_path: Path, row: dict[str, object]) -> None:
    [sample] = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])))
    assert (sample.query, sample.response, sample.reference) == ("Q", "A", "R")
    assert sample.context_texts == ["C1", "C2"]
    assert sample.id == "row-1"


def test_axion_latency_is_seconds(tmp_path: Path) -> None:
    row = {"query": "q", "actual_output": "a", "retrieved_content": "c", "latency": 2.13}
    [sample] = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])))
    assert sample.latency_ms == pytest.approx(2130.0)


def test_single_string_context_is_one_element_list(tmp_path: Path) -> None:
    [sample] = list(
        load_dataset(write_jsonl(tmp_path / "d.jsonl", [{"response": "a", "contexts": "only"}]))
    )
    assert sample.context_texts == ["only"]


def test_deepeval_context_is_only_a_fallback(tmp_path: Path) -> None:
    rows = [
        {"input": "q", "actual_output": "a", "retrieval_context": ["got"], "context": ["ideal"]},
        {"input": "q", "actual_output": "a", "context": ["ideal"]},
    ]
    first, second = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert first.context_texts == ["got"] and first.metadata == {"context": ["ideal"]}
    assert second.context_texts == ["ideal"]


def test_unknown_keys_are_kept_in_metadata(tmp_path: Path) -> None:
    row = {"id": "x", "response": "a", "reference_contexts": ["r"], "metadata": {"task": "qa"}}
    [sample] = list(load_dataset(write_jsonl(tmp_path / "d.jsonl", [row])))
    assert sample.metadata == {"reference_contexts": ["r"], "task": "qa"}


def test_two_names_for_one_field_is_an_error(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"query": "a", "user_input": "b", "response": "r"}])
    with pytest.raises(DatasetRowError, match=r"d.jsonl: line 1, field 'user_input': both 'query'"):
        list(load_dataset(path))


def test_json_array_rows_name_row_and_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('[\n  {"id": "a", "response": "ok"},\n\n  {"id": "b", "response": 7}\n]\n')
    with pytest.raises(DatasetRowError) as info:
        list(load_dataset(path))
    assert info.value.location == "row 2 (line 4)"
    assert info.value.field == "response"
    assert str(info.value).startswith(f"{path}: row 2 (line 4), field 'response': ")
    assert "valid string" in str(info.value) and "got 7" in str(info.value)


def test_json_object_with_samples_list(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"samples": [{"id": "a", "response": "r"}]}))
    assert [s.id for s in load_dataset(path)] == ["a"]


def test_nested_field_error_names_the_path(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"response": "r", "contexts": ["ok", {"id": "x"}]}])
    with pytest.raises(DatasetRowError) as info:
        list(load_dataset(path))
    assert info.value.field == "contexts[1].text"
    assert "line 1" in str(info.value)


def test_csv_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "id,question,answer,retrieved_contexts,reference,latency_ms\n"
        '1,Q1,A1,"[""c1"", ""c2""]",R1,10\n'
        "2,Q2,A2,\"['p1', 'p2']\",,\n"
        "3,Q3,A3,just one,R3,5\n",
        encoding="utf-8",
    )
    rows = list(load_dataset(path))
    assert [r.id for r in rows] == ["1", "2", "3"]
    assert rows[0].context_texts == ["c1", "c2"] and rows[0].latency_ms == 10.0
    assert rows[1].context_texts == ["p1", "p2"] and rows[1].reference is None
    assert rows[2].context_texts == ["just one"]


def test_csv_bad_number_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,response,latency_ms\na,r,1\nb,r,fast\n")
    with pytest.raises(
        DatasetRowError, match=r"d.csv: line 3, field 'latency_ms': expected a number"
    ):
        list(load_dataset(path))


def test_invalid_json_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "response": "r"}\n{"id": "b", "response": \n')
    with pytest.raises(DatasetRowError, match=r"line 2: invalid JSON"):
        list(load_dataset(path))


def test_rows_are_streamed_lazily(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"id": "a", "response": "r"}, {"id": "b", "response": 1}]
    )
    rows = iter(load_dataset(path))
    assert next(rows).id == "a"  # the bad second row has not been read yet
    with pytest.raises(DatasetRowError):
        next(rows)


def test_skip_invalid_records_and_goes_on(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": "a", "response": "r"},
            {"id": "b", "latency_ms": -3},
            "not an object",
            {"id": "a", "response": "dup"},
            {"id": "c", "response": "r"},
        ],
    )
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == ["a", "c"]
    assert [(r.location, r.field) for r in dataset.invalid_rows] == [
        ("line 2", "latency_ms"),
        ("line 3", None),
        ("line 4", "id"),
    ]
    assert "duplicate id 'a' (first used at line 1)" in dataset.invalid_rows[2].message


def test_duplicate_ids_raise(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"id": "a", "response": "r"}, {"id": "a", "response": "s"}]
    )
    with pytest.raises(DatasetRowError, match=r"line 2, field 'id': duplicate id 'a'"):
        list(load_dataset(path))


@pytest.mark.slow
def test_a_duplicate_far_from_its_first_use_names_it(tmp_path: Path) -> None:
    # Seen ids live in a temporary SQLite file, not a dict: past its page cache it spills to
    # disk, and the first use of an id is still found, as is the same id in a second pass.
    rows = [{"id": f"s{i}", "response": "r"} for i in range(30_000)]
    rows.append({"id": "s7", "response": "again"})
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    dataset = load_dataset(path, skip_invalid=True)
    for _ in range(2):
        assert sum(1 for _ in dataset) == 30_000
        assert [row.message for row in dataset.invalid_rows] == [
            f"{path}: line 30001, field 'id': duplicate id 's7' (first used at line 8)"
        ]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"dataset file not found: .*nope\.jsonl"):
        load_dataset(tmp_path / "nope.jsonl")


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    path.write_text("hello")
    with pytest.raises(DatasetError, match=r"unknown dataset format '.txt'"):
        load_dataset(path)
    assert [
        s.id for s in load_dataset(write_jsonl(tmp_path / "d.data", [{"id": "z"}]), format="jsonl")
    ] == ["z"]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_non_utf8_bytes_name_the_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    header = b"id,response\n" if suffix == ".csv" else b""
    body = {
        ".jsonl": b'{"id": "a", "response": "ok"}\n{"id": "b", "response": "caf\xe9"}\n',
        ".json": b'[\n{"id": "a", "response": "caf\xe9"}\n]',
        ".csv": b"b,caf\xe9\n",
    }[suffix]
    path.write_bytes(header + body)
    with pytest.raises(DatasetError, match=r"line 2: not valid UTF-8 \(byte 0xe9"):
        list(load_dataset(path))


def test_invalid_json_document_names_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{\n  "samples": [\n    {"id": "a",}\n  ]\n}')
    with pytest.raises(DatasetError, match=r"d.json: line 3, column \d+: invalid JSON"):
        load_dataset(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"id": "a", "response": "r"}\n')
    assert [s.id for s in load_dataset(path)] == ["a"]


def test_seed_001_layout(tmp_path: Path) -> None:
    layout = {
        "name": "legal-contracts",
        "documents": [{"id": "doc-1", "title": "MSA", "text": "Payment is due in 30 days."}],
        "queries": [
            {
                "id": "q1",
                "query": "What is the payment term?",
                "grounded_answer": "30 days",
                "citations": [{"document_id": "doc-1", "quote": "30 days"}],
                "expected_score": 0.9,
                "category": "fact_single",
            },
            {
                "id": "q2",
                "query": "Liability cap?",
                "grounded_answer": None,
                "citations": [],
                "category": "unanswerable",
                "response": "It is not specified.",
            },
        ],
    }
    path = tmp_path / "legal.json"
    path.write_text(json.dumps(layout))
    dataset = load_dataset(path)
    assert dataset.name == "legal-contracts"
    assert [d.id for d in dataset.documents] == ["doc-1"]  # known before iterating
    assert dataset.documents[0].source == "MSA"
    q1, q2 = dataset
    assert q1.response is None and q1.reference == "30 days"
    assert q1.citations[0].quote == "30 days" and q1.metadata == {"expected_score": 0.9}
    assert q2.reference is None and q2.category == "unanswerable"
    # A stored response without its own contexts is judged against the whole corpus.
    assert q2.context_texts == ["Payment is due in 30 days."]


def test_bundled_example_loads_by_name() -> None:
    samples = list(load_dataset("example"))
    assert len(samples) >= 20
    assert all(isinstance(s, Sample) and s.response for s in samples)
    assert {
        "fact_single",
        "fact_multiple",
        "reasoning",
        "summary",
        "unanswerable",
        "contradiction",
    } <= {s.category for s in samples}


@pytest.mark.parametrize(
    ("field", "meant"),
    [
        ("respnse", "'response'"),
        ("retrieved_context", "'retrieved_contexts', read as the contexts"),
        ("Query", "'query'"),
        ("contxts", "'contexts'"),
    ],
)
def test_a_misspelt_field_is_an_error_naming_the_field_it_meant(
    tmp_path: Path, field: str, meant: str
) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "a", "query": "q", field: "x"}) + "\n")
    with pytest.raises(DatasetRowError, match=rf"line 1, field '{field}': unknown field") as info:
        list(load_dataset(path))
    assert f"did you mean {meant}?" in str(info.value)


def test_unknown_fields_that_resemble_nothing_still_go_to_metadata(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "a", "response": "r", "team": "x", "model_name": 3}) + "\n")
    [sample] = list(load_dataset(path))
    assert sample.metadata == {"team": "x", "model_name": 3}


def test_a_non_utf8_line_is_one_invalid_row_under_skip_invalid(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(
        b'{"id": "a", "response": "ok"}\n{"id": "b", "response": "caf\xe9"}\n'
        b'{"id": "c", "response": "fine"}\n'
    )
    data = load_dataset(path, skip_invalid=True)
    assert [s.id for s in data] == ["a", "c"]
    [invalid] = data.invalid_rows
    assert invalid.location == "line 2" and "not valid UTF-8" in invalid.problem
