"""A user-defined metric in about twenty lines: the share of claims that quote a number.

Run it: python docs/examples/custom_metric.py
"""

from typing import ClassVar

import vera
from vera.metrics import (
    ClaimAnalysis,
    MetricResult,
    MetricStatus,
    Need,
    not_applicable,
    register_metric,
    scored,
)


@register_metric  # now `vera eval -m numeric_claims` knows it too, once this module is imported
class NumericClaims:
    name: ClassVar[str] = "numeric_claims"
    description: ClassVar[str] = "share of the response's claims that state a number"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})  # shares the claim analysis
    higher_is_better: ClassVar[bool] = True
    threshold: float = 0.0

    def score(self, sample: vera.Sample, analysis: ClaimAnalysis) -> MetricResult:
        if not analysis.claims:
            return not_applicable(self, "no claims")
        numeric = {c.id: float(any(ch.isdigit() for ch in c.text)) for c in analysis.claims}
        share = sum(numeric.values()) / len(numeric)
        reason = f"{sum(numeric.values()):.0f} of {len(numeric)} claims state a number"
        return scored(self, share, reason, claim_weights=numeric, status=MetricStatus.OK)


if __name__ == "__main__":
    report = vera.evaluate(vera.load_dataset("example"), ["faithfulness", NumericClaims()])
    print({name: round(mean, 3) for name, mean in report.metrics.items() if mean is not None})
