"""`faithfulness_probability`: the probability that every claim is supported (the product of
the claims' probabilities of support), the score that ranks responses where the judge gives
probabilities (docs/metrics.md); a sample passes when it is at least the threshold, 0.5 by
default. Judges that give verdicts only (LLM judges) have nothing for it to read: not
applicable, saying why. `faithfulness` stays the seeds' mean of verdict weights for every judge.
"""

from __future__ import annotations

import math
import statistics

import pytest

import vera
from vera import Claim, ClaimVerdict, ConfigError, Sample, Verdict
from vera.judges import OfflineJudge
from vera.judges._offline import LEXICAL_WEIGHTS, RULED_OUT
from vera.metrics import ClaimAnalysis, MetricStatus, create_metric
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._faithfulness_probability import FaithfulnessProbability

WHITEBOX = "the offline judge's own parts"

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


def analysis(*verdicts: tuple[Verdict, float | None], judge: str | None = None) -> ClaimAnalysis:
    claims = tuple(Claim(f"c{i}", f"claim number {i}") for i in range(len(verdicts)))
    return ClaimAnalysis(
        judge=judge,
        claims=claims,
        verdicts=tuple(
            ClaimVerdict(c.id, v, entailment=p) for c, (v, p) in zip(claims, verdicts, strict=True)
        ),
    )


def test_the_score_is_the_probability_that_every_claim_is_supported() -> None:
    result = FaithfulnessProbability().score(SAMPLE, analysis((F, 0.9), (P, 0.8), (F, 0.95)))
    assert result.score == pytest.approx(0.9 * 0.8 * 0.95)
    # Explainable claim by claim: each claim's weight is its probability, the score their product.
    assert result.claim_weights == {"c0": 0.9, "c1": 0.8, "c2": 0.95}
    assert result.score == pytest.approx(math.prod(result.claim_weights.values()))
    assert result.status is MetricStatus.OK and result.passed
    # Faithfulness reads the same claims by their verdicts alone: the seeds' mean.
    assert Faithfulness().score(SAMPLE, analysis((F, 0.9), (P, 0.8), (F, 0.95))).score == (
        pytest.approx(2.5 / 3)
    )


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
    metric = FaithfulnessProbability()
    assert metric.threshold == 0.5
    result = metric.score(SAMPLE, analysis(*((F, p) for p in probabilities)))
    assert result.passed is passed


def test_the_threshold_still_sets_the_pass_mark() -> None:
    result = FaithfulnessProbability(threshold=0.6).score(SAMPLE, analysis((F, 0.9), (F, 0.7)))
    assert result.score == pytest.approx(0.63) and result.passed
    assert (
        not FaithfulnessProbability(threshold=0.7)
        .score(SAMPLE, analysis((F, 0.9), (F, 0.7)))
        .passed
    )


def test_an_unsupported_claim_ranks_a_response_below_a_fully_supported_one() -> None:
    metric = FaithfulnessProbability()
    supported = metric.score(SAMPLE, analysis((F, 0.97), (F, 0.95))).score
    one_doubt = metric.score(SAMPLE, analysis((F, 0.97), (N, 0.3))).score
    assert supported is not None and one_doubt is not None
    assert one_doubt < supported
    # A mean would put these two level (0.75 each); the product sees the weakest claim.
    weak = metric.score(SAMPLE, analysis((F, 0.5), (F, 1.0))).score
    even = metric.score(SAMPLE, analysis((F, 0.75), (F, 0.75))).score
    assert weak is not None and even is not None and weak < even


def test_more_claims_that_could_be_wrong_rank_lower() -> None:
    metric = FaithfulnessProbability()
    one = metric.score(SAMPLE, analysis((F, 0.9))).score
    three = metric.score(SAMPLE, analysis((F, 0.9), (F, 0.9), (F, 0.9))).score
    assert one is not None and three is not None and three < one


def test_the_reason_names_the_least_supported_claim() -> None:
    result = FaithfulnessProbability().score(SAMPLE, analysis((F, 0.95), (N, 0.2), (P, 0.7)))
    assert "P(every claim supported) = 0.13" in result.reason
    assert "least supported 'claim number 1' (0.20)" in result.reason
    assert result.reason.startswith("P(every claim supported)")


def test_a_claim_without_a_probability_counts_its_verdict_weight() -> None:
    # A cascade's LLM verdicts carry no probability; their ratio weights stand in for one.
    mixed = FaithfulnessProbability().score(SAMPLE, analysis((F, 0.9), (P, None), (F, None)))
    assert mixed.score == pytest.approx(0.9 * 0.5 * 1.0)
    assert "2 of 3 claims had no probability" in mixed.reason
    contradicted = FaithfulnessProbability().score(SAMPLE, analysis((F, 0.9), (C, None)))
    assert contradicted.score == 0.0


def test_a_judge_without_probabilities_is_not_applicable_and_says_why() -> None:
    verdicts = analysis((F, None), (N, None), judge="openai:gpt-4o-mini")
    result = FaithfulnessProbability().score(SAMPLE, verdicts)
    assert result.status is MetricStatus.NOT_APPLICABLE
    assert result.score is None and result.passed is None  # never a number made from verdicts
    assert result.reason.startswith("judge openai:gpt-4o-mini gives no claim probabilities")
    assert "offline, offline:learned, nli:MODEL or cascade" in result.reason
    unnamed = FaithfulnessProbability().score(SAMPLE, analysis((F, None)))
    assert unnamed.reason.startswith("the judge gives no claim probabilities")


def test_no_claims_is_vacuously_certain_as_faithfulness_is() -> None:
    result = FaithfulnessProbability().score(SAMPLE, analysis())
    assert (result.score, result.status, result.passed) == (1.0, MetricStatus.NO_CLAIMS, True)


def test_faithfulness_is_the_mean_of_verdict_weights_whatever_the_judge_gives() -> None:
    # The learned judge's probabilities do not change faithfulness: the seeds' formula holds.
    result = Faithfulness().score(SAMPLE, analysis((F, 0.6), (P, 0.6)))
    assert result.score == 0.75
    assert result.claim_weights == {"c0": 1.0, "c1": 0.5}
    assert result.sub_scores["lenient"] == result.score  # a sub-score agrees with its headline
    assert "P(every claim" not in result.reason


def test_by_probability_is_refused_naming_faithfulness_probability() -> None:
    with pytest.raises(ValueError, match="its own metric, faithfulness_probability"):
        Faithfulness(by_probability=False)  # type: ignore[call-arg]
    # By name, as a plan or config builds it: a ConfigError naming the metric, not a traceback.
    with pytest.raises(ConfigError) as caught:
        create_metric("faithfulness", by_probability=True)
    assert str(caught.value).startswith("metric 'faithfulness': faithfulness no longer takes")
    assert "remove by_probability" in str(caught.value)


def test_other_refused_options_name_the_metric_and_the_option() -> None:
    with pytest.raises(ConfigError, match="metric 'faithfulness_probability' option 'threshold'"):
        create_metric("faithfulness_probability", threshold=1.5)


def test_it_is_registered_by_name_and_higher_is_better() -> None:
    metric = create_metric("faithfulness-probability")
    assert isinstance(metric, FaithfulnessProbability)
    assert metric.higher_is_better and metric.threshold == 0.5


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
    report = await vera.aevaluate(
        [copied, invented], ["faithfulness", "faithfulness_probability"], judge=judge
    )
    results = {r.id: r.results["faithfulness_probability"] for r in report.samples}
    assert results["copied"].passed and not results["invented"].passed
    assert results["invented"].score is not None and results["copied"].score is not None
    assert results["invented"].score < results["copied"].score
    faithfulness = {r.id: r.scores["faithfulness"] for r in report.samples}
    assert faithfulness == {"copied": 1.0, "invented": 0.5}  # 1 of 2 claims supported


def test_the_offline_judge_gives_both_scores_each_by_its_own_formula() -> None:
    sample = Sample(
        id="w",
        query="q",
        response="The warranty covers parts for 36 months. Labour is covered for 12 months.",
        contexts=[CONTEXT],
    )
    metrics = ["faithfulness", "faithfulness_probability"]
    [result] = vera.evaluate([sample], metrics, judge=OfflineJudge()).samples
    assert [c.verdict for c in result.claims] == [C, F]
    wrong, right = result.claims
    assert wrong.entailment is not None and right.entailment is not None
    # The wrong number keeps its weight's share of the support model's probability, and never
    # more than even odds; the copied clause keeps all of it.
    [learned] = vera.evaluate([sample], judge=OfflineJudge(learned=True, min_support=0)).samples
    model = [c.entailment for c in learned.claims]
    assert model[0] is not None
    assert wrong.entailment == pytest.approx(
        min(RULED_OUT, LEXICAL_WEIGHTS.contradicted * model[0])
    )
    assert right.entailment == model[1]
    # Seed 000: one of two claims supported is 0.5, which meets the default threshold.
    assert result.scores["faithfulness"] == 0.5 and result.results["faithfulness"].passed
    # The probability that both hold: the wrong number's doubt sinks it below even odds.
    probability = result.results["faithfulness_probability"]
    assert probability.score == pytest.approx(wrong.entailment * right.entailment)
    assert probability.passed is False
    assert probability.claim_weights == {"c1": wrong.entailment, "c2": right.entailment}


def test_the_learned_judge_still_separates_the_bundled_examples_planted_errors() -> None:
    dataset = {s.id: s for s in vera.load_dataset("example")}
    metrics = ["faithfulness", "faithfulness_probability"]
    report = vera.evaluate(dataset.values(), metrics, judge=OfflineJudge(learned=True))
    faithful: list[float] = []
    planted: list[float] = []
    for result in report.samples:
        score = result.scores["faithfulness_probability"]
        assert score is not None
        kind = dataset[result.id].metadata["planted"]
        if kind in (None, "abstention"):
            faithful.append(score)
        elif kind in ("wrong_number", "negation", "invented_fact"):
            planted.append(score)
    assert statistics.mean(planted) <= statistics.mean(faithful) - 0.1
