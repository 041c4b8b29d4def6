"""How faithfulness ranks and decides when the judge gives each claim a probability of support.

The score is then the probability that every claim is supported (the product of the claims'
probabilities) and a sample passes when that is at least the threshold, 0.5 by default: the
rule that lifts both offline judges on RAGTruth dev (docs/metrics.md). Judges that give
verdicts only (LLM judges) keep the mean of verdict weights.
"""

from __future__ import annotations

import math
import statistics

import pytest

import vera
from vera import Sample, Verdict
from vera.judges.offline import OfflineJudge
from vera.judges.offline.lexical_support import LEXICAL_WEIGHTS, RULED_OUT
from vera.metrics import ClaimAnalysis, Faithfulness
from vera.types import Claim, ClaimVerdict

F, P, N, C = (
    Verdict.FULLY_SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NO_EVIDENCE,
    Verdict.CONTRADICTED,
)
SAMPLE = Sample(id="s", query="q", response="r", contexts=["c"])
CONTEXT = (
    "The warranty covers parts for 24 months from the date of purchase. "
    "Labour is covered for the first 12 months only. "
    "Claims must be filed with the original receipt."
)
COPIED = "The warranty covers parts for 24 months from the date of purchase."


def analysis(*verdicts: tuple[Verdict, float | None]) -> ClaimAnalysis:
    claims = tuple(Claim(f"c{i}", f"claim number {i}") for i in range(len(verdicts)))
    return ClaimAnalysis(
        claims=claims,
        verdicts=tuple(
            ClaimVerdict(c.id, v, entailment=p) for c, (v, p) in zip(claims, verdicts, strict=True)
        ),
    )


def test_the_score_is_the_probability_that_every_claim_is_supported() -> None:
    result = Faithfulness().score(SAMPLE, analysis((F, 0.9), (P, 0.8), (F, 0.95)))
    assert result.score == pytest.approx(0.9 * 0.8 * 0.95)
    # Explainable claim by claim: each claim's weight is its probability, the score their product.
    assert result.claim_weights == {"c0": 0.9, "c1": 0.8, "c2": 0.95}
    assert result.score == pytest.approx(math.prod(result.claim_weights.values()))
    # The verdict-based sub-scores are still there, side by side.
    assert result.sub_scores["lenient"] == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(
    ("probabilities", "passed"),
    [
        ((0.8, 0.7), True),  # 0.56: more likely than not that both hold
        ((0.7, 0.7), False),  # 0.49
        ((0.5,), True),  # exactly even odds meets the 0.5 mark
        ((0.99, 0.99, 0.99, 0.99, 0.4), False),  # one doubtful claim sinks a sure answer
    ],
)
def test_a_sample_passes_when_every_claim_more_likely_than_not_holds(
    probabilities: tuple[float, ...], passed: bool
) -> None:
    metric = Faithfulness()
    assert metric.threshold == 0.5
    result = metric.score(SAMPLE, analysis(*((F, p) for p in probabilities)))
    assert result.passed is passed


def test_the_threshold_still_sets_the_pass_mark() -> None:
    result = Faithfulness(threshold=0.6).score(SAMPLE, analysis((F, 0.9), (F, 0.7)))
    assert result.score == pytest.approx(0.63) and result.passed
    assert not Faithfulness(threshold=0.7).score(SAMPLE, analysis((F, 0.9), (F, 0.7))).passed


def test_an_unsupported_claim_ranks_a_response_below_a_fully_supported_one() -> None:
    metric = Faithfulness()
    supported = metric.score(SAMPLE, analysis((F, 0.97), (F, 0.95))).score
    one_doubt = metric.score(SAMPLE, analysis((F, 0.97), (N, 0.3))).score
    assert supported is not None and one_doubt is not None
    assert one_doubt < supported
    # A mean would put these two level (0.75 each); the product sees the weakest claim.
    weak = metric.score(SAMPLE, analysis((F, 0.5), (F, 1.0))).score
    even = metric.score(SAMPLE, analysis((F, 0.75), (F, 0.75))).score
    assert weak is not None and even is not None and weak < even


def test_more_claims_that_could_be_wrong_rank_lower() -> None:
    metric = Faithfulness()
    one = metric.score(SAMPLE, analysis((F, 0.9))).score
    three = metric.score(SAMPLE, analysis((F, 0.9), (F, 0.9), (F, 0.9))).score
    assert one is not None and three is not None and three < one


def test_the_reason_names_the_least_supported_claim() -> None:
    result = Faithfulness().score(SAMPLE, analysis((F, 0.95), (N, 0.2), (P, 0.7)))
    assert "P(every claim supported) = 0.13" in result.reason
    assert "least supported 'claim number 1' (0.20)" in result.reason
    assert result.reason.startswith("1 of 3 claims supported, 1 partially")


def test_a_claim_without_a_probability_counts_its_verdict_weight() -> None:
    # A cascade's LLM verdicts carry no probability; their weights stand in for one.
    mixed = Faithfulness().score(SAMPLE, analysis((F, 0.9), (P, None), (F, None)))
    assert mixed.score == pytest.approx(0.9 * 0.5 * 1.0)
    contradicted = Faithfulness(scoring="weighted").score(SAMPLE, analysis((F, 0.9), (C, None)))
    assert contradicted.score == 0.0  # a weight of -1 reads as probability 0


def test_judges_without_probabilities_keep_the_mean_of_verdict_weights() -> None:
    result = Faithfulness().score(SAMPLE, analysis((F, None), (N, None)))
    assert result.score == 0.5 and result.passed
    assert result.claim_weights == {"c0": 1.0, "c1": 0.0}
    assert "P(every claim" not in result.reason


def test_by_probability_false_keeps_the_mean_for_every_judge() -> None:
    result = Faithfulness(by_probability=False).score(SAMPLE, analysis((F, 0.6), (P, 0.6)))
    assert result.score == 0.75


async def test_the_learned_judge_ranks_an_invented_fact_below_a_copied_answer() -> None:
    judge = OfflineJudge(learned=True)
    copied = Sample(
        id="copied",
        query="q",
        response=COPIED + " Labour is covered for 12 months.",
        contexts=[CONTEXT],
    )
    invented = Sample(
        id="invented",
        query="q",
        response=COPIED + " The company was founded in Paris in 1850 by two brothers.",
        contexts=[CONTEXT],
    )
    report = await vera.aevaluate([copied, invented], judge=judge)
    results = {r.id: r.results["faithfulness"] for r in report.samples}
    assert results["copied"].passed and not results["invented"].passed
    assert results["invented"].score is not None and results["copied"].score is not None
    assert results["invented"].score < results["copied"].score


def test_the_lexical_offline_judge_is_scored_by_its_weighed_probabilities() -> None:
    sample = Sample(
        id="w",
        query="q",
        response="The warranty covers parts for 36 months. Labour is covered for 12 months.",
        contexts=[CONTEXT],
    )
    [result] = vera.evaluate([sample], judge=OfflineJudge()).samples
    [learned] = vera.evaluate([sample], judge=OfflineJudge(learned=True, min_support=0)).samples
    assert [c.verdict for c in result.claims] == [C, F]
    wrong, right = result.claims
    # The wrong number keeps its weight's share of the model's probability, and never more
    # than even odds; the copied clause keeps all of it.
    expected = LEXICAL_WEIGHTS.contradicted * learned.claims[0].entailment
    assert wrong.entailment == pytest.approx(min(RULED_OUT, expected))
    assert right.entailment == learned.claims[1].entailment


def test_the_learned_judge_still_separates_the_bundled_examples_planted_errors() -> None:
    dataset = {s.id: s for s in vera.load_dataset("example")}
    report = vera.evaluate(dataset.values(), judge=OfflineJudge(learned=True))
    faithful: list[float] = []
    planted: list[float] = []
    for result in report.samples:
        score = result.scores["faithfulness"]
        assert score is not None
        kind = dataset[result.id].metadata["planted"]
        if kind in (None, "abstention"):
            faithful.append(score)
        elif kind in ("wrong_number", "negation", "invented_fact"):
            planted.append(score)
    assert statistics.mean(planted) <= statistics.mean(faithful) - 0.1
