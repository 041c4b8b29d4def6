"""The report's comparison with baselines, typed: `BaselineComparison` and its
`MetricComparison`s.

The JSON keeps seed 001's flat block: each baseline's metric means under its name
("naive_rag"), beside `improvement_over_baseline` and `significance`, each keyed by
baseline. The model reads and writes that block, and gives the three parts as attributes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer, model_validator

SPECIAL_KEYS = ("improvement_over_baseline", "significance")
"""The block's keys that are not a baseline's name."""


class MetricComparison(BaseModel):
    """System minus baseline on one metric, over the samples both scored."""

    model_config = ConfigDict(frozen=True)

    system_mean: float | None
    baseline_mean: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    paired_samples: int
    improvement: str | None
    """Relative change of the mean, as seed 001 writes it ("+41.5%")."""


class BaselineComparison(BaseModel):
    """The run against each baseline, by the baseline's key ("naive_rag"). Validated from
    (and written as) seed 001's flat block, so build it with `model_validate(block)`."""

    model_config = ConfigDict(frozen=True)

    means: dict[str, dict[str, float | None]]
    """Each baseline's metric means."""
    improvement_over_baseline: dict[str, dict[str, str | None]]
    """Per baseline, each metric's relative change of the mean ("+41.5%"), seed 001's."""
    significance: dict[str, dict[str, MetricComparison]]
    """Per baseline, each metric's paired difference with its interval and p-value; a report
    written before these were stored has none."""

    @model_validator(mode="before")
    @classmethod
    def _from_block(cls, block: Any) -> Any:
        if not isinstance(block, dict):
            return block
        if any(not isinstance(value, dict) for value in block.values()):
            raise ValueError(
                "baseline_comparison holds a baseline's metric means, "
                "improvement_over_baseline and significance, each an object"
            )
        return {
            "means": {k: v for k, v in block.items() if k not in SPECIAL_KEYS},
            "improvement_over_baseline": block.get("improvement_over_baseline", {}),
            "significance": block.get("significance", {}),
        }

    @model_serializer(mode="wrap")
    def _to_block(self, handler: Any) -> dict[str, Any]:
        parts: dict[str, Any] = handler(self)
        return {
            **parts["means"],
            "improvement_over_baseline": parts["improvement_over_baseline"],
            "significance": parts["significance"],
        }

    def __getitem__(self, key: str) -> Any:
        """The block's `key` as plain data (`block["significance"]`), for code written when
        this was a dict."""
        plain: dict[str, Any] = self.model_dump()
        return plain[key]

    def comparison(self, baseline: str, metric: str) -> MetricComparison | None:
        """The stored paired comparison of `metric` against `baseline`, if there is one."""
        return self.significance.get(baseline, {}).get(metric)
