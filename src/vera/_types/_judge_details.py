"""The report's `judge_details`, typed: what the judge said of itself, and what the run found of
its verdicts.

The judge's own description (`vera.judges.JudgeDescription.to_details`) gives the mode, draws,
temperature, prompt versions and model usage, plus what is particular to one kind of judge (a
cascade's routing counts and its second judge's details, an NLI model's labels): those stay
open, as extra keys. The run adds the draws' agreement and the two evidence checks.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView
from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer


class DrawAgreement(BaseModel):
    """How often a judge's several draws (`--judge-samples`) agreed on a claim's verdict."""

    model_config = ConfigDict(frozen=True)

    claims: int
    """Claims drawn more than once."""
    mean: float
    """The mean share of draws that gave the chosen verdict."""
    unanimous: float
    """The share of those claims on which every draw agreed."""


class QuoteCheck(BaseModel):
    """Supported verdicts whose quote the cited context does not hold."""

    model_config = ConfigDict(frozen=True)

    supported: int
    """Supported verdicts whose quote was not found."""
    claims: int
    """Supported verdicts whose quote was checked."""


class EvidenceCount(BaseModel):
    """Claims that share no word with the response they were extracted from."""

    model_config = ConfigDict(frozen=True)

    untraceable: int
    claims: int
    """Claims traced."""


_FIRST = ("mode", "samples", "temperature", "prompt_versions")
_LAST = ("usage", "agreement", "quotes_not_found", "untraceable_claims")


class JudgeDetails(BaseModel):
    """What a report says of its judge; each part absent where the judge or run has none.

    Keys particular to one kind of judge are kept as they came (extra keys). Written in the
    order the judge and the run give them; `details["usage"]`, `.get("usage")` and `items()`
    read the JSON-shaped values, for code written when this was a dict."""

    model_config = ConfigDict(frozen=True, extra="allow")

    mode: str | None = None
    samples: int | None = None
    """Draws per claim."""
    temperature: float | None = None
    prompt_versions: dict[str, str] | None = None
    usage: dict[str, Any] | None = None
    """Calls, tokens and cost, as the judge's model ledger sums them (its shape is the
    judge's: `vera.judges.JudgeDescription.usage`)."""
    agreement: DrawAgreement | None = None
    quotes_not_found: QuoteCheck | None = None
    untraceable_claims: EvidenceCount | None = None

    @model_serializer(mode="wrap")
    def _in_order(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        extras = [key for key in data if key not in _FIRST and key not in _LAST]
        return {
            key: data[key]
            for key in (*_FIRST, *extras, *_LAST)
            if key in data and (key in extras or data[key] is not None)
        }

    def _plain(self) -> dict[str, Any]:
        plain: dict[str, Any] = self.model_dump()
        return plain

    def __getitem__(self, key: str) -> Any:
        return self._plain()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._plain()

    def get(self, key: str, default: Any = None) -> Any:
        """The part `key` as plain data, or `default` where there is none."""
        return self._plain().get(key, default)

    def keys(self) -> KeysView[str]:
        """The parts there are, in the order they are written (so `{**details}` works)."""
        return self._plain().keys()

    def items(self) -> ItemsView[str, Any]:
        """Each part as plain data, in the order they are written."""
        return self._plain().items()
