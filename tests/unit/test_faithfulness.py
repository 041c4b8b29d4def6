"""Faithfulness arithmetic, with the seeds' acceptance rows as tests.

Claims and verdicts come from `FakeJudge`, a scripted fake: these tests check VERA's formula,
not any judge's accuracy.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera import Claim, ClaimVerdict, Sample, Verdict, evaluate
from vera.metrics import ClaimAnalysis, MetricStatus
from vera.metrics._faithfulness import Faithfulness
from vera.testing import FakeJudge

WHITEBOX = "the built-in metric classes behind the names"

F, P, N, C = (
    Verdict.FULLY_SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NO_EVIDENCE,
    Verdict.CONTRADICTED,
)


def analysis(*verdicts: Verdict) -> ClaimAnalysis:
    claims = tuple(Claim(f"c{i}", f"claim number {i}") for i in range(len(verdicts)))
    return ClaimAnalysis(
        claims=claims,
        verdicts=tuple(ClaimVerdict(c.id, v) for c, v in zip(claims, verdicts, strict=True)),
    )


SAMPLE = Sample(id="s", query="q", response="r", contexts=["c"])


def score(metric: Faithfulness, *verdicts: Verdict) -> float | None:
    return metric.score(SAMPLE, analysis(*verdicts)).score


# Seed 000's acceptance table.
@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((F, F, F), 1.0),  # all claims supported
        ((F, N, F, C), 0.5),  # half supported
        ((), 1.0),  # no claims: vacuously faithful
        ((N, C, N), 0.0),  # all unsupported
    ],
)
def test_seed_000_acceptance(verdicts: tuple[Verdict, ...], expected: float) -> None:
    assert score(Faithfulness(), *verdicts) == expected


def test_no_claims_has_its_own_status() -> None:
    result = Faithfulness().score(SAMPLE, analysis())
    assert result.status is MetricStatus.NO_CLAIMS
    assert result.score == 1.0
    assert result.passed is True


def test_ratio_weights_partial_half() -> None:
    assert score(Faithfulness(), F, P) == 0.75
    assert score(Faithfulness(), P, N, C, C) == pytest.approx(0.125)


# Seed 002's signed scheme.
def test_weighted_scheme_arithmetic() -> None:
    weighted = Faithfulness(scoring="weighted")
    assert score(weighted, F, P, N, C) == pytest.approx((1 + 0.5 + 0 - 1) / 4)
    assert score(weighted, F, N) == 0.5
    assert score(weighted, C, F) == 0.0  # (-1 + 1) / 2
    assert score(weighted, C, C, F) == 0.0  # negative mean clamps to 0


def test_strict_mode_makes_no_evidence_count_minus_one() -> None:
    strict = Faithfulness(scoring="weighted", strict_mode=True)
    assert score(strict, F, N) == 0.0  # (1 - 1) / 2
    assert score(strict, F, F, N) == pytest.approx(1 / 3)
    assert score(strict, F, F, F, N) == pytest.approx(0.5)


def test_strict_mode_requires_weighted_scoring() -> None:
    with pytest.raises(ValueError, match="scoring='weighted'"):
        Faithfulness(strict_mode=True)


def test_verdict_scores_override_accepts_any_spelling() -> None:
    metric = Faithfulness(scoring="weighted", verdict_scores={"CONTRADICTORY": -2.0, "partial": 0})
    assert metric.weights()[Verdict.CONTRADICTED] == -2.0
    assert score(metric, F, F, F, C) == pytest.approx(0.25)  # (3 - 2) / 4
    assert score(metric, F, P) == 0.5


def test_threshold_decides_passed() -> None:
    metric = Faithfulness(threshold=0.75)
    assert metric.score(SAMPLE, analysis(F, P)).passed is True
    assert metric.score(SAMPLE, analysis(F, N)).passed is False


def test_claim_weights_and_reason_explain_the_score() -> None:
    result = Faithfulness().score(SAMPLE, analysis(F, P, C))
    assert result.claim_weights == {"c0": 1.0, "c1": 0.5, "c2": 0.0}
    assert result.reason == (
        "1 of 3 claims supported, 1 partially; unsupported: 'claim number 2' (CONTRADICTED)"
    )


def seed_sample(response: str, contexts: list[str]) -> Sample:
    return Sample(id=response[:10], query="", response=response, contexts=contexts)


# Seed 002's examples and seed 003's, end to end through the runner with a scripted fake judge.
def test_seed_002_apollo_and_refund_and_seed_003_paris() -> None:
    apollo = "The internal project is called Apollo."
    refund = "You have 60 days to return the item."
    paris = "Paris is in France"
    fake = FakeJudge(
        {
            apollo: [(apollo, "FULLY_SUPPORTED")],
            refund: [(refund, "CONTRADICTORY")],
            paris: [(paris, "SUPPORTED")],
        }
    )
    samples = [
        Sample(id="apollo", response=apollo, contexts=["The project code name is Apollo."]),
        Sample(id="refund", response=refund, contexts=["The refund window is 30 days."]),
        Sample(id="paris", response=paris, contexts=["Paris is the capital of France."]),
    ]
    for scoring in ("ratio", "weighted"):
        report = evaluate(samples, [Faithfulness(scoring=scoring)], fake)
        assert report.sample("apollo").scores["faithfulness"] == 1.0
        assert report.sample("refund").scores["faithfulness"] == 0.0
        assert report.sample("paris").scores["faithfulness"] == 1.0
        refund_claim = report.sample("refund").claims[0]
        assert refund_claim.verdict is Verdict.CONTRADICTED
        assert refund_claim.span == (0, len(refund))


@given(
    verdicts=st.lists(st.sampled_from([F, P, N, C]), min_size=1, max_size=12),
    scheme=st.sampled_from(
        [{}, {"scoring": "weighted"}, {"scoring": "weighted", "strict_mode": True}]
    ),
)
def test_a_sub_score_never_contradicts_its_headline(
    verdicts: list[Verdict], scheme: dict[str, object]
) -> None:
    result = Faithfulness(**scheme).score(SAMPLE, analysis(*verdicts))
    assert result.score is not None
    sub = result.sub_scores
    # Lenient is the default score; every scheme lies between the strict and the lenient one.
    assert sub["strict"] <= result.score <= sub["lenient"]
    if not scheme:
        assert result.score == sub["lenient"]
    assert sub["contradiction_rate"] == verdicts.count(C) / len(verdicts)
