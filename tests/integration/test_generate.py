"""`vera generate` against the loopback server with scripted replies: what is kept, what is
turned away and why, the cache, the dry run, the CLI and its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.loopback import LoopbackServer
from tests.support.testset_script import TestsetScript, by_hash

import vera
from vera.datasets.bundled import bundled_path
from vera.generate import estimate_testset, generate_testset
from vera.settings import Settings

GENERATOR = "openai:loopback-model"
KEY = "sk-test-never-shown"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The bundled legal contracts, one text file per document."""
    path = bundled_path("legal")
    assert path is not None
    folder = tmp_path / "docs"
    folder.mkdir()
    for document in json.loads(path.read_text(encoding="utf-8"))["documents"]:
        (folder / f"{document['id']}.txt").write_text(document["text"], encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _settings(server: LoopbackServer, tmp_path: Path, **extra: object) -> Settings:
    return Settings(judge_base_url=server.openai_url, cache_path=tmp_path / "cache.sqlite", **extra)


def test_good_items_are_kept_in_the_seed_layout(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript("good")
    result = generate_testset(
        corpus, GENERATOR, n=12, seed=3, settings=_settings(loopback, tmp_path)
    )

    assert result.kept_total == 12 and result.stopped is None, result.rejected
    assert set(result.kept) == {c for c in vera.generate.CATEGORIES}
    texts = {d["id"]: " ".join(d["text"].split()) for d in result.dataset["documents"]}
    for query in result.dataset["queries"]:
        assert set(query) == {
            "id",
            "query",
            "grounded_answer",
            "citations",
            "category",
            "expected_score",
        }
        for citation in query["citations"]:
            assert " ".join(citation["quote"].split()) in texts[citation["document_id"]]
        if query["category"] == "unanswerable":
            assert query["grounded_answer"] is None and query["citations"] == []
        if query["category"] in {"fact_multiple", "contradiction"}:
            assert len({c["document_id"] for c in query["citations"]}) == 2
    path = tmp_path / "generated.json"
    vera.generate.write_dataset(result, path)
    samples = list(vera.load_dataset(path))
    assert len(samples) == 12


def test_bad_items_are_rejected_with_their_reasons(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript(
        {
            "fact_single": "good",
            "fact_multiple": "invented_quote",
            "reasoning": "unsupported",
            "unanswerable": "answerable",
            "summary": "junk",
            "contradiction": "wrong_shape",
        }
    )
    result = generate_testset(
        corpus, GENERATOR, n=12, seed=1, settings=_settings(loopback, tmp_path)
    )

    assert result.kept == {"fact_single": result.kept["fact_single"]}
    assert result.kept["fact_single"] >= 3
    by_reason = {reason: set(by) for reason, by in result.rejected.items()}
    assert by_reason["quote_not_found"] == {"fact_multiple"}
    assert by_reason["unsupported_answer"] == {"reasoning"}
    assert by_reason["answerable"] == {"unanswerable"}
    assert by_reason["malformed_reply"] == {"summary", "contradiction"}
    # Every rejected item is asked for again, in later rounds, from fresh chunks.
    assert result.attempted["summary"] > 1
    assert result.rejected["malformed_reply"]["summary"] == result.attempted["summary"]


def test_near_duplicate_questions_are_dropped(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript("good")
    # 40 items from a corpus of fewer chunks: chunks come round again, and the script writes
    # the same question from the same chunk.
    result = generate_testset(
        corpus, GENERATOR, n=40, mix="fact_single=1", seed=0, settings=_settings(loopback, tmp_path)
    )
    queries = [q["query"] for q in result.dataset["queries"]]
    assert len(queries) == len(set(queries))
    assert result.rejections.get("duplicate", 0) > 0


def test_a_rerun_is_served_by_the_cache(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript(by_hash)
    settings = _settings(loopback, tmp_path)
    first = generate_testset(corpus, GENERATOR, n=15, seed=7, settings=settings)
    made = loopback.request_count
    assert made > 0

    again = generate_testset(corpus, GENERATOR, n=15, seed=7, settings=settings)

    assert loopback.request_count == made, "a re-run makes no call"
    assert again.dataset == first.dataset and again.rejected == first.rejected
    assert again.usage["cached_calls"] == again.usage["calls"] and again.usage["cost_usd"] == 0


def test_the_dry_run_calls_nothing(loopback: LoopbackServer, corpus: Path, tmp_path: Path) -> None:
    loopback.default = TestsetScript("good")
    estimate = estimate_testset(corpus, GENERATOR, n=20, settings=_settings(loopback, tmp_path))

    assert loopback.request_count == 0
    assert estimate.items == 20 and estimate.generator_calls == 20
    assert estimate.judge_calls == 0, "the offline judge calls no model"
    assert estimate.prompt_tokens > 20 * 100


def test_the_cli_writes_a_dataset_eval_runs_on(loopback: LoopbackServer, corpus: Path) -> None:
    loopback.default = TestsetScript(by_hash)
    folder = corpus.parent
    common = ["--documents", str(corpus), "--generator", GENERATOR, "--n", "10"]
    common += ["--judge-base-url", loopback.openai_url]

    dry = run_vera(folder, "generate", *common, "--dry-run", OPENAI_API_KEY=KEY)
    assert dry.returncode == 0, dry.stderr
    assert "Dry run · 10 items · 10 generator and 0 judge calls" in dry.stdout
    assert loopback.request_count == 0

    made = run_vera(folder, "generate", *common, "-o", "generated.json", OPENAI_API_KEY=KEY)
    assert made.returncode == 0, made.stderr
    assert "Kept " in made.stdout and "Rejected, by reason:" in made.stdout
    assert (folder / "generated.json").exists()

    evaluated = run_vera(
        folder, "eval", "--dataset", "generated.json", "--pipeline", "naive-rag", "--no-history"
    )
    assert evaluated.returncode in (0, 1), evaluated.stderr  # 1: a gate, never a crash


def test_the_cli_exits_3_when_nothing_is_kept(loopback: LoopbackServer, corpus: Path) -> None:
    loopback.default = TestsetScript("junk")
    args = ["generate", "--documents", str(corpus), "--generator", GENERATOR, "--n", "4"]
    args += ["--judge-base-url", loopback.openai_url, "-o", "generated.json"]
    made = run_vera(corpus.parent, *args, OPENAI_API_KEY=KEY)
    assert made.returncode == 3, made.stderr
    assert "Kept 0 of 4" in made.stdout and "malformed_reply" in made.stdout
    assert not (corpus.parent / "generated.json").exists()
