"""`vera generate` against the loopback server with scripted replies: what is kept, what is
turned away and why, the cache, the dry run, the CLI and its exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.cli import run_vera
from tests.support.extras import without
from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_anthropic_tool
from tests.support.testset_script import TestsetScript, by_hash

import vera
from vera import Settings, estimate_testset, generate_testset
from vera.datasets import bundled_path
from vera.judges._prompts import load_prompt

WHITEBOX = "the judges' own prompts, matrix and checks"

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
    assert set(result.kept) == {c for c in vera._generate.CATEGORIES}
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
    vera._generate.write_dataset(result, path)
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
    assert estimate.at_most_calls == 3 * 20


def test_the_dry_runs_bound_holds_when_every_draft_is_rejected(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript("junk")
    settings = _settings(loopback, tmp_path)
    estimate = estimate_testset(corpus, GENERATOR, n=12, seed=3, settings=settings)

    result = generate_testset(corpus, GENERATOR, n=12, seed=3, settings=settings)

    assert result.kept_total == 0
    assert loopback.request_count == estimate.at_most_calls, "every round asked for all 12"


def test_the_cli_writes_a_dataset_eval_runs_on(loopback: LoopbackServer, corpus: Path) -> None:
    loopback.default = TestsetScript(by_hash)
    folder = corpus.parent
    common = ["--documents", str(corpus), "--generator", GENERATOR, "--n", "10"]
    common += ["--judge-base-url", loopback.openai_url]

    dry = run_vera(folder, "generate", *common, "--dry-run", OPENAI_API_KEY=KEY)
    assert dry.returncode == 0, dry.stderr
    assert "Dry run · 10 items · 10 generator and 0 judge calls" in dry.stdout
    assert "at most 30 calls" in " ".join(dry.stdout.split())  # however the line wraps
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


def test_a_prompt_override_is_sent_and_not_answered_from_the_default_cache(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript("good")
    first = generate_testset(corpus, GENERATOR, n=6, seed=2, settings=_settings(loopback, tmp_path))
    made = loopback.request_count
    assert made > 0 and first.kept_total > 0

    bundled = load_prompt("generate_testset")
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    text = bundled.user.replace("Task: $task", "Task: $task\nHOUSE-STYLE-MARKER: be terse.")
    assert text != bundled.user
    override = f"version = {json.dumps(bundled.version)}\n"
    override += f"system = {json.dumps(bundled.system)}\nuser = {json.dumps(text)}\n"
    (prompts / "generate_testset.toml").write_text(override, encoding="utf-8")
    settings = _settings(loopback, tmp_path, judge_prompts_dir=prompts)
    assert load_prompt("generate_testset", prompts).version != bundled.version

    again = generate_testset(corpus, GENERATOR, n=6, seed=2, settings=settings)

    sent = [r.json["messages"][-1]["content"] for r in loopback.requests[made:]]
    assert len(sent) == made, "the same tasks, asked again: no reply came from the cache"
    assert all("HOUSE-STYLE-MARKER: be terse." in prompt for prompt in sent)
    assert not any(
        "HOUSE-STYLE-MARKER" in r.json["messages"][-1]["content"] for r in loopback.requests[:made]
    )
    assert again.usage["cached_calls"] == 0 and again.kept_total == first.kept_total


def test_the_budget_stops_generation_and_what_was_kept_is_written(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path
) -> None:
    loopback.default = TestsetScript("good")
    priced = "openai:gpt-4o-mini"
    settings = _settings(loopback, tmp_path, max_cost=0.000001, concurrency=1)
    result = generate_testset(corpus, priced, n=10, seed=4, settings=settings)

    assert result.stopped is not None and "budget" in result.stopped
    assert loopback.request_count == 1, "no call is started once the budget is spent"
    assert result.kept_total == 1 and result.usage["cost_usd"] > 0.000001

    args = ["generate", "--documents", str(corpus), "--generator", priced, "--n", "10"]
    args += ["--judge-base-url", loopback.openai_url, "-o", "generated.json"]
    args += ["--max-cost", "0.000001", "--concurrency", "1", "--seed", "4", "--no-cache"]
    made = run_vera(corpus.parent, *args, OPENAI_API_KEY=KEY)
    assert made.returncode == 3, made.stderr
    assert "Stopped early: the budget of $0.0000 is spent" in made.stdout
    written = json.loads((corpus.parent / "generated.json").read_text(encoding="utf-8"))
    assert len(written["queries"]) == 1


def _anthropic_testset(script: TestsetScript) -> Callable[[Recorded], Reply]:
    """The scripted generator in Anthropic's dialect: its item as the forced tool's input."""

    def reply(request: Recorded) -> Reply:
        openai = json.loads(script(request).body)
        item = json.loads(openai["choices"][0]["message"]["content"])
        return ok_anthropic_tool(item, name=request.json["tools"][0]["name"])

    return reply


def test_an_anthropic_generator_answers_over_tool_use(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    script = TestsetScript("good")
    loopback.default = _anthropic_testset(script)
    settings = Settings(judge_base_url=loopback.anthropic_url, cache_path=tmp_path / "c.sqlite")
    result = generate_testset(corpus, "anthropic:claude-test", n=6, seed=5, settings=settings)

    assert result.kept_total == 6 and result.stopped is None, result.rejected
    assert script.calls == loopback.request_count > 0
    assert all(r.path == "/v1/messages" for r in loopback.requests)
    assert all(r.json["tools"][0]["input_schema"]["required"] for r in loopback.requests)
    assert result.usage["calls"] == loopback.request_count


def test_a_litellm_generator_without_schema_support_falls_back_to_json_mode(
    loopback: LoopbackServer, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real LiteLLM over HTTP to the loopback server, for a model it does not know to take
    a JSON schema: the generator is asked for a JSON object, and its replies still pass."""
    pytest.importorskip("litellm", reason=without("litellm"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    script = TestsetScript("good")
    loopback.default = script
    result = generate_testset(
        corpus, "litellm:openai/loopback-model", n=6, seed=2, settings=_settings(loopback, tmp_path)
    )

    assert result.kept_total == 6 and result.stopped is None, result.rejected
    assert script.calls == loopback.request_count > 0
    assert {r.json["response_format"]["type"] for r in loopback.requests} == {"json_object"}
    assert all(r.path == "/v1/chat/completions" for r in loopback.requests)
