"""Issue 44, item 6: `vera generate` can be tried without a key: `--generator extractive`
takes its items from the documents' own sentences, checked like a model's, and the set it
writes is evaluated as `vera eval` reads any generated set."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_vera

DOCS = {
    "refunds.md": "Refunds are accepted within 30 days of purchase. A refund is paid to the "
    "card used for the order. Gift cards cannot be refunded once they are redeemed.\n\n"
    "Shipping costs are refunded only when the item arrived damaged.",
    "shipping.md": "Standard shipping takes 5 business days within the country. Express "
    "shipping costs 12 euros and takes 2 business days. Orders placed before noon ship on "
    "the same day.\n\nParcels over 20 kilograms are sent by freight.",
}


def test_an_offline_testset_is_checked_and_can_be_evaluated(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    args = ("generate", "--documents", "docs", "--generator", "extractive", "--n", "4")
    done = run_vera(tmp_path, *args, "-o", "gen.json")
    assert done.returncode == 0, done.stderr
    assert "0 calls" in done.stdout
    written = json.loads((tmp_path / "gen.json").read_text())
    queries = written["queries"]
    assert 1 <= len(queries) <= 4
    texts = {d["id"]: d["text"] for d in written["documents"]}
    for item in queries:
        assert item["category"] in {"fact_single", "fact_multiple", "summary"}
        for citation in item["citations"]:
            assert citation["quote"] in texts[citation["document_id"]]
            assert citation["quote"] in item["grounded_answer"]
    refused = run_vera(tmp_path, *args, "--mix", "reasoning=1", "-o", "r.json")
    assert refused.returncode == 2
    assert "writes fact_single, fact_multiple, summary items only" in refused.stderr
    evaluated = run_vera(tmp_path, "eval", "-d", "gen.json", "--baseline", "naive-rag")
    assert evaluated.returncode == 0, evaluated.stderr
    assert "expected_score" not in evaluated.stdout + evaluated.stderr
