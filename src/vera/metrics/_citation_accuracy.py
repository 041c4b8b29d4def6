"""Citation accuracy: do the passages a response cites back the claims that cite them?

    score = citations whose cited context supports the claim they are attached to
            / citations attached to claims

A citation is a (claim, label) pair: "[1][2]" after a claim is two citations. A label that
names no retrieved context is wrong. The report also lists the claims that cite nothing
(sub-score `uncited_claim_share`) and, where the dataset gives ground-truth citations, the
precision and recall of the cited contexts against them (`truth_precision`, `truth_recall`).
Markers are found and tied to claims by `vera.metrics._citations`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from vera._text._citations import resolve_citation
from vera._types import Sample
from vera._types._results import CitationCheck, ClaimAnalysis, MetricResult, Need
from vera.metrics._base import not_applicable, scored
from vera.metrics._grounding import GroundedOptions, is_grounded


class CitationAccuracy(GroundedOptions):
    """Share of a response's citations whose cited context supports the claim."""

    name: ClassVar[str] = "citation_accuracy"
    description: ClassVar[str] = "share of citations whose cited passage supports the claim"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS, Need.CITATIONS})

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        checks = analysis.citations or ()
        cited = {check.claim_id for check in checks}
        uncited = [claim.id for claim in analysis.claims if claim.id not in cited]
        details: dict[str, Any] = {
            "uncited_claims": uncited,
            "citations": [
                {
                    "claim": check.claim_id,
                    "label": check.label,
                    "context_index": check.context_index,
                    "supported": self._supported(check),
                }
                for check in checks
            ],
        }
        if not checks:
            return not_applicable(
                self,
                "the response cites nothing: no marker such as [1] or (Source: name) in it",
                details=details,
            )
        correct = sum(self._supported(check) for check in checks)
        per_claim: dict[str, list[bool]] = {}
        for check in checks:
            per_claim.setdefault(check.claim_id, []).append(self._supported(check))
        sub_scores = {"uncited_claim_share": len(uncited) / len(analysis.claims)}
        sub_scores.update(_against_truth(sample, checks))
        reason = f"{correct} of {len(checks)} citations support their claim"
        if uncited:
            reason += f"; {len(uncited)} claim(s) cite nothing"
        return scored(
            self,
            correct / len(checks),
            reason,
            claim_weights={k: sum(v) / len(v) for k, v in per_claim.items()},
            sub_scores=sub_scores,
            details=details,
        )

    def _supported(self, check: CitationCheck) -> bool:
        return check.verdict is not None and is_grounded(check.verdict, self.min_entailment)


def _against_truth(sample: Sample, checks: Sequence[CitationCheck]) -> dict[str, float]:
    """Precision and recall of the cited contexts against the dataset's own citations."""
    if not sample.citations:
        return {}

    def key(index: int | None, label: str) -> str:
        return f"context:{index}" if index is not None else f"label:{label.lower()}"

    truth = {
        key(resolve_citation(c.document_id, sample.contexts), c.document_id)
        for c in sample.citations
    }
    given = {key(check.context_index, check.label) for check in checks}
    hits = len(truth & given)
    return {"truth_precision": hits / len(given), "truth_recall": hits / len(truth)}
