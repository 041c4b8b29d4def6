"""RAGChecker's claim-by-chunk entailment matrix for one sample: what its diagnostic metrics read.

The response's claims and the reference answer's claims are each judged against every retrieved
chunk on its own (not against the chunks together, as `ClaimAnalysis.verdicts` are), so a metric
can tell which chunk, if any, entails a claim. Beside the chunk columns it carries each response
claim judged against the reference answer (is the claim correct?) and each reference claim
judged against the response (did the response state it?).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vera._types._claims import Claim, ClaimVerdict


class EntailmentMatrix(BaseModel):
    """One sample's claims-by-chunks verdicts, with the two answers checked against each other.

    `response_in_chunks[i][k]` is response claim i judged against chunk k alone;
    `reference_in_chunks[j][k]` the same for reference claim j. Rows follow the claims' order and
    every row has one verdict per chunk, in retrieval order; construction refuses any other
    shape, so a metric can index the matrix without checking it.
    """

    model_config = ConfigDict(frozen=True)

    chunks: int = Field(ge=0)
    """How many chunks (retrieved contexts) the sample has: the width of every row."""
    response_claims: tuple[Claim, ...]
    reference_claims: tuple[Claim, ...]
    response_in_chunks: tuple[tuple[ClaimVerdict, ...], ...]
    reference_in_chunks: tuple[tuple[ClaimVerdict, ...], ...]
    response_in_reference: tuple[ClaimVerdict, ...]
    """Each response claim against the reference answer: a supported one is correct."""
    reference_in_response: tuple[ClaimVerdict, ...]
    """Each reference claim against the response: a supported one is stated by the response."""

    @model_validator(mode="after")
    def _check_shape(self) -> EntailmentMatrix:
        _check_rows("response", self.response_claims, self.response_in_chunks, self.chunks)
        _check_rows("reference", self.reference_claims, self.reference_in_chunks, self.chunks)
        _check_column("response_in_reference", self.response_claims, self.response_in_reference)
        _check_column("reference_in_response", self.reference_claims, self.reference_in_response)
        return self


def _check_rows(
    side: str,
    claims: Sequence[Claim],
    rows: Sequence[Sequence[ClaimVerdict]],
    chunks: int,
) -> None:
    if len(rows) != len(claims):
        raise ValueError(f"{len(rows)} {side} rows for {len(claims)} {side} claims")
    for claim, row in zip(claims, rows, strict=True):
        if len(row) != chunks:
            raise ValueError(
                f"{side} claim {claim.id!r} has {len(row)} verdicts for {chunks} chunks"
            )
        if any(v.claim_id != claim.id for v in row):
            raise ValueError(f"the row of {side} claim {claim.id!r} holds another claim's verdict")


def _check_column(name: str, claims: Sequence[Claim], verdicts: Sequence[ClaimVerdict]) -> None:
    if [v.claim_id for v in verdicts] != [c.id for c in claims]:
        raise ValueError(f"{name} must hold one verdict per claim, in claim order")
