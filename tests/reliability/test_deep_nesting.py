"""Hostile nesting: the readers never recurse without bound. A JSONL line whose `metadata` is
200,000 nested arrays, a `.json` nested 500,000 deep and an OTLP `kvlistValue` nested 900 deep
each gave a RecursionError traceback and exit 1, with `--skip-invalid` too. Now each is one
invalid row naming its file, line and field (exit 2 without `--skip-invalid`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import vera
from tests.support.cli import run_vera
from tests.unit.test_otlp_dataset import RAG

SOURCE = str(Path(vera.__file__).parent.parent)
GOOD = {
    "id": "a",
    "query": "q",
    "response": "Paris is in France.",
    "contexts": ["Paris is in France."],
}
LIMIT = "arrays or objects nested more than 256 levels deep (the most VERA reads)"


def deep_jsonl(path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    line = '{"id": "b", "query": "q", "response": "x", "contexts": ["x"], "metadata": ' + deep
    path.write_text(json.dumps(GOOD) + "\n" + line + "}\n")


def deep_json(path: Path) -> None:
    path.write_text("[" + json.dumps(GOOD) + ", " + "[" * 500_000 + "]" * 500_000 + "]")


def deep_otlp(path: Path) -> None:
    value = '{"stringValue": "x"}'
    for _ in range(900):
        value = '{"kvlistValue": {"values": [{"key": "k", "value": ' + value + "}]}}"
    text = json.dumps(RAG)
    at = text.index('"attributes": [', text.index('"spans"')) + len('"attributes": [')
    hostile = text[:at] + '{"key": "deep", "value": ' + value + "}, " + text[at:]
    path.write_text(json.dumps(RAG) + "\n" + hostile + "\n")


CASES = [
    ("d.jsonl", deep_jsonl, "d.jsonl: line 2, field 'metadata': "),
    ("d.json", deep_json, "d.json: row 2 (line 1): "),
    (
        "t.jsonl",
        deep_otlp,
        "t.jsonl: line 2: field 'resourceSpans': at resourceSpans[0].scopeSpans[0].spans[0]."
        "attributes[0].value.kvlistValue.values[0]…: ",
    ),
]


@pytest.mark.parametrize(("name", "write", "where"), CASES, ids=["jsonl", "json", "otlp"])
def test_an_over_deep_row_is_one_invalid_row(
    tmp_path: Path, name: str, write: Callable[[Path], None], where: str
) -> None:
    write(tmp_path / name)
    env = {"PYTHONPATH": SOURCE}
    strict = run_vera(tmp_path, "eval", "-d", name, "--no-history", **env)
    assert strict.returncode == 2, strict.stderr
    assert where + LIMIT in strict.stderr
    assert "Traceback" not in strict.stderr + strict.stdout

    out = tmp_path / "r.json"
    skipping = run_vera(
        tmp_path, "eval", "-d", name, "--no-history", "--skip-invalid", "-o", str(out), **env
    )
    assert skipping.returncode == 0, skipping.stderr
    report = json.loads(out.read_text())
    assert report["counts"]["scored"] == 1
    (invalid,) = report["invalid_rows"]
    assert invalid["message"].startswith(where + LIMIT)
    assert os.path.getsize(out) < 1_000_000  # the hostile row is not copied into the report
