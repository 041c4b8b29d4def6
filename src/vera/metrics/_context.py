"""Retrieval metrics: is what was retrieved relevant, useful and sufficient?

context_relevance = mean relevance of the retrieved chunks to the query
                    (RELEVANT 1, PARTIALLY_RELEVANT 0.5, IRRELEVANT 0; TruLens's triad);
                    on a conversation turn, of the chunks retrieved for it and the tool
                    results it saw only: earlier turns' and the user's words, which the turn
                    is verified against, are no retrieval of its own to rate
context_precision = Σ_k (precision@k · v_k) / Σ_k v_k           (RAGAS, against the reference)
                    v_k = 1 when chunk k supports some claim of the reference answer
context_recall    = reference claims supported by the chunks / reference claims   (RAGAS)
"""

from __future__ import annotations

from typing import ClassVar

from vera._types import Sample, SourceKind
from vera._types._conversations import SOURCE_KIND_KEY
from vera._types._results import ClaimAnalysis, MetricResult, Need
from vera.metrics._base import MetricOptions, not_applicable, scored
from vera.metrics._grounding import GroundedOptions, is_grounded


class ContextRelevance(MetricOptions):
    """How relevant the retrieved chunks are to the query, on average."""

    name: ClassVar[str] = "context_relevance"
    description: ClassVar[str] = "mean relevance of the retrieved chunks to the query"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.RELEVANCE})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        ratings = analysis.context_relevance
        if not ratings:
            return not_applicable(
                self, "no query or no retrieved context to rate", fields=("query", "contexts")
            )
        own = _own_retrieval(sample)
        if own is not None:
            ratings = tuple(r for k, r in enumerate(ratings) if k in own)
            if not ratings:
                return not_applicable(
                    self,
                    "a conversation turn with no retrieval of its own: its contexts are earlier "
                    "turns' and the user's words",
                    fields=("contexts",),
                )
        weights = [r.relevance.weight for r in ratings]
        relevant = sum(1 for w in weights if w == 1.0)
        return scored(
            self,
            sum(weights) / len(weights),
            f"{relevant} of {len(weights)} chunks relevant to the query",
            details={"per_context": [r.relevance.value for r in ratings]},
        )


_OWN = frozenset({SourceKind.RETRIEVED.value, SourceKind.TOOL.value})


def _own_retrieval(sample: Sample) -> set[int] | None:
    """On a conversation turn (its contexts tagged with their source), the positions of the
    contexts retrieved for it and the tool results it saw; None on any other sample."""
    kinds = [c.metadata.get(SOURCE_KIND_KEY) for c in sample.contexts]
    if not kinds or any(kind is None for kind in kinds):
        return None
    return {k for k, kind in enumerate(kinds) if kind in _OWN}


class ContextPrecision(GroundedOptions):
    """Whether the chunks that support the reference answer are ranked first (RAGAS)."""

    name: ClassVar[str] = "context_precision"
    description: ClassVar[str] = "rank-weighted share of chunks that support the reference answer"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.REFERENCE_IN_CONTEXTS})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        verdicts = analysis.reference_in_contexts
        if not verdicts or not sample.contexts:
            return not_applicable(
                self,
                "no reference answer, or no context, to compare",
                fields=("reference", "contexts"),
            )
        useful_chunks = {
            v.context_index
            for v in verdicts
            if v.context_index is not None and is_grounded(v, self.min_entailment)
        }
        useful = [int(k in useful_chunks) for k in range(len(sample.contexts))]
        if not any(useful):
            return scored(self, 0.0, "no chunk supports the reference answer")
        total = 0.0
        for k, v in enumerate(useful, start=1):
            if v:
                total += sum(useful[:k]) / k
        value = total / sum(useful)
        ranks = [k for k, v in enumerate(useful, start=1) if v]
        return scored(
            self,
            value,
            f"chunks supporting the reference are at ranks {ranks} of {len(useful)}",
            details={"useful": useful},
        )


class ContextRecall(GroundedOptions):
    """Share of the reference answer the retrieved chunks support (RAGAS)."""

    name: ClassVar[str] = "context_recall"
    description: ClassVar[str] = "share of the reference answer's claims the chunks support"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.REFERENCE_IN_CONTEXTS})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        verdicts = analysis.reference_in_contexts
        if not verdicts:
            return not_applicable(
                self,
                "no reference answer (or it has no claims) to recall",
                fields=("reference",),
            )
        weights = {v.claim_id: float(is_grounded(v, self.min_entailment)) for v in verdicts}
        covered = int(sum(weights.values()))
        return scored(
            self,
            covered / len(weights),
            f"{covered} of {len(weights)} reference claims supported by the chunks",
            details={"reference_claims": weights},
        )
