"""The learned part of the offline judge: a logistic model from a claim's alignment features
(`features.py`) to the probability that the contexts support it.

The weights ship in the package as `support_model.json`, with the thresholds chosen on
RAGTruth dev data and the figures measured there; `training/verifier/train_features.py`
writes that file. Inference is a dot product: no torch, no download, no network.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from vera.judges._offline._features import FEATURES

# The default judge's cut-off for a model card written before it had its own.
_PARTIAL_CUT = 0.88


@dataclass(frozen=True, slots=True)
class SupportModel:
    """P(supported) = 1 - sigmoid(w . (x - mean) / scale + b), with the thresholds to use."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    min_support: float
    partial_probability: float
    partial_cut: float = _PARTIAL_CUT
    """The least probability at which the default `offline` judge lifts a claim the words leave
    short to PARTIALLY_SUPPORTED (`lexical_support.py`)."""

    @classmethod
    def read(cls, path: Path) -> SupportModel:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(
                f"{path} was trained on features {data['features']}, but this VERA computes "
                f"{list(FEATURES)}; retrain it with training/verifier/train_features.py"
            )
        return cls(
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) or 1.0 for v in data["scale"]),
            weights=tuple(float(v) for v in data["weights"]),
            intercept=float(data["intercept"]),
            min_support=float(data["thresholds"]["min_support"]),
            partial_probability=float(data["thresholds"]["partial_probability"]),
            partial_cut=float(data["thresholds"].get("partial_cut", _PARTIAL_CUT)),
        )

    def support(self, features: Sequence[float]) -> float:
        """The probability that a claim with these feature values is supported."""
        z = self.intercept + sum(
            w * (x - m) / s
            for w, x, m, s in zip(self.weights, features, self.mean, self.scale, strict=True)
        )
        return 1.0 - _sigmoid(z)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def shipped_path() -> Path:
    """Where the package keeps the shipped weights."""
    return Path(str(resources.files("vera.judges._offline") / "support_model.json"))


@lru_cache(maxsize=8)
def load_model(path: Path | None = None) -> SupportModel:
    """The model in `path` (default: the shipped one), read once per process."""
    return SupportModel.read(path or shipped_path())
