"""VERA's scorers inside `mlflow.genai.evaluate`, against a real local SQLite tracking store, on
the bundled example with the offline judge: each row's yes/no is VERA's own answer verdict, a
planted hallucination fails with a rationale naming its claim, and the claims come back as
metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.docs import run_example
from tests.support.extras import without
from tests.support.loopback import LoopbackServer
from tests.support.scripted import scripted_openai

pytest.importorskip("mlflow", reason=without("mlflow"))

import mlflow

import vera
from vera import ConfigError, Sample
from vera.integrations.mlflow import faithfulness_scorer, scorers
from vera.judges import JudgeOptions, create_judge

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def tracking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One SQLite store for the module (MLflow builds its tables once, in seconds), named
    by the environment, as a user names it, never by `mlflow.set_tracking_uri` (which would
    outlive the module)."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as patch:
        # A SQLite store keeps artifacts in ./mlruns of the working directory: the test's own.
        patch.chdir(folder)
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        # LiteLLM, which MLflow imports where installed, fetches a price list over the network.
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # SQLite takes one writer at a time: fewer scorer threads than its connection pool.
        patch.setenv("MLFLOW_GENAI_EVAL_MAX_WORKERS", "2")
        yield uri


def _row(sample: Sample) -> dict[str, Any]:
    """A sample as an MLflow evaluation row: the query in `inputs`, the answer as `outputs`,
    the retrieved passages in `expectations`."""
    return {
        "inputs": {"query": sample.query},
        "outputs": sample.response,
        "expectations": {"contexts": [c.text for c in sample.contexts]},
    }


def _assessment(cell: Any, name: str) -> dict[str, Any]:
    """The feedback `name` among a result row's assessments (MLflow gives them as dicts)."""
    found: dict[str, Any] = next(a for a in cell if a["assessment_name"] == name)
    return found


def test_the_faithfulness_scorer_gives_vera_s_answer_verdicts_in_mlflow(tracking: str) -> None:
    samples = list(vera.load_dataset("example"))
    report = vera.run_evaluation(samples).report
    verdicts = {r.id: r.verdict for r in report.samples}
    result = mlflow.genai.evaluate(
        data=[_row(s) for s in samples],
        scorers=[faithfulness_scorer(), *scorers("hallucination_rate")],
    )
    table = result.result_df
    assert table is not None
    assert {"vera_faithfulness/value", "vera_faithfulness/rationale"} <= set(table.columns)
    assert "vera_hallucination_rate/value" in table.columns
    by_query = {row["request"]["query"]: row for _, row in table.iterrows()}
    planted = 0
    for sample in samples:
        row, verdict = by_query[sample.query], verdicts[sample.id]
        assert verdict is not None
        assert row["vera_faithfulness/value"] == ("yes" if verdict.passed else "no"), sample.id
        assert row["vera_faithfulness/rationale"].startswith(verdict.reason), sample.id
        feedback = _assessment(row["assessments"], "vera_faithfulness")
        claims = json.loads(feedback["metadata"]["claims"])
        assert [c["verdict"] for c in claims] == [
            c.verdict.value for c in next(r for r in report.samples if r.id == sample.id).claims
        ]
        assert feedback["metadata"]["verdict"] == verdict.status.value
        if sample.metadata["planted"] == "invented_fact" and not verdict.passed:
            planted += 1
            invented = [c["text"] for c in claims if c["verdict"] == "NO_EVIDENCE"]
            assert invented
            assert invented[0][:40] in row["vera_faithfulness/rationale"]
    assert planted >= 1, "no planted invented fact was caught: nothing here was checked"
    faithful = sum(v is not None and v.passed is True for v in verdicts.values())
    assert result.metrics["vera_faithfulness/mean"] == pytest.approx(faithful / len(samples))
    assert not result.passed  # the planted hallucinations fail MLflow's own assertion


def test_a_hallucination_planted_in_an_answer_fails_naming_the_claim(tracking: str) -> None:
    sample = next(iter(vera.load_dataset("example")))
    invented = "The agreement was signed on Mars in 1802 by Napoleon Bonaparte."
    planted = sample.model_copy(update={"response": f"{sample.response} {invented}"})
    result = mlflow.genai.evaluate(
        data=[_row(sample), _row(planted)], scorers=[faithfulness_scorer()]
    )
    table = result.result_df
    assert table is not None
    values = {row["response"]: row for _, row in table.iterrows()}
    assert values[sample.response]["vera_faithfulness/value"] == "yes"
    failed = values[planted.response]
    assert failed["vera_faithfulness/value"] == "no"
    assert "has no evidence" in failed["vera_faithfulness/rationale"]
    assert "signed on Mars" in failed["vera_faithfulness/rationale"]
    feedback = _assessment(failed["assessments"], "vera_faithfulness")
    assert feedback["source"] == {"source_id": "vera:offline", "source_type": "CODE"}
    assert float(feedback["metadata"]["score"]) < 1.0


def test_a_scorer_reads_mlflow_s_own_field_names_and_called_alone() -> None:
    """`request`, `retrieved_context` (MLflow's documents) and `expected_response` are read
    as VERA's query, contexts and reference; a scorer is callable outside evaluate too."""
    feedback = faithfulness_scorer()(
        inputs={"request": "How long is the refund window?"},
        outputs={"response": "Refunds are accepted within 30 days. Shipping is free."},
        expectations={
            "retrieved_context": [{"content": "Refunds are accepted within 30 days of purchase."}],
            "expected_response": "30 days.",
        },
    )
    assert feedback.value == "no"
    assert "Shipping is free" in feedback.rationale
    claims = json.loads(feedback.metadata["claims"])
    assert [c["verdict"] for c in claims] == ["FULLY_SUPPORTED", "NO_EVIDENCE"]


def test_an_unknown_metric_or_judge_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="faithfulnes"):
        scorers("faithfulnes")
    with pytest.raises(ConfigError, match="nosuchjudge"):
        faithfulness_scorer(judge="nosuchjudge:model")


def test_the_docs_example_runs_and_says_what_the_page_says(tmp_path: Path) -> None:
    done = run_example("integrations-mlflow.md", tmp_path)
    assert done.returncode == 0, done.stderr
    said = "no | 1 of 2 claims has no evidence: 'Shipping is always free.' (faithfulness 0.50)"
    assert said in done.stdout


def test_an_llm_judge_scores_every_row_from_mlflow_s_worker_threads(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OpenAI judge (the real SDK, a scripted model on loopback that calls a claim with
    "60" in it contradicted) called from MLflow's scorer threads, each row in its own event
    loop: every row is judged, and the row with "60" fails naming it."""
    loopback.default = scripted_openai
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-logged")
    judge = create_judge("openai:gpt-4o-mini", JudgeOptions(judge_base_url=loopback.openai_url))
    context = "The refund window is 30 days. Refunds go to the original card."
    answers = ["The refund window is 30 days.", "The refund window is 60 days.", context]
    rows = [
        {"inputs": {"query": "How long?"}, "outputs": a, "expectations": {"contexts": [context]}}
        for a in answers
    ]
    result = mlflow.genai.evaluate(data=rows, scorers=[faithfulness_scorer(judge=judge)])
    table = result.result_df
    assert table is not None
    by_answer = {row["response"]: row for _, row in table.iterrows()}
    assert [by_answer[a]["vera_faithfulness/value"] for a in answers] == ["yes", "no", "yes"]
    assert (
        "is contradicted: 'The refund window is 60 days.'"
        in (by_answer[answers[1]]["vera_faithfulness/rationale"])
    )
    feedback = _assessment(by_answer[answers[1]]["assessments"], "vera_faithfulness")
    assert feedback["source"] == {
        "source_id": "vera:openai:gpt-4o-mini",
        "source_type": "LLM_JUDGE",
    }
