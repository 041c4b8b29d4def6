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

The score is the same formula for every judge, whatever else it gives: a judge that gives
claims a probability of support (`ClaimVerdict.entailment`: the offline judges, NLI judges, a
cascade) expresses it through its verdicts, by the cut-offs docs/metrics.md lists, and through
its own metric, `faithfulness_probability` (the probability that every claim is supported),
which ranks responses; two runs with different judges thus read `faithfulness` alike.

Whatever the configuration, each result also carries, as sub-scores, the lenient score
(ratio, so the default score itself), the strict score (weighted + strict_mode) and the
contradiction rate (share of claims CONTRADICTED), so the report shows them side by side; the
score always lies between the strict and the lenient one unless `verdict_scores` sets weights
outside them. `claim_weights` holds what each claim contributed (its weight). The score is
always VERA's arithmetic over the verdicts, never a number a model produced for the whole
response.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from vera._text._quote import quote_claim
from vera._types import Sample, Verdict
from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera.metrics._base import MetricOptions, scored

RATIO_WEIGHTS: dict[Verdict, float] = {
    Verdict.FULLY_SUPPORTED: 1.0,
    Verdict.PARTIALLY_SUPPORTED: 0.5,
    Verdict.NO_EVIDENCE: 0.0,
    Verdict.CONTRADICTED: 0.0,
}
_WEIGHTED: dict[Verdict, float] = {**RATIO_WEIGHTS, Verdict.CONTRADICTED: -1.0}
_STRICT: dict[Verdict, float] = {**_WEIGHTED, Verdict.NO_EVIDENCE: -1.0}


class Faithfulness(MetricOptions):
    """Share of a response's claims that the retrieved context supports: the clamped mean of
    their verdicts' weights, for every judge."""

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

    @model_validator(mode="before")
    @classmethod
    def _refuse_by_probability(cls, data: Any) -> Any:
        # Removed, not ignored: a config that still asks for the product must not silently get
        # the mean under the same name.
        if isinstance(data, dict) and "by_probability" in data:
            raise ValueError(
                "faithfulness no longer takes by_probability: it is the mean of verdict weights "
                "for every judge; the probability that every claim is supported is its own "
                "metric, faithfulness_probability (-m faithfulness_probability); remove "
                "by_probability from the faithfulness options"
            )
        return data

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
        base = dict(RATIO_WEIGHTS if self.scoring == "ratio" else _WEIGHTED)
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
            "lenient": _clamped_mean(RATIO_WEIGHTS[v] for v in verdicts),
            "strict": _clamped_mean(_STRICT[v] for v in verdicts),
            "contradiction_rate": verdicts.count(Verdict.CONTRADICTED) / len(verdicts),
        }
        claim_weights = {v.claim_id: weights[v.verdict] for v in analysis.verdicts}
        return scored(
            self,
            _clamped_mean(claim_weights.values()),
            _reason(analysis),
            claim_weights=claim_weights,
            sub_scores=sub_scores,
        )


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
        f"{quote_claim(claim.text)} ({verdict.verdict.value})"
        for claim, verdict in zip(analysis.claims, analysis.verdicts, strict=True)
        if verdict.verdict.unsupported
    ]
    if unsupported:
        reason += "; unsupported: " + ", ".join(unsupported)
    return reason
