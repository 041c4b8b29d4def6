"""Answer metrics: does the response address the query, and agree with the reference?

answer_relevance   = relevance of the response to the query (1, 0.5 or 0)
answer_correctness = TP / (TP + ½ (FP + FN))                       (RAGAS's F1 over claims)
    TP = response claims the reference supports,  FP = response claims it does not,
    FN = reference claims the response does not state
abstention         = on an unanswerable question, 1 when the response abstains, else 0
"""

from __future__ import annotations

from typing import ClassVar

from vera._text._abstention import abstains
from vera._types import Sample
from vera._types._results import ClaimAnalysis, MetricResult, Need
from vera.metrics._base import MetricOptions, not_applicable, scored
from vera.metrics._grounding import GroundedOptions, is_grounded


class AnswerRelevance(MetricOptions):
    """Whether the response addresses the query."""

    name: ClassVar[str] = "answer_relevance"
    description: ClassVar[str] = "whether the response addresses the query"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.RELEVANCE})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        rating = analysis.answer_relevance
        if rating is None:
            return not_applicable(self, "no query to answer", fields=("query",))
        reason = f"{rating.relevance.value.lower().replace('_', ' ')}"
        if rating.reason:
            reason += f": {rating.reason}"
        return scored(self, rating.relevance.weight, reason)


class AnswerCorrectness(GroundedOptions):
    """Agreement of the response's claims with the reference answer's, as an F1."""

    name: ClassVar[str] = "answer_correctness"
    description: ClassVar[str] = "F1 of the response's claims against the reference answer's"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.REFERENCE_IN_RESPONSE})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        in_reference = analysis.response_in_reference
        in_response = analysis.reference_in_response
        if in_reference is None or in_response is None:
            return not_applicable(
                self, "no reference answer to compare with", fields=("reference",)
            )
        if not in_reference and not in_response:
            return not_applicable(self, "neither the response nor the reference has claims")
        tp = sum(is_grounded(v, self.min_entailment) for v in in_reference)
        fp = len(in_reference) - tp
        fn = sum(not is_grounded(v, self.min_entailment) for v in in_response)
        value = tp / (tp + 0.5 * (fp + fn)) if tp else 0.0
        return scored(
            self,
            value,
            f"{tp} response claims match the reference, {fp} do not, {fn} reference claims missing",
            details={"tp": tp, "fp": fp, "fn": fn},
        )


class Abstention(MetricOptions):
    """On questions the sources cannot answer, whether the response says so."""

    name: ClassVar[str] = "abstention"
    description: ClassVar[str] = "on unanswerable questions, 1 when the response abstains"
    needs: ClassVar[frozenset[Need]] = frozenset()

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        if not sample.unanswerable:
            return not_applicable(self, "the question is answerable", fields=("answerable",))
        response = sample.response or ""
        if not response.strip() or abstains(response):
            return scored(self, 1.0, "abstained, as it should on an unanswerable question")
        return scored(self, 0.0, "answered a question the sources cannot answer")
