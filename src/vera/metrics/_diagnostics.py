"""RAGChecker's diagnostic metrics (Ru et al. 2024), all read from one claim-by-chunk matrix.

Each claim of the response and of the reference answer is judged against every retrieved chunk
alone (`EntailmentMatrix`). A chunk is *relevant* when it entails at least one reference claim;
a response claim is *correct* when the reference answer entails it. "Entails" is VERA's
grounded: FULLY or PARTIALLY_SUPPORTED, or an entailment probability of at least
`min_entailment` for judges that give one.

    claim_recall                 = reference claims some chunk entails / reference claims
    chunk_context_precision      = relevant chunks / chunks
    context_utilization          = reference claims some chunk entails that the response states
                                   / reference claims some chunk entails
    noise_sensitivity_relevant   = incorrect response claims a relevant chunk entails
                                   / response claims                              (lower is better)
    noise_sensitivity_irrelevant = incorrect response claims some chunk entails, none of them
                                   relevant / response claims                     (lower is better)
    reference_hallucination      = incorrect response claims no chunk entails
                                   / response claims                              (lower is better)
    self_knowledge               = correct response claims no chunk entails / response claims

Every response claim falls in exactly one class: correct and entailed by a chunk, relevant
noise, irrelevant noise, hallucination or self-knowledge, so the last four and RAGChecker's
faithfulness (VERA has its own) add up to 1. A sample without a reference answer, or whose
reference has no claims, is not applicable to any of them; without chunks, only
reference_hallucination and self_knowledge apply; an empty denominator is not applicable too.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from vera._types import Claim, ClaimVerdict, Sample
from vera._types._entailment import EntailmentMatrix
from vera._types._results import ClaimAnalysis, MetricResult, Need
from vera.metrics._base import not_applicable, scored
from vera.metrics._grounding import GroundedOptions, is_grounded

_QUOTE_LIMIT = 60
_QUOTED_CLAIMS = 5

CORRECT = "correct"
RELEVANT_NOISE = "relevant_noise"
IRRELEVANT_NOISE = "irrelevant_noise"
HALLUCINATION = "hallucination"
SELF_KNOWLEDGE = "self_knowledge"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What the matrix says once entailment is decided; chunk positions are 0-based."""

    relevant: tuple[bool, ...]
    """Per chunk: it entails at least one reference claim."""
    reference_chunks: tuple[tuple[int, ...], ...]
    """Per reference claim: the chunks that entail it."""
    stated: tuple[bool, ...]
    """Per reference claim: the response entails it."""
    response_chunks: tuple[tuple[int, ...], ...]
    """Per response claim: the chunks that entail it."""
    correct: tuple[bool, ...]
    """Per response claim: the reference answer entails it."""

    def category(self, i: int) -> str:
        """The one class response claim i falls in."""
        chunks = self.response_chunks[i]
        if not chunks:
            return SELF_KNOWLEDGE if self.correct[i] else HALLUCINATION
        if self.correct[i]:
            return CORRECT
        return RELEVANT_NOISE if any(self.relevant[k] for k in chunks) else IRRELEVANT_NOISE


def diagnose(matrix: EntailmentMatrix, min_entailment: float) -> Diagnosis:
    """Decide every cell of `matrix` as entailed or not, and derive RAGChecker's predicates."""

    def entailing(row: Sequence[ClaimVerdict]) -> tuple[int, ...]:
        return tuple(k for k, v in enumerate(row) if is_grounded(v, min_entailment))

    reference_chunks = tuple(entailing(row) for row in matrix.reference_in_chunks)
    hit = {k for chunks in reference_chunks for k in chunks}
    return Diagnosis(
        relevant=tuple(k in hit for k in range(matrix.chunks)),
        reference_chunks=reference_chunks,
        stated=tuple(is_grounded(v, min_entailment) for v in matrix.reference_in_response),
        response_chunks=tuple(entailing(row) for row in matrix.response_in_chunks),
        correct=tuple(is_grounded(v, min_entailment) for v in matrix.response_in_reference),
    )


class _Diagnostic(GroundedOptions):
    """What the seven metrics share: the need, and when a sample is not applicable."""

    name: ClassVar[str]
    description: ClassVar[str]
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CHUNK_ENTAILMENT})
    needs_chunks: ClassVar[bool] = True
    """False for the metrics of claims no chunk entails, which a sample without chunks has."""

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        matrix = analysis.chunk_entailment
        if matrix is None:
            return not_applicable(
                self, "no reference answer to compare with", fields=("reference",)
            )
        if not matrix.reference_claims:
            return not_applicable(self, "the reference answer has no claims")
        if self.needs_chunks and not matrix.chunks:
            return not_applicable(self, "no retrieved chunk to diagnose", fields=("contexts",))
        return self.measure(matrix, diagnose(matrix, self.min_entailment))

    @abstractmethod
    def measure(self, matrix: EntailmentMatrix, diagnosis: Diagnosis) -> MetricResult:
        """The score of a sample the metric applies to."""


class ClaimRecall(_Diagnostic):
    """Share of the reference answer's claims that some retrieved chunk entails."""

    name: ClassVar[str] = "claim_recall"
    description: ClassVar[str] = "share of the reference answer's claims some chunk entails"

    def measure(self, matrix: EntailmentMatrix, diagnosis: Diagnosis) -> MetricResult:
        claims = matrix.reference_claims
        found = [bool(chunks) for chunks in diagnosis.reference_chunks]
        reason = f"{sum(found)} of {len(claims)} reference claims entailed by some chunk"
        missed = [c for c, hit in zip(claims, found, strict=True) if not hit]
        if missed:
            reason += "; no chunk entails " + _quoted(missed)
        return scored(
            self,
            sum(found) / len(claims),
            reason,
            details={"reference_claims": _reference_details(matrix, diagnosis)},
        )


class ChunkContextPrecision(_Diagnostic):
    """Share of the retrieved chunks that entail some claim of the reference answer."""

    name: ClassVar[str] = "chunk_context_precision"
    description: ClassVar[str] = "share of the chunks that entail a reference claim"

    def measure(self, matrix: EntailmentMatrix, diagnosis: Diagnosis) -> MetricResult:
        ranks = [k + 1 for k, relevant in enumerate(diagnosis.relevant) if relevant]
        reason = f"{len(ranks)} of {matrix.chunks} chunks entail a reference claim"
        reason += f" (ranks {ranks})" if ranks else ""
        chunks = [
            {
                "rank": k + 1,
                "relevant": relevant,
                "reference_claims": [
                    claim.id
                    for claim, found in zip(
                        matrix.reference_claims, diagnosis.reference_chunks, strict=True
                    )
                    if k in found
                ],
            }
            for k, relevant in enumerate(diagnosis.relevant)
        ]
        return scored(self, len(ranks) / matrix.chunks, reason, details={"chunks": chunks})


class ContextUtilization(_Diagnostic):
    """Of the reference claims the chunks entail, the share the response states."""

    name: ClassVar[str] = "context_utilization"
    description: ClassVar[str] = (
        "share of the reference claims the chunks hold that the response states"
    )

    def measure(self, matrix: EntailmentMatrix, diagnosis: Diagnosis) -> MetricResult:
        held = [j for j, chunks in enumerate(diagnosis.reference_chunks) if chunks]
        details = {"reference_claims": _reference_details(matrix, diagnosis)}
        if not held:
            return not_applicable(
                self,
                "no chunk entails a reference claim: nothing retrieved to use",
                details=details,
            )
        used = [j for j in held if diagnosis.stated[j]]
        reason = (
            f"{len(used)} of {len(held)} reference claims the chunks entail are in the response"
        )
        unused = [matrix.reference_claims[j] for j in held if not diagnosis.stated[j]]
        if unused:
            reason += "; left out: " + _quoted(unused)
        return scored(self, len(used) / len(held), reason, details=details)


class _ResponseShare(_Diagnostic):
    """Share of the response's claims in one class (`Diagnosis.category`)."""

    category: ClassVar[str]
    label: ClassVar[str]
    """How a claim of the class is named in the reason."""

    def measure(self, matrix: EntailmentMatrix, diagnosis: Diagnosis) -> MetricResult:
        claims = matrix.response_claims
        if not claims:
            return not_applicable(self, "the response has no claims")
        classes = [diagnosis.category(i) for i in range(len(claims))]
        weights = {c.id: float(k == self.category) for c, k in zip(claims, classes, strict=True)}
        hits = [i for i, k in enumerate(classes) if k == self.category]
        reason = f"{len(hits)} of {len(claims)} response claims {self.label}"
        if hits:
            reason += ": " + _listed(
                [_quote(claims[i].text) + _chunks(diagnosis.response_chunks[i]) for i in hits]
            )
        details = {
            c.id: {
                "text": c.text,
                "class": k,
                "correct": diagnosis.correct[i],
                "chunks": [r + 1 for r in diagnosis.response_chunks[i]],
            }
            for i, (c, k) in enumerate(zip(claims, classes, strict=True))
        }
        return scored(
            self,
            len(hits) / len(claims),
            reason,
            claim_weights=weights,
            details={"claims": details},
        )


class NoiseSensitivityRelevant(_ResponseShare):
    """Share of the response's claims that are incorrect yet entailed by a relevant chunk."""

    name: ClassVar[str] = "noise_sensitivity_relevant"
    description: ClassVar[str] = (
        "share of response claims that are incorrect and entailed by a relevant chunk "
        "(lower is better)"
    )
    higher_is_better: ClassVar[bool] = False
    category: ClassVar[str] = RELEVANT_NOISE
    label: ClassVar[str] = "incorrect, taken from a relevant chunk"

    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """A sample passes when its share is at most this; 0 means no such claim at all."""


class NoiseSensitivityIrrelevant(_ResponseShare):
    """Share of the response's claims that are incorrect and entailed only by irrelevant chunks."""

    name: ClassVar[str] = "noise_sensitivity_irrelevant"
    description: ClassVar[str] = (
        "share of response claims that are incorrect and entailed only by irrelevant chunks "
        "(lower is better)"
    )
    higher_is_better: ClassVar[bool] = False
    category: ClassVar[str] = IRRELEVANT_NOISE
    label: ClassVar[str] = "incorrect, taken from irrelevant chunks only"

    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """A sample passes when its share is at most this; 0 means no such claim at all."""


class ReferenceHallucination(_ResponseShare):
    """Share of the response's claims that are incorrect and entailed by no chunk."""

    name: ClassVar[str] = "reference_hallucination"
    description: ClassVar[str] = (
        "share of response claims that are incorrect and entailed by no chunk (lower is better)"
    )
    higher_is_better: ClassVar[bool] = False
    needs_chunks: ClassVar[bool] = False
    category: ClassVar[str] = HALLUCINATION
    label: ClassVar[str] = "incorrect, and in no chunk"

    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    """A sample passes when its share is at most this; 0 means no such claim at all."""


class SelfKnowledge(_ResponseShare):
    """Share of the response's claims that are correct though no chunk entails them."""

    name: ClassVar[str] = "self_knowledge"
    description: ClassVar[str] = (
        "share of response claims that are correct and entailed by no chunk"
    )
    needs_chunks: ClassVar[bool] = False
    category: ClassVar[str] = SELF_KNOWLEDGE
    label: ClassVar[str] = "correct, though in no chunk"
    # Read as lower-is-better (an answer that keeps to its sources, as VERA's faithfulness
    # wants) with a threshold of 1, so no sample fails on it and `--threshold`, which moves
    # the higher-is-better marks, never makes it fail a run: whether an answer should go
    # beyond its chunks depends on the application.
    higher_is_better: ClassVar[bool] = False

    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    """1 by default, so every sample passes: the share is reported for the reader to judge."""


def _reference_details(matrix: EntailmentMatrix, diagnosis: Diagnosis) -> dict[str, Any]:
    return {
        claim.id: {
            "text": claim.text,
            "chunks": [k + 1 for k in diagnosis.reference_chunks[j]],
            "in_response": diagnosis.stated[j],
        }
        for j, claim in enumerate(matrix.reference_claims)
    }


def _quoted(claims: Sequence[Claim]) -> str:
    return _listed([_quote(c.text) for c in claims])


def _listed(items: Sequence[str]) -> str:
    shown = list(items[:_QUOTED_CLAIMS])
    if len(items) > _QUOTED_CLAIMS:
        shown.append(f"and {len(items) - _QUOTED_CLAIMS} more")
    return ", ".join(shown)


def _chunks(positions: Sequence[int]) -> str:
    if not positions:
        return ""
    ranks = ", ".join(str(k + 1) for k in positions)
    return f" (chunk {ranks})" if len(positions) == 1 else f" (chunks {ranks})"


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 1].rstrip() + "…"
    return f"'{text}'"
