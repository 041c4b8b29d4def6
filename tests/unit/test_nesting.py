"""`vera.datasets`: JSON nested deeper than `MAX_NESTING` is refused by a scan, never
by a RecursionError, with the top-level field it is under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vera import DatasetRowError, load_dataset
from vera.datasets import MAX_NESTING, TooDeepError, loads_bounded, skip_value


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_limit_is_exact_and_names_the_field() -> None:
    at_limit = '{"a": 1, "meta": ' + nested(MAX_NESTING - 1) + "}"
    assert loads_bounded(at_limit)["a"] == 1
    with pytest.raises(TooDeepError) as refused:
        loads_bounded('{"a": "[[[", "meta": ' + nested(MAX_NESTING) + "}")
    assert refused.value.field == "meta"  # brackets inside strings do not count
    with pytest.raises(TooDeepError) as bare:
        loads_bounded(nested(1_000_000))
    assert bare.value.field is None


def test_a_scan_skips_a_deep_value_to_its_end() -> None:
    text = nested(5_000) + ', "next"'
    end, too_deep = skip_value(text, 0)
    assert text[end:] == ', "next"'
    assert too_deep is not None and too_deep.offset == MAX_NESTING
    with pytest.raises(json.JSONDecodeError):
        skip_value("[[[", 0)


def test_a_deep_csv_cell_is_a_row_error_on_its_field(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    cell = '"' + nested(300) + '"'
    path.write_text(f"id,query,response,contexts\na,q,Fact.,{cell}\n")
    with pytest.raises(DatasetRowError) as refused:
        list(load_dataset(path))
    assert refused.value.field == "contexts"
    assert "nested more than 256 levels" in refused.value.problem
