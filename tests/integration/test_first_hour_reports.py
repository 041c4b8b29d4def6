"""Issue 44, item 4: the JSON report shows each sample's contexts, the ones it was judged
against, although the history keeps a dataset's contexts only in the dataset."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_vera

from vera import RunStore
from vera.datasets import bundled_path

ROWS = [
    {
        "id": "a",
        "query": "Capital?",
        "response": "Paris is the capital.",
        "contexts": ["Paris is the capital."],
    },
    {"id": "b", "query": "Bad row", "response": 3},
    {
        "id": "c",
        "query": "Refunds?",
        "response": "30 days.",
        "contexts": ["Refunds: 30 days.", "Ships: 5 days."],
    },
]


def test_the_json_report_shows_the_contexts_each_sample_was_judged_against(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    done = run_vera(tmp_path, "eval", "-d", "d.jsonl", "--skip-invalid", "-o", "r.json")
    assert done.returncode in (0, 3), done.stderr
    samples = json.loads((tmp_path / "r.json").read_text())["samples"]
    shown = {s["id"]: [c["text"] for c in s["contexts"]] for s in samples}
    assert shown == {"a": ROWS[0]["contexts"], "c": ROWS[2]["contexts"]}
    # `vera report` writes the same from the history.
    [record] = RunStore(tmp_path / ".vera" / "runs.sqlite", read_only=True).list()
    run_id = record.id
    again = run_vera(tmp_path, "report", run_id, "-o", "s.json")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "s.json").read_text() == (tmp_path / "r.json").read_text()


def test_a_figure_from_a_tool_result_is_attributed_to_the_tool(tmp_path: Path) -> None:
    """conv-09: the user asks "How many orders did the Lisbon store have in March?", a tool
    answers "count: 1284"; the claim "The Lisbon store had 1284 orders in March." shares most
    words with the question, but its figure is the tool's."""
    data = str(bundled_path("conversations"))
    done = run_vera(tmp_path, "conversations", data, "--no-history", "-o", "turns.json")
    assert done.returncode in (0, 1), done.stderr
    claims = [
        claim
        for conversation in json.loads((tmp_path / "turns.json").read_text())["conversations"]
        for turn in conversation["turns"]
        for claim in turn["claims"]
        if any(figure in claim["text"] for figure in ("1284 orders", "977 orders"))
    ]
    assert len(claims) == 2
    assert [(c["source_kind"], c["tool_name"]) for c in claims] == [("tool", "run_sql")] * 2
    assert [c["evidence"] for c in claims] == ["count: 1284", "count: 977"]
