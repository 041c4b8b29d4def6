"""`vera eval` on a dataset holding one sample over a size limit: that sample is an error that
says which limit and which flag, the others are scored, and the run is incomplete (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_vera

from vera import RunStore
from vera._plan import SampleLimits

WHITEBOX = "the plan's own parts (settings table, resume, limits)"

CONTEXT = "The museum opens at 9 am. Entry costs 12 euros. The museum is closed on Mondays."
TOO_LONG = "The museum opens at 9 am. " * 10_000  # 260,000 characters, over the default 200,000
MESSAGE = (
    "response is 260,000 characters, over max_response_chars=200,000; "
    "raise --max-response-chars or shorten it"
)


def test_an_oversized_response_errors_alone_and_the_run_is_incomplete(tmp_path: Path) -> None:
    rows = [
        {"id": "ok-1", "response": "The museum opens at 9 am.", "contexts": [CONTEXT]},
        {"id": "huge", "response": TOO_LONG, "contexts": [CONTEXT]},
        {"id": "ok-2", "response": "Entry costs 12 euros.", "contexts": [CONTEXT]},
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_vera(
        tmp_path, "eval", "--no-history", "-d", "data.jsonl", "-o", "r.json", timeout=120
    )
    assert result.returncode == 3, result.stderr
    assert "1 of 3 samples errored or were skipped (--max-errors allows 0)" in result.stderr
    assert f"error huge: SampleLimitError: {MESSAGE}" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["counts"]["scored"], report["counts"]["errors"]) == (2, 1)
    by_id = {s["id"]: s for s in report["samples"]}
    assert by_id["huge"]["status"] == "error"
    assert by_id["huge"]["error"] == f"SampleLimitError: {MESSAGE}"
    for ok in ("ok-1", "ok-2"):  # each repeats a sentence of the context: near 1, passed
        assert by_id[ok]["scores"]["faithfulness"] >= 0.9
        assert by_id[ok]["results"]["faithfulness"]["passed"] is True


def test_the_flags_set_the_limits_of_the_run(tmp_path: Path) -> None:
    row = {"id": "a", "response": "The museum opens at 9 am.", "contexts": [CONTEXT]}
    (tmp_path / "data.jsonl").write_text(json.dumps(row) + "\n")
    flags = ("--max-response-chars", "300000", "--max-context-chars", "5000")
    args = ("-d", "data.jsonl", "--history", "h.sqlite", *flags, "--sample-timeout", "2.5")
    assert run_vera(tmp_path, "eval", *args, timeout=120).returncode == 0
    store = RunStore(tmp_path / "h.sqlite")
    try:
        settings = store.plan(store.list()[0].id).settings
    finally:
        store.close()
    assert SampleLimits.of(settings) == SampleLimits(300_000, 5_000, 2.5)


def test_the_limit_flags_reach_the_run(tmp_path: Path) -> None:
    rows = [{"id": "a", "response": "The museum opens at 9 am.", "contexts": [CONTEXT]}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_vera(
        tmp_path, "eval", "--no-history", "-d", "data.jsonl", "--max-context-chars", "10",
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "over max_context_chars=10; raise --max-context-chars or split it" in result.stderr
