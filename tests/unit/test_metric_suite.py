"""Each metric's formula on hand-computed cases, and the judge work each one costs.

Metric tests build the `ClaimAnalysis` a judge would have produced, so each formula is checked
on its own. Tests of the shared analysis use FakeJudge, an explicit scripted fake that counts
its calls.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import vera
from vera import Claim, ClaimVerdict, Sample, Verdict
from vera._analysis import analyse_sample
from vera._types import Relevance, RelevanceVerdict
from vera._types._results import CitationCheck
from vera.metrics import ClaimAnalysis, MetricStatus, Need, create_metric
from vera.metrics._answer import Abstention, AnswerCorrectness, AnswerRelevance
from vera.metrics._citation_accuracy import CitationAccuracy
from vera.metrics._context import ContextPrecision, ContextRecall, ContextRelevance
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._grounding import GroundingF1, GroundingPrecision, GroundingRecall
from vera.metrics._hallucination import HallucinationRate
from vera.metrics._registry import METRICS
from vera.testing import FakeJudge

WHITEBOX = "the metric registry's table, patched to add a plugin"

FULL, PART, NONE, CONTRA = (
    Verdict.FULLY_SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NO_EVIDENCE,
    Verdict.CONTRADICTED,
)


def claims(n: int, prefix: str = "c") -> tuple[Claim, ...]:
    return tuple(Claim(f"{prefix}{i}", f"claim {prefix}{i}") for i in range(1, n + 1))


def verdicts(
    *values: Verdict, prefix: str = "c", at: int | None = None
) -> tuple[ClaimVerdict, ...]:
    return tuple(
        ClaimVerdict(f"{prefix}{i}", v, context_index=at) for i, v in enumerate(values, start=1)
    )


def analysis(*values: Verdict, **extra: object) -> ClaimAnalysis:
    return ClaimAnalysis(claims=claims(len(values)), verdicts=verdicts(*values), **extra)


SAMPLE = Sample(id="s", query="q", response="r", contexts=["a", "b", "c"], reference="ref")


def test_faithfulness_reports_lenient_strict_and_contradiction_rate() -> None:
    result = Faithfulness().score(SAMPLE, analysis(FULL, PART, NONE, CONTRA))
    assert result.score == pytest.approx((1 + 0.5 + 0 + 0) / 4)
    assert result.sub_scores == {
        "lenient": pytest.approx(0.375),
        "strict": pytest.approx(0.0),  # (1 + 0.5 - 1 - 1) / 4 < 0, clamped
        "contradiction_rate": 0.25,
    }
    mostly = Faithfulness().score(SAMPLE, analysis(FULL, FULL, FULL, NONE))
    assert mostly.sub_scores["strict"] == pytest.approx((3 - 1) / 4)


def test_hallucination_rate_counts_no_evidence_and_contradicted_claims() -> None:
    metric = HallucinationRate()
    result = metric.score(SAMPLE, analysis(FULL, PART, NONE, CONTRA))
    assert result.score == 0.5 and result.passed is False
    assert result.sub_scores == {"hallucinated": 1.0}
    assert result.claim_weights == {"c1": 0.0, "c2": 0.0, "c3": 1.0, "c4": 1.0}
    clean = metric.score(SAMPLE, analysis(FULL, PART))
    assert clean.score == 0.0 and clean.passed is True and clean.sub_scores["hallucinated"] == 0
    assert HallucinationRate(threshold=0.5).score(SAMPLE, analysis(FULL, NONE)).passed is True


def test_unanswerable_abstention_is_not_a_hallucination_but_an_answer_is() -> None:
    unanswerable = Sample(
        id="u",
        query="What is the liability cap?",
        response="The provided documents do not specify a liability cap.",
        category="unanswerable",
    )
    assert HallucinationRate().score(unanswerable, analysis()).score == 0.0
    assert Abstention().score(unanswerable, analysis()).score == 1.0
    answered = unanswerable.model_copy(update={"response": "The liability cap is $1M."})
    assert HallucinationRate().score(answered, analysis(FULL)).score == 1.0
    assert Abstention().score(answered, analysis(FULL)).score == 0.0
    assert Abstention().score(SAMPLE, analysis(FULL)).status is MetricStatus.NOT_APPLICABLE


def test_grounding_precision_recall_and_f1() -> None:
    done = ClaimAnalysis(
        claims=claims(4),
        verdicts=verdicts(FULL, PART, NONE, CONTRA),
        reference_claims=claims(3, "r"),
        reference_in_response=verdicts(FULL, NONE, NONE, prefix="r"),
    )
    assert GroundingPrecision().score(SAMPLE, done).score == 0.5
    assert GroundingRecall().score(SAMPLE, done).score == pytest.approx(1 / 3)
    f1 = GroundingF1().score(SAMPLE, done)
    assert f1.score == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert GroundingRecall().score(SAMPLE, analysis(FULL)).status is MetricStatus.NOT_APPLICABLE


def test_grounding_uses_entailment_probability_where_the_judge_gives_one() -> None:
    probable = ClaimAnalysis(
        claims=claims(4),
        verdicts=(
            ClaimVerdict("c1", PART, entailment=0.71),
            ClaimVerdict("c2", FULL, entailment=0.69),
            ClaimVerdict("c3", FULL),
            # The judge's own word that nothing supports it outweighs its probability.
            ClaimVerdict("c4", NONE, entailment=0.95),
        ),
    )
    assert GroundingPrecision().score(SAMPLE, probable).score == pytest.approx(2 / 4)
    strict = GroundingPrecision(min_entailment=0.9).score(SAMPLE, probable)
    assert strict.score == pytest.approx(1 / 4)


def test_context_precision_follows_ragas_rank_weighting() -> None:
    # Useful chunks at ranks 1 and 3 of 3: (1/1 + 2/3) / 2.
    done = ClaimAnalysis(
        reference_claims=claims(2, "r"),
        reference_in_contexts=(
            ClaimVerdict("r1", FULL, context_index=0),
            ClaimVerdict("r2", PART, context_index=2),
        ),
    )
    assert ContextPrecision().score(SAMPLE, done).score == pytest.approx((1 + 2 / 3) / 2)
    late = ClaimAnalysis(
        reference_claims=claims(1, "r"),
        reference_in_contexts=(ClaimVerdict("r1", FULL, context_index=2),),
    )
    assert ContextPrecision().score(SAMPLE, late).score == pytest.approx(1 / 3)
    none = ClaimAnalysis(reference_claims=claims(1, "r"), reference_in_contexts=verdicts(NONE))
    assert ContextPrecision().score(SAMPLE, none).score == 0.0


def test_context_recall_is_the_share_of_reference_claims_supported() -> None:
    done = ClaimAnalysis(
        reference_claims=claims(4, "r"),
        reference_in_contexts=verdicts(FULL, PART, NONE, CONTRA, prefix="r"),
    )
    assert ContextRecall().score(SAMPLE, done).score == 0.5
    no_reference = Sample(id="s", response="r")
    assert ContextRecall().score(no_reference, analysis()).status is MetricStatus.NOT_APPLICABLE


def test_relevance_metrics_average_the_labels() -> None:
    rated = ClaimAnalysis(
        context_relevance=tuple(
            RelevanceVerdict(relevance=r)
            for r in (Relevance.RELEVANT, Relevance.PARTIALLY_RELEVANT, Relevance.IRRELEVANT)
        ),
        answer_relevance=RelevanceVerdict(relevance="PARTIALLY_RELEVANT", reason="half"),
    )
    assert ContextRelevance().score(SAMPLE, rated).score == 0.5
    answer = AnswerRelevance().score(SAMPLE, rated)
    assert answer.score == 0.5 and answer.reason == "partially relevant: half"
    assert AnswerRelevance().score(SAMPLE, analysis()).status is MetricStatus.NOT_APPLICABLE


def test_answer_correctness_is_ragas_claim_f1() -> None:
    done = ClaimAnalysis(
        claims=claims(3),
        reference_claims=claims(2, "r"),
        response_in_reference=verdicts(FULL, FULL, NONE),  # TP 2, FP 1
        reference_in_response=verdicts(FULL, NONE, prefix="r"),  # FN 1
    )
    result = AnswerCorrectness().score(SAMPLE, done)
    assert result.score == pytest.approx(2 / (2 + 0.5 * (1 + 1)))
    assert result.details == {"tp": 2, "fp": 1, "fn": 1}


def test_citation_accuracy_counts_supported_citations_and_uncited_claims() -> None:
    checks = (
        CitationCheck(claim_id="c1", label="1", context_index=0, verdict=ClaimVerdict("c1", FULL)),
        CitationCheck(claim_id="c1", label="2", context_index=1, verdict=ClaimVerdict("c1", NONE)),
        CitationCheck(claim_id="c2", label="9", context_index=None, verdict=None),
    )
    done = ClaimAnalysis(claims=claims(3), verdicts=verdicts(FULL, FULL, FULL), citations=checks)
    cited = Sample.model_validate({**SAMPLE.model_dump(), "citations": ["doc-a"]})
    result = CitationAccuracy().score(cited, done)
    assert result.score == pytest.approx(1 / 3)
    assert result.claim_weights == {"c1": 0.5, "c2": 0.0}
    assert result.details["uncited_claims"] == ["c3"]
    assert result.sub_scores["uncited_claim_share"] == pytest.approx(1 / 3)
    # "doc-a" names no context: none of the three cited places is right, and it is missed.
    assert result.sub_scores["truth_precision"] == 0.0
    assert result.sub_scores["truth_recall"] == 0.0
    silent = CitationAccuracy().score(SAMPLE, analysis(FULL))
    assert silent.status is MetricStatus.NOT_APPLICABLE
    assert silent.details["uncited_claims"] == ["c1"]


async def test_citations_are_checked_against_the_context_they_name() -> None:
    response = "The window is 30 days [1]. Refunds go to the card [1][2]."
    judge = FakeJudge(
        {response: [("The window is 30 days", "yes"), ("Refunds go to the card", "yes")]}
    )
    sample = Sample(
        id="s", query="q", response=response, contexts=["The window is 30 days.", "Cards."]
    )
    done = await analyse_sample(sample, judge, frozenset({Need.CLAIMS, Need.CITATIONS}))
    assert [(c.claim_id, c.label, c.context_index) for c in done.citations or ()] == [
        ("c1", "1", 0),
        ("c2", "1", 0),
        ("c2", "2", 1),
    ]
    # The fake gives no context index, so each cited context costs one verify call.
    assert judge.verify_calls == 1 + 2


async def test_each_need_costs_its_judge_calls_once() -> None:
    judge = FakeJudge(
        {"Paris is in France.": [("Paris is in France.", "yes")], "Paris.": [("Paris", "yes")]},
        relevance={"ctx": "RELEVANT", "Paris is in France.": "RELEVANT"},
    )
    sample = Sample(
        id="s", query="Where?", response="Paris is in France.", contexts=["ctx"], reference="Paris."
    )
    everything = frozenset(Need)
    done = await analyse_sample(sample, judge, everything)
    # Response and reference extracted once each; verified against the contexts, each other
    # and the contexts again; relevance of the context and the response in one call.
    assert (judge.extract_calls, judge.verify_calls, judge.relevance_calls) == (2, 4, 1)
    assert done.answer_relevance is not None and done.context_relevance is not None
    report = await vera.aevaluate([sample], [create_metric(name) for name in METRICS], judge)
    assert report.samples[0].status.value == "scored", report.samples[0].error


def test_no_reference_means_no_reference_calls() -> None:
    judge = FakeJudge({"A.": [("A.", "yes")]})
    sample = Sample(id="s", query="q", response="A.", contexts=["A."])
    metrics = [GroundingPrecision(), GroundingRecall(), ContextRecall(), AnswerCorrectness()]
    report = vera.evaluate([sample], metrics, judge)
    assert (judge.extract_calls, judge.verify_calls) == (1, 1)
    assert report.metrics["grounding_precision"] == 1.0
    assert report.metrics["grounding_recall"] is None


def test_every_registered_metric_documents_itself() -> None:
    for name, cls in METRICS.items():
        metric = create_metric(name)
        assert metric.name == name and cls.description
        assert isinstance(metric.needs, frozenset) and isinstance(metric.higher_is_better, bool)


verdict_lists = st.lists(st.sampled_from(list(Verdict)), min_size=0, max_size=8)


@pytest.mark.slow
@given(verdict_lists, verdict_lists, verdict_lists)
def test_every_score_stays_in_range(
    response: list[Verdict], reference: list[Verdict], in_contexts: list[Verdict]
) -> None:
    done = ClaimAnalysis(
        claims=claims(len(response)),
        verdicts=verdicts(*response, at=0),
        reference_claims=claims(len(reference), "r"),
        reference_in_response=verdicts(*reference, prefix="r"),
        response_in_reference=verdicts(*response),
        reference_in_contexts=verdicts(*in_contexts[: len(reference)], prefix="r", at=1)
        + verdicts(*([FULL] * max(0, len(reference) - len(in_contexts))), prefix="x"),
        context_relevance=(RelevanceVerdict(relevance="RELEVANT"),),
        answer_relevance=RelevanceVerdict(relevance="IRRELEVANT"),
        citations=(),
    )
    for name in METRICS:
        result = create_metric(name).score(SAMPLE, done)
        if result.score is not None:
            assert 0.0 <= result.score <= 1.0 and math.isfinite(result.score)
        assert all(0.0 <= v <= 1.0 for v in result.sub_scores.values())


def test_metrics_from_installed_packages_are_found_by_entry_point(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib.metadata import EntryPoint
    from pathlib import Path

    from vera.metrics import _registry as registry

    folder = Path(str(tmp_path))
    (folder / "vera_plugin_demo.py").write_text(
        "from vera.metrics import Need, scored\n"
        "class Demo:\n    name = 'demo_rate'\n    description = 'a demo'\n"
        "    needs = frozenset({Need.CLAIMS})\n    higher_is_better = False\n"
        "    threshold = 0.5\n"
        "    def score(self, sample, analysis):\n        return scored(self, 0.0, 'demo')\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    demo = EntryPoint("demo_rate", "vera_plugin_demo:Demo", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [demo])
    monkeypatch.setattr(registry, "METRICS", dict(registry.METRICS))
    metric = create_metric("demo_rate")
    assert type(metric).__name__ == "Demo" and metric.higher_is_better is False
    with pytest.raises(vera.ConfigError, match="unknown metric 'nope'"):
        create_metric("nope")
