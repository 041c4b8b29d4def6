"""`OfflineJudge`: VERA's built-in judge, lexical and deterministic, with no model or network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from vera.judges.offline.claims import extract_claims
from vera.judges.offline.relevance import rate_relevance
from vera.judges.offline.verify import Settings, verify
from vera.types import Claim, ClaimVerdict, RelevanceVerdict

__all__ = ["OfflineJudge"]


class OfflineJudge:
    """A judge that needs nothing: no key, no network, no model download, no third-party code.

    Claims are the response's sentences, list items and independent clauses, with exact spans.
    Each claim is aligned with the one- or two-sentence context window that shares most of its
    content words (stemmed, stopwords dropped, numbers normalised), and that window is quoted as
    the evidence. A number or name that no context states, a negation flip or an antonym swap
    against a well-aligned window is a contradiction; otherwise the share of content words the
    window covers decides between full, partial and no support.

    It reads words, not meaning: paraphrases with no shared words look unsupported, and a
    claim assembled from a context's words in a different sense looks supported. Use an LLM
    judge where that matters; use this one for fast, free, reproducible runs and CI.

    Args:
        full_support: Share of the claim's content words the best window must contain for
            FULLY_SUPPORTED.
        partial_support: Share needed for PARTIALLY_SUPPORTED; below it the claim has
            NO_EVIDENCE.
        contradiction_alignment: Share of the claim's other content words a window must
            contain before a differing bare number, a different name, a negation flip or an
            antonym in it counts as CONTRADICTED rather than NO_EVIDENCE.
        number_alignment: The same share for numbers with a unit ("30 days" vs "60 days"),
            lower because the shared unit already ties the two quantities together.
        window_sentences: Most adjacent context sentences quoted together as evidence.

    Raises:
        ValueError: if a threshold is outside (0, 1], `partial_support` exceeds
            `full_support`, or `window_sentences` is below 1.
    """

    name: ClassVar[str] = "offline"

    def __init__(
        self,
        *,
        full_support: float = 0.8,
        partial_support: float = 0.5,
        contradiction_alignment: float = 0.6,
        number_alignment: float = 0.3,
        window_sentences: int = 2,
    ) -> None:
        thresholds = {
            "full_support": full_support,
            "partial_support": partial_support,
            "contradiction_alignment": contradiction_alignment,
            "number_alignment": number_alignment,
        }
        for label, value in thresholds.items():
            if not 0 < value <= 1:
                raise ValueError(f"{label} must be in (0, 1], got {value}")
        if partial_support > full_support:
            raise ValueError(
                f"partial_support ({partial_support}) must not exceed full_support ({full_support})"
            )
        if window_sentences < 1:
            raise ValueError(f"window_sentences must be at least 1, got {window_sentences}")
        self.settings = Settings(
            full_support=full_support,
            partial_support=partial_support,
            contradiction_alignment=contradiction_alignment,
            number_alignment=number_alignment,
            window_sentences=window_sentences,
        )

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"OfflineJudge(full_support={s.full_support}, partial_support={s.partial_support}, "
            f"contradiction_alignment={s.contradiction_alignment}, "
            f"number_alignment={s.number_alignment}, window_sentences={s.window_sentences})"
        )

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Split `response` into claims "c1", "c2", ... with exact spans; `query` is unused."""
        return extract_claims(response)

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order, each citing the context window it rests on."""
        return verify(claims, contexts, self.settings)

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        """How relevant each text is to `query`, by the query words it mentions."""
        return rate_relevance(query, texts)
