"""`vera calibrate` on a labelled file, a stored run and a JSON report: the same block."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_cli import vera, write_jsonl

from vera import RunStore

ROWS = [
    {"id": f"s{i}", "response": "Paris is in France.", "contexts": [context], "human_faithful": ok}
    for i, (context, ok) in enumerate(
        [("Paris is in France.", True), ("Rome is in Italy.", False)] * 4
    )
] + [{"id": "u", "response": "Paris is in France.", "contexts": ["Paris is in France."]}]


def test_calibrate_a_labelled_file_a_stored_run_and_a_report(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "labelled.jsonl", ROWS)
    found = vera("calibrate", str(data), "--json", "cal.json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert "Calibration against 8 human labels (faithfulness; 1 unlabelled samples)" in found.stdout
    block = json.loads((tmp_path / "cal.json").read_text())
    assert block["agreement"]["accuracy"] == 1.0
    assert block["unfaithful_share"]["labels_only_estimate"] == 0.5

    # The metrics `vera calibrate` asks for on a dataset, so all three rank by the same score.
    metrics = ("-m", "faithfulness", "-m", "faithfulness_probability")
    ran = vera(
        "eval", "-d", str(data), *metrics, "--history", "h.sqlite", "-o", "r.json", cwd=tmp_path
    )
    assert ran.returncode in (0, 1), ran.stderr  # 1: an unfaithful answer fails its gate
    store = RunStore(tmp_path / "h.sqlite")
    run_id = store.list()[0].id[:12]  # a unique prefix is enough
    store.close()
    stored = vera("calibrate", run_id, "--history", "h.sqlite", cwd=tmp_path)
    from_report = vera("calibrate", "r.json", cwd=tmp_path)
    assert stored.returncode == from_report.returncode == 0, stored.stderr + from_report.stderr
    assert stored.stdout == from_report.stdout == found.stdout.split("Calibration written")[0]


def test_calibrate_without_labels_says_what_to_add(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "plain.jsonl", [ROWS[-1]])
    found = vera("calibrate", str(data), cwd=tmp_path)
    assert found.returncode == 2
    assert "carries a human label" in found.stderr and "human_faithful" in found.stderr
