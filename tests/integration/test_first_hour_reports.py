"""Issue 44, item 4: the JSON report shows each sample's contexts, the ones it was judged
against, although the history keeps a dataset's contexts only in the dataset."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_vera

from vera.store import RunStore

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
