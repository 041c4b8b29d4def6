"""Claims and the verdicts judges give on them: what every judge writes and every metric reads.

Every type here is a frozen pydantic model, so a value can be shared between concurrent tasks
and metrics without copies.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vera._types._errors import JudgeResponseError

# Seed 001's bar for an entailment probability to count as support. It is a fact about
# verdicts, not about one metric or judge: the NLI judge decides by it and the grounding
# metrics count by it, so it lives here, below both.
DEFAULT_MIN_ENTAILMENT = 0.70


class Verdict(StrEnum):
    """How well the retrieved context supports one claim."""

    FULLY_SUPPORTED = "FULLY_SUPPORTED"
    PARTIALLY_SUPPORTED = "PARTIALLY_SUPPORTED"
    NO_EVIDENCE = "NO_EVIDENCE"
    CONTRADICTED = "CONTRADICTED"

    @property
    def unsupported(self) -> bool:
        """NO_EVIDENCE or CONTRADICTED: the judge's own word that the contexts do not support
        the claim, which no probability of support it also gives overrides."""
        return self in (Verdict.NO_EVIDENCE, Verdict.CONTRADICTED)

    @classmethod
    def parse(cls, value: object) -> Verdict:
        """Read any spelling the judges of RAGAS, DeepEval, Axion and RagaliQ use.

        Case, spaces, hyphens and underscores do not matter. DeepEval's "no" means the context
        contradicts the claim and "idk" that it says nothing, so they map to CONTRADICTED and
        NO_EVIDENCE. Booleans are read as supported / no evidence. Anything else raises
        `JudgeResponseError` rather than guessing.
        """
        if isinstance(value, Verdict):
            return value
        if isinstance(value, bool):
            return cls.FULLY_SUPPORTED if value else cls.NO_EVIDENCE
        if not isinstance(value, str):
            raise JudgeResponseError(f"verdict must be a string, got {type(value).__name__}")
        key = "_".join(value.strip().upper().replace("-", " ").replace("_", " ").split())
        try:
            return _VERDICT_SPELLINGS[key]
        except KeyError:
            known = ", ".join(v.value for v in cls)
            raise JudgeResponseError(
                f"unknown verdict {value!r}; expected one of {known}"
            ) from None


_VERDICT_SPELLINGS: dict[str, Verdict] = {
    **{v.value: v for v in Verdict},
    "SUPPORTED": Verdict.FULLY_SUPPORTED,
    "FULLY": Verdict.FULLY_SUPPORTED,
    "YES": Verdict.FULLY_SUPPORTED,
    "ENTAILED": Verdict.FULLY_SUPPORTED,
    "ENTAILMENT": Verdict.FULLY_SUPPORTED,
    "PARTIALLY": Verdict.PARTIALLY_SUPPORTED,
    "PARTIAL": Verdict.PARTIALLY_SUPPORTED,
    "PARTIALLY_SUPPORTED": Verdict.PARTIALLY_SUPPORTED,
    "NOT_ENOUGH_INFO": Verdict.NO_EVIDENCE,
    "NOT_ENOUGH_INFORMATION": Verdict.NO_EVIDENCE,
    "NOT_SUPPORTED": Verdict.NO_EVIDENCE,
    "UNSUPPORTED": Verdict.NO_EVIDENCE,
    "NO_EVIDENCE": Verdict.NO_EVIDENCE,
    "NEUTRAL": Verdict.NO_EVIDENCE,
    "IDK": Verdict.NO_EVIDENCE,
    "CONTRADICTORY": Verdict.CONTRADICTED,
    "CONTRADICTS": Verdict.CONTRADICTED,
    "CONTRADICTION": Verdict.CONTRADICTED,
    "NO": Verdict.CONTRADICTED,
}

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Claim(BaseModel):
    """One atomic statement taken from a response.

    `span` is the claim's (start, end) character offsets in the response, where the judge can
    tell; an LLM that rephrases a claim cannot, and leaves it None.
    """

    model_config = _FROZEN

    id: str
    text: str
    span: tuple[int, int] | None = None
    traceable: bool | None = None
    """Whether the claim can come from the response (it has a span, or shares a content word
    with it); False flags a claim an LLM judge made up. None where not checked (judges that
    take their claims from the response's own sentences)."""

    def __init__(
        self,
        id: str,
        text: str,
        span: tuple[int, int] | None = None,
        *,
        traceable: bool | None = None,
    ) -> None:
        super().__init__(id=id, text=text, span=span, traceable=traceable)


class ClaimVerdict(BaseModel):
    """A judge's decision on one claim, with the evidence it rests on."""

    model_config = _FROZEN

    claim_id: str
    verdict: Verdict
    evidence: str = ""
    context_index: int | None = None
    reason: str = ""
    quote_found: bool | None = None
    """Whether `evidence` was found verbatim in the cited context; None where not checked.
    False flags a quote the judge invented."""
    agreement: float | None = None
    """With several draws of the judge, the share that gave this verdict; None with one."""
    entailment: float | None = Field(default=None, ge=0.0, le=1.0)
    """The probability that the context entails the claim, from judges that give one (NLI)."""

    def __init__(
        self,
        claim_id: str,
        verdict: Verdict | str,
        evidence: str = "",
        context_index: int | None = None,
        reason: str = "",
        *,
        quote_found: bool | None = None,
        agreement: float | None = None,
        entailment: float | None = None,
    ) -> None:
        super().__init__(
            claim_id=claim_id,
            verdict=Verdict.parse(verdict),
            evidence=evidence,
            context_index=context_index,
            reason=reason,
            quote_found=quote_found,
            agreement=agreement,
            entailment=entailment,
        )


class Relevance(StrEnum):
    """How relevant a text (a retrieved context, or the response) is to the query."""

    RELEVANT = "RELEVANT"
    PARTIALLY_RELEVANT = "PARTIALLY_RELEVANT"
    IRRELEVANT = "IRRELEVANT"

    @property
    def weight(self) -> float:
        """1, 0.5 or 0: what the relevance metrics average."""
        return _RELEVANCE_WEIGHTS[self]

    @classmethod
    def parse(cls, value: object) -> Relevance:
        """Read a judge's relevance label; case, spaces and hyphens do not matter."""
        if isinstance(value, Relevance):
            return value
        if isinstance(value, bool):
            return cls.RELEVANT if value else cls.IRRELEVANT
        if isinstance(value, str):
            key = "_".join(value.strip().upper().replace("-", " ").replace("_", " ").split())
            found = _RELEVANCE_SPELLINGS.get(key)
            if found is not None:
                return found
        known = ", ".join(r.value for r in cls)
        raise JudgeResponseError(f"unknown relevance {value!r}; expected one of {known}")


_RELEVANCE_WEIGHTS = {
    Relevance.RELEVANT: 1.0,
    Relevance.PARTIALLY_RELEVANT: 0.5,
    Relevance.IRRELEVANT: 0.0,
}
_RELEVANCE_SPELLINGS: dict[str, Relevance] = {
    **{r.value: r for r in Relevance},
    "YES": Relevance.RELEVANT,
    "PARTIAL": Relevance.PARTIALLY_RELEVANT,
    "PARTIALLY": Relevance.PARTIALLY_RELEVANT,
    "SOMEWHAT_RELEVANT": Relevance.PARTIALLY_RELEVANT,
    "NOT_RELEVANT": Relevance.IRRELEVANT,
    "NO": Relevance.IRRELEVANT,
}


class RelevanceVerdict(BaseModel):
    """A judge's decision on how relevant one text is to the query, with its reason."""

    model_config = _FROZEN

    relevance: Relevance
    reason: str = ""

    @field_validator("relevance", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Relevance:
        try:
            return Relevance.parse(value)
        except JudgeResponseError as exc:
            raise ValueError(str(exc)) from None
