"""Faithfulness: how much of a response the retrieved context supports.

    score = clamp(mean(weight(verdict) for each claim), 0, 1)

| verdict             | ratio (default) | weighted | weighted + strict_mode |
|---------------------|-----------------|----------|------------------------|
| FULLY_SUPPORTED     | 1.0             | 1.0      | 1.0                    |
| PARTIALLY_SUPPORTED | 0.5             | 0.5      | 0.5                    |
| NO_EVIDENCE         | 0.0             | 0.0      | -1.0                   |
| CONTRADICTED        | 0.0             | -1.0     | -1.0                   |

`verdict_scores` overrides any weight. A response with no claims is vacuously faithful: 1.0
with status NO_CLAIMS.

Where the judge gives claims a probability of support (`ClaimVerdict.entailment`:
both offline judges, NLI judges, a cascade's offline verdicts), the score is instead the
probability that every claim is supported:

    score = product(p(claim) for each claim)

with a claim's p its probability, or for a claim without one its verdict's weight above,
clamped to [0, 1]. A mean forgets how many claims could be wrong and which one is weakest; the
product keeps both, so one doubtful claim or many slightly doubtful ones pull the response
down, and the default threshold, 0.5, fails a response that more likely than not holds an
unsupported claim. On RAGTruth dev this ranks unfaithful answers better than the mean of
verdict weights or of probabilities (docs/metrics.md). `by_probability=False` keeps the mean
for every judge.

Whatever the configuration, each result also carries, as sub-scores, the lenient score
(ratio), the strict score (weighted + strict_mode) and the contradiction rate (share of claims
CONTRADICTED), so the report shows them side by side, and `claim_weights` holds what each
claim contributed (its weight, or its probability). The score is always VERA's arithmetic over
the verdicts, never a number a model produced for the whole response.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from vera.metrics.base import (
    ClaimAnalysis,
    MetricOptions,
    MetricResult,
    MetricStatus,
    Need,
    scored,
)
from vera.types import ClaimVerdict, Sample, Verdict

__all__ = ["Faithfulness"]

_RATIO: dict[Verdict, float] = {
    Verdict.FULLY_SUPPORTED: 1.0,
    Verdict.PARTIALLY_SUPPORTED: 0.5,
    Verdict.NO_EVIDENCE: 0.0,
    Verdict.CONTRADICTED: 0.0,
}
_WEIGHTED: dict[Verdict, float] = {**_RATIO, Verdict.CONTRADICTED: -1.0}
_STRICT: dict[Verdict, float] = {**_WEIGHTED, Verdict.NO_EVIDENCE: -1.0}
_QUOTE_LIMIT = 60


class Faithfulness(MetricOptions):
    """Share of a response's claims that the retrieved context supports; with a judge that
    gives each claim a probability of support, the probability that all of them are."""

    name: ClassVar[str] = "faithfulness"
    description: ClassVar[str] = "share of the response's claims the retrieved context supports"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = True

    scoring: Literal["ratio", "weighted"] = "ratio"
    """"ratio": unsupported claims count 0; "weighted": seed 002's signed weights."""
    strict_mode: bool = False
    """With scoring="weighted", NO_EVIDENCE counts -1 like a contradiction."""
    verdict_scores: dict[Verdict, float] = Field(default_factory=dict)
    """Weight overrides by verdict; any spelling `Verdict.parse` reads is accepted as a key."""
    by_probability: bool = True
    """Where the judge gives claims a probability of support, score the probability that
    every claim is supported; False: the mean of verdict weights whatever the judge."""

    @field_validator("verdict_scores", mode="before")
    @classmethod
    def _parse_verdict_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {Verdict.parse(k): v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _strict_needs_weighted(self) -> Faithfulness:
        if self.strict_mode and self.scoring != "weighted":
            raise ValueError(
                "strict_mode changes the weighted scheme (NO_EVIDENCE counts -1); "
                "use Faithfulness(scoring='weighted', strict_mode=True)"
            )
        return self

    def weights(self) -> dict[Verdict, float]:
        """The weight of each verdict under this configuration."""
        base = dict(_RATIO if self.scoring == "ratio" else _WEIGHTED)
        if self.strict_mode:
            base[Verdict.NO_EVIDENCE] = -1.0
        return {**base, **self.verdict_scores}

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        """Score one sample from its claim verdicts."""
        if not analysis.claims:
            return scored(
                self,
                1.0,
                "no claims to verify; vacuously faithful",
                status=MetricStatus.NO_CLAIMS,
                sub_scores={"lenient": 1.0, "strict": 1.0, "contradiction_rate": 0.0},
            )
        weights = self.weights()
        verdicts = [v.verdict for v in analysis.verdicts]
        sub_scores = {
            "lenient": _clamped_mean(_RATIO[v] for v in verdicts),
            "strict": _clamped_mean(_STRICT[v] for v in verdicts),
            "contradiction_rate": verdicts.count(Verdict.CONTRADICTED) / len(verdicts),
        }
        # One probability is enough: a cascade leaves the claims it sent to its LLM without one,
        # and their verdict weights (1, 0.5, 0) read as probabilities in the same product.
        if self.by_probability and any(v.entailment is not None for v in analysis.verdicts):
            claim_weights = {v.claim_id: _probability(v, weights) for v in analysis.verdicts}
            probability = math.prod(claim_weights.values())
            reason = _reason(analysis) + "; " + _probability_reason(analysis, claim_weights)
            return scored(
                self, probability, reason, claim_weights=claim_weights, sub_scores=sub_scores
            )
        claim_weights = {v.claim_id: weights[v.verdict] for v in analysis.verdicts}
        return scored(
            self,
            _clamped_mean(claim_weights.values()),
            _reason(analysis),
            claim_weights=claim_weights,
            sub_scores=sub_scores,
        )


def _probability(verdict: ClaimVerdict, weights: dict[Verdict, float]) -> float:
    """A claim's probability of support: the judge's, else its verdict's weight read as one."""
    if verdict.entailment is not None:
        return verdict.entailment
    return min(1.0, max(0.0, weights[verdict.verdict]))


def _probability_reason(analysis: ClaimAnalysis, probabilities: dict[str, float]) -> str:
    """The product in words, naming the claim that pulls it down most."""
    reason = f"P(every claim supported) = {math.prod(probabilities.values()):.2f}"
    if len(probabilities) > 1:
        # Claim and verdict ids pair up one to one (the runner enforces it).
        weakest = min(analysis.claims, key=lambda c: probabilities[c.id])
        reason += f", least supported {_quote(weakest.text)} ({probabilities[weakest.id]:.2f})"
    return reason


def _clamped_mean(values: Iterable[float]) -> float:
    items = list(values)
    return min(1.0, max(0.0, sum(items) / len(items)))


def _reason(analysis: ClaimAnalysis) -> str:
    verdicts = [v.verdict for v in analysis.verdicts]
    full = verdicts.count(Verdict.FULLY_SUPPORTED)
    partial = verdicts.count(Verdict.PARTIALLY_SUPPORTED)
    reason = f"{full} of {len(verdicts)} claims supported"
    if partial:
        reason += f", {partial} partially"
    unsupported = [
        f"{_quote(claim.text)} ({verdict.verdict.value})"
        for claim, verdict in zip(analysis.claims, analysis.verdicts, strict=True)
        if verdict.verdict.unsupported
    ]
    if unsupported:
        reason += "; unsupported: " + ", ".join(unsupported)
    return reason


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 1].rstrip() + "…"
    return f"'{text}'"
