"""Every metric on conversation turns: the claim-based ones score each turn, the others score
it where it makes sense and are not applicable (never 0 or NaN) where it does not. A turn's
context relevance rates only what was retrieved for it and the tool results it saw: the
earlier turns' contexts and the user's words it is verified against are no retrieval of its
own."""

import math

import pytest

import vera
from vera import Report, Sample
from vera._types import SourceKind

WHITEBOX = "the report's parts and the secret guards"

CLAIM_BASED = (
    "faithfulness",
    "faithfulness_probability",
    "hallucination_rate",
    "grounding_precision",
)


@pytest.fixture(scope="module")
def report() -> Report:
    return vera.evaluate("conversations", ["all"])


def test_claim_based_metrics_score_every_turn(report: Report) -> None:
    assert len(report.samples) == 36
    for sample in report.samples:
        for name in CLAIM_BASED:
            result = sample.results[name]
            assert result.status.value == "ok", (sample.id, name, result.reason)
            assert result.score is not None and not math.isnan(result.score)


def test_the_other_metrics_are_scored_or_not_applicable_never_nan(report: Report) -> None:
    for sample in report.samples:
        for name, result in sample.results.items():
            assert result.status.value in ("ok", "not_applicable"), (sample.id, name)
            if result.status.value == "not_applicable":
                assert result.score is None and result.reason, (sample.id, name)
            else:
                assert result.score is not None and not math.isnan(result.score)


def _own(sample: Sample) -> int:
    own = {SourceKind.RETRIEVED.value, SourceKind.TOOL.value}
    return sum(c.metadata.get("source_kind") in own for c in sample.contexts)


def test_context_relevance_rates_only_the_turns_own_retrieval(report: Report) -> None:
    turns = {s.id: s for s in vera.load_dataset("conversations")}
    # conv-01 turn 5 saw one tool result; turn 7 retrieved nothing and saw no tool: it rests
    # on turn 5's tool result and the user's words.
    first, later = turns["conv-01/turn-5"], turns["conv-01/turn-7"]
    assert (_own(first), _own(later)) == (1, 0) and len(later.contexts) > 1
    results = {s.id: s.results["context_relevance"] for s in report.samples}
    assert results["conv-01/turn-5"].status.value == "ok"
    assert results["conv-01/turn-5"].reason.endswith("of 1 chunks relevant to the query")
    assert results["conv-01/turn-7"].status.value == "not_applicable"
    assert "no retrieval of its own" in results["conv-01/turn-7"].reason
    for sample_id, result in results.items():
        if result.status.value == "ok":
            assert f"of {_own(turns[sample_id])} chunks" in result.reason
