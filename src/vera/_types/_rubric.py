"""Rubrics: criteria in plain words, the checklist of yes/no items they become, and the judge's
verdict with evidence on each item.

Plain data shared by the judge that writes and answers a checklist (`vera.judges`), the
analysis that asks for it and the rubric metric that scores it (`vera.metrics.Rubric`).
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

RubricScope = Literal["answer", "claim"]


class RubricVerdict(StrEnum):
    """The judge's answer on one item: met, not met, or the item does not apply here."""

    MET = "MET"
    NOT_MET = "NOT_MET"
    NOT_APPLICABLE = "NOT_APPLICABLE"


class RubricItem(BaseModel):
    """One yes/no question of a checklist. `weight` is its share in the score; `reference`
    items are judged with the sample's expected answer in view."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0.0, allow_inf_nan=False)
    reference: bool = False

    @field_validator("id", "text")
    @classmethod
    def _stripped(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class Checklist(BaseModel):
    """A rubric's items, and where they came from: `fingerprint` names the exact checklist a
    run used (the criteria, the model and prompt version that wrote it, or the items a person
    wrote), so a report says which one its scores read."""

    model_config = ConfigDict(frozen=True)

    name: str
    scope: RubricScope = "answer"
    items: tuple[RubricItem, ...]
    fingerprint: str
    written_by: str = "user"
    """"user" for items given with the rubric (a person's, or VERA's own for
    `goal_completion`), else the "provider:model" that wrote them."""
    prompt_version: str | None = None

    @classmethod
    def of_items(cls, name: str, items: tuple[RubricItem, ...], scope: RubricScope) -> Checklist:
        """The checklist of items a person wrote, fingerprinted by `items_fingerprint`."""
        return cls(name=name, scope=scope, items=items, fingerprint=items_fingerprint(items, scope))


def items_fingerprint(items: tuple[RubricItem, ...], scope: RubricScope) -> str:
    """The fingerprint of items a person wrote: their texts, weights and scope."""
    payload = {"scope": scope, "items": [item.model_dump() for item in items]}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class RubricRequest(BaseModel):
    """What a judge is asked for one rubric on one sample: the checklist, the answer, its
    claims (scope "claim"), the contexts, the query and, for reference items, the expected
    answer."""

    model_config = ConfigDict(frozen=True)

    checklist: Checklist
    answer: str
    query: str = ""
    contexts: tuple[str, ...] = ()
    claims: tuple[tuple[str, str], ...] = ()
    """(claim id, claim text) pairs, judged one by one against every item (scope "claim")."""
    reference: str | None = None


class ItemVerdict(BaseModel):
    """The judge's verdict on one item (for one claim, in scope "claim"), with the evidence:
    a quote from the answer or a context, and a short reason."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    verdict: RubricVerdict
    claim_id: str | None = None
    quote: str = ""
    reason: str = ""
    quote_found: bool | None = None
    """Whether the quote occurs in the texts the judge was shown (None: no quote); a quote
    found nowhere is the judge's invention, flagged in the result."""


class RubricAnswers(BaseModel):
    """One rubric's verdicts on one sample, with the checklist they answer."""

    model_config = ConfigDict(frozen=True)

    checklist: Checklist
    verdicts: tuple[ItemVerdict, ...]
