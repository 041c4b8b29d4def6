"""`vera.datasets`: JSON nested deeper than `MAX_NESTING` is refused by a scan, never
by a RecursionError, with the top-level field it is under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vera import DatasetRowError, load_dataset
from vera._json import MAX_NESTING, TooDeepError, skip_value
from vera.datasets import JsonRefused, loads_bounded

WHITEBOX = "the guarded JSON reader's nesting limit"


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


def test_refusals_name_the_field_and_the_path() -> None:
    with pytest.raises(JsonRefused) as refused:
        loads_bounded('{"a": 1, "scores": {"run": [0.5, NaN]}}')
    assert (refused.value.field, refused.value.path) == ("scores", "scores.run[1]")
    assert refused.value.problem.startswith("at scores.run[1]: NaN is out of range")
    with pytest.raises(JsonRefused, match="the key 'k' is given twice"):
        loads_bounded('[{"k": 1, "k": 1}]')
    # Words that spell the constants, inside strings, and numbers a float holds are data.
    text = '{"s": "NaN Infinity 1e999 [[[ \\\\\\" {{{", "n": 1.5e308, "i": -12}'
    assert loads_bounded(text) == json.loads(text)


def _depth(value: object) -> int:
    """How deep a parsed value nests (an iterative walk, the reference for the check)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


noise = st.text(alphabet='[]{}"\\ab\n', max_size=6)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    depth=st.integers(MAX_NESTING - 3, MAX_NESTING + 3),
    kinds=st.lists(st.booleans(), min_size=MAX_NESTING + 3, max_size=MAX_NESTING + 3),
    strings=st.lists(noise, min_size=1, max_size=8),
    side=st.integers(1, 40),
)
def test_the_depth_check_agrees_with_the_parsed_value(
    depth: int, kinds: list[bool], strings: list[str], side: int
) -> None:
    """Strings full of brackets, quotes and backslashes never change the verdict: a value is
    refused exactly when it nests deeper than `MAX_NESTING`."""
    value: object = strings
    for level in range(depth - 1):
        value = {"k": value, "s": strings[level % len(strings)]} if kinds[level] else [value]
    value = [value, *([[s] for s in strings] * side)]
    text = json.dumps(value)
    try:
        parsed = loads_bounded(text)
    except TooDeepError:
        assert _depth(json.loads(text)) > MAX_NESTING
    else:
        assert _depth(parsed) <= MAX_NESTING
