"""`vera eval` on a dataset whose contexts column has a name VERA does not know.

Issue 26: renaming `retrieved_contexts` to `docs` gave every sample NO_EVIDENCE and 0.000,
exit 0, with only "kept as metadata: docs". Now the run refuses (exit 2) naming the column
and the flag that maps it, and the mapping, by flag or config, reads it.
"""

import json
from pathlib import Path

from tests.support.cli import run_vera

from vera.render._html import read_samples

WHITEBOX = "the HTML report's stored samples, read back"

FACT = "The refund window is 30 days."


def _dataset(tmp_path: Path) -> None:
    rows = [
        {"id": f"s{i}", "query": "How long is the refund window?", "docs": [FACT], "response": FACT}
        for i in range(3)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_an_unread_contexts_column_is_bad_input_naming_the_flag(tmp_path: Path) -> None:
    _dataset(tmp_path)
    refused = run_vera(tmp_path, "eval", "-d", "d.jsonl", "--no-history")
    assert refused.returncode == 2, refused.stdout
    assert "column 'docs' holds a list of texts" in refused.stderr
    assert "--field contexts=docs" in refused.stderr
    assert "0.000" not in refused.stdout  # nothing was judged

    flags = ("--no-history", "--field", "contexts=docs", "-o", "r.json", "--html", "r.html")
    mapped = run_vera(tmp_path, "eval", "-d", "d.jsonl", *flags)
    assert mapped.returncode == 0, mapped.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["metric_summary"]["faithfulness"]["passed"] == 3
    assert report["unrecognised_fields"] == []
    assert "fields contexts=docs" in report["fingerprint"]["dataset"]
    # The HTML report reads the dataset again for the contexts: with the same mapping.
    assert read_samples((tmp_path / "r.html").read_text())["contexts"] == [FACT]


def test_the_mapping_from_vera_toml_and_a_wrong_flag(tmp_path: Path) -> None:
    _dataset(tmp_path)
    (tmp_path / "vera.toml").write_text('[fields]\ncontexts = "docs"\n')
    mapped = run_vera(tmp_path, "eval", "-d", "d.jsonl", "--no-history", "-o", "r.json")
    assert mapped.returncode == 0, mapped.stderr
    assert (
        json.loads((tmp_path / "r.json").read_text())["metric_summary"]["faithfulness"]["passed"]
        == 3
    )
    wrong = run_vera(tmp_path, "eval", "-d", "d.jsonl", "--no-history", "--field", "docs")
    assert wrong.returncode == 2 and "expected FIELD=COLUMN" in wrong.stderr
