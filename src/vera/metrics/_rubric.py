"""Rubric metrics: criteria a user writes in plain words, checked as yes/no items with evidence,
scored by VERA's formula, never by a number the model chose.

    Rubric(name="no_legal_advice", criteria="Gives no legal advice.", scope="claim")

The criteria become a checklist once per run (the judge writes it at temperature 0, or the
user gives `items`), and the judge answers every item with MET, NOT_MET or NOT_APPLICABLE and a
quote. The score is the weighted share of applicable items met:

- scope "answer": sum of the weights of the items MET / sum of the weights of the items not
  NOT_APPLICABLE;
- scope "claim": the same over (claim, item) pairs, each pair weighing its item's weight; a
  claim that breaks any item is listed with the items it breaks.

No applicable item: not applicable. A judge that answers no rubric (the offline judge): not
applicable, with the reason. See docs/metrics.md.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vera._types import Sample
from vera._types._errors import ConfigError
from vera._types._results import ClaimAnalysis, MetricResult, MetricStatus, Need
from vera._types._rubric import (
    Checklist,
    ItemVerdict,
    RubricAnswers,
    RubricItem,
    RubricScope,
    RubricVerdict,
)
from vera.metrics._base import not_applicable
from vera.metrics._base import scored as _scored

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class Rubric(BaseModel):
    """A metric from criteria in plain words (or checklist items written by hand).

    Attributes:
        name: the metric's name in reports (letters, digits, "_").
        criteria: what a good answer does, in plain words; the judge turns it into items.
        items: the checklist itself, written (or edited) by you: then no call writes it.
        scope: "answer" (the whole answer) or "claim" (each claim against each item).
        applies_to: the sample categories it applies to (default: every sample).
        threshold: a sample passes at this score or above (default 1.0: every item met).
        reference: show the judge the sample's expected answer (`reference`), for items
            that compare with it; a sample without one is then not applicable.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: ClassVar[str] = (
        "weighted share of a rubric's applicable yes/no items the answer (or each claim) "
        "meets, from the judge's verdicts with evidence; inputs: response, contexts, query "
        "(reference where reference=true); needs an LLM judge"
    )
    higher_is_better: ClassVar[bool] = True
    needs: ClassVar[frozenset[Need]] = frozenset({Need.RUBRIC})

    name: str
    criteria: str = ""
    items: tuple[RubricItem, ...] = ()
    scope: RubricScope = "answer"
    applies_to: tuple[str, ...] = ()
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    reference: bool = False

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                f"rubric name {value!r} must start with a letter and hold only letters, "
                "digits and '_' (it names the metric in reports and gates)"
            )
        return value

    @model_validator(mode="after")
    def _has_something_to_check(self) -> Rubric:
        if not self.criteria.strip() and not self.items:
            raise ValueError(f"rubric {self.name!r} needs criteria or items")
        ids = [item.id for item in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"rubric {self.name!r} has two items with the same id")
        return self

    def checklist(self) -> Checklist | None:
        """The checklist of the items given; None where the judge writes it from the
        criteria."""
        if not self.items:
            return None
        return Checklist.of_items(self.name, self.items, self.scope)

    def applies(self, sample: Sample) -> bool:
        """Whether `sample` is of a category the rubric applies to."""
        return not self.applies_to or (sample.category or "") in self.applies_to

    def score(self, sample: Sample, analysis: ClaimAnalysis) -> MetricResult:
        if not self.applies(sample):
            shown = sample.category or "none"
            return not_applicable(
                self, f"applies to {', '.join(self.applies_to)}; this sample's category is {shown}"
            )
        if self.reference and not (sample.reference or "").strip():
            return not_applicable(self, "no expected answer to compare with", fields=("reference",))
        answers = _answers_of(self.name, analysis)
        if answers is None:
            return not_applicable(
                self,
                f"judge {analysis.judge or 'unknown'} answers no rubric items: a rubric needs "
                "an LLM judge (--judge openai:gpt-4o-mini, or a local model)",
            )
        if self.scope == "claim":
            return _claim_result(self, answers, analysis)
        return _answer_result(self, answers)


def _answers_of(name: str, analysis: ClaimAnalysis) -> RubricAnswers | None:
    for answers in analysis.rubrics or ():
        if answers.checklist.name == name:
            return answers
    return None


def _details(answers: RubricAnswers) -> dict[str, Any]:
    """The checklist that was answered, every verdict with its evidence, and how many quotes
    the judge gave that occur in none of the texts it was shown."""
    checklist = answers.checklist
    return {
        "fingerprint": checklist.fingerprint,
        "written_by": checklist.written_by,
        "prompt_version": checklist.prompt_version,
        "scope": checklist.scope,
        "items": [item.model_dump() for item in checklist.items],
        "verdicts": [v.model_dump(mode="json", exclude_none=True) for v in answers.verdicts],
        "quotes_not_found": sum(1 for v in answers.verdicts if v.quote_found is False),
    }


def _share(verdicts: Sequence[ItemVerdict], weights: dict[str, float]) -> tuple[float, float]:
    """(weight met, weight applicable) over `verdicts`."""
    applicable = [v for v in verdicts if v.verdict is not RubricVerdict.NOT_APPLICABLE]
    met = sum(weights[v.item_id] for v in applicable if v.verdict is RubricVerdict.MET)
    return met, sum(weights[v.item_id] for v in applicable)


def _answer_result(rubric: Rubric, answers: RubricAnswers) -> MetricResult:
    checklist = answers.checklist
    weights = {item.id: item.weight for item in checklist.items}
    met, applicable = _share(answers.verdicts, weights)
    details = _details(answers)
    if applicable == 0:
        return not_applicable(rubric, "no item of the checklist applies to this answer")
    texts = {item.id: item.text for item in checklist.items}
    missed = [v.item_id for v in answers.verdicts if v.verdict is RubricVerdict.NOT_MET]
    counted = [v for v in answers.verdicts if v.verdict is not RubricVerdict.NOT_APPLICABLE]
    reason = f"{len(counted) - len(missed)} of {len(counted)} applicable items met"
    if missed:
        reason += "; not met: " + "; ".join(f"{i} ({texts[i]})" for i in missed)
    return _scored(rubric, met / applicable, reason, details=details)


def _claim_result(rubric: Rubric, answers: RubricAnswers, analysis: ClaimAnalysis) -> MetricResult:
    checklist = answers.checklist
    weights = {item.id: item.weight for item in checklist.items}
    details = _details(answers)
    if not analysis.claims:
        return _scored(
            rubric, 1.0, "no claims to check", status=MetricStatus.NO_CLAIMS, details=details
        )
    met, applicable = _share(answers.verdicts, weights)
    if applicable == 0:
        return not_applicable(rubric, "no item of the checklist applies to any claim")
    breaking: dict[str, list[str]] = {}
    per_claim: dict[str, float] = {}
    for claim in analysis.claims:
        own = [v for v in answers.verdicts if v.claim_id == claim.id]
        broken = [v.item_id for v in own if v.verdict is RubricVerdict.NOT_MET]
        if broken:
            breaking[claim.id] = broken
        claim_met, claim_applicable = _share(own, weights)
        if claim_applicable:
            per_claim[claim.id] = claim_met / claim_applicable
    details["breaking"] = breaking
    claims = len(analysis.claims)
    reason = f"{claims - len(breaking)} of {claims} claims break no item"
    if breaking:
        reason += "; " + "; ".join(
            f"claim {claim} breaks item {', '.join(items)}" for claim, items in breaking.items()
        )
    return _scored(rubric, met / applicable, reason, claim_weights=per_claim, details=details)


GOAL_ITEMS = (
    RubricItem(
        id="1",
        text="Does the final answer do what the user asked: answer the question, or report "
        "the requested action as done?",
    ),
    RubricItem(
        id="2",
        text="Is every outcome the answer reports (a value, a booking, a change) shown by a "
        "tool result in the contexts?",
    ),
    RubricItem(
        id="3",
        text="Where a tool failed or returned nothing useful, does the answer say so instead "
        "of claiming success?",
    ),
)


def goal_completion(threshold: float = 1.0) -> Rubric:
    """`goal_completion`: did the agent's final answer meet the user's goal, judged as a
    rubric of three fixed items (`GOAL_ITEMS`) with evidence from the tool results, which an
    agent trace gives its final answer as contexts (docs/agents.md). `-m goal_completion`."""
    return Rubric(name="goal_completion", items=GOAL_ITEMS, threshold=threshold)


PRESETS = {"goal_completion": goal_completion}
"""Rubrics VERA defines, built when `-m` names them (never by `-m all`: they need an LLM
judge)."""


def rubric_metric(name: str, definition: Mapping[str, Any]) -> Rubric:
    """The rubric a stored spec defines; `ConfigError` naming it and the field where the
    definition is wrong."""
    return rubrics_from_tables([{**definition, "name": name}], f"rubric {name!r}")[0]


def rubrics_of(metrics: Sequence[object]) -> tuple[Rubric, ...]:
    """The rubric metrics among `metrics`, whose checklists the analysis asks the judge."""
    return tuple(m for m in metrics if isinstance(m, Rubric))


def load_rubrics(path: Path) -> tuple[Rubric, ...]:
    """The rubrics of a TOML file: its `[[rubric]]` tables, each one rubric's fields (items
    as `[[rubric.items]]` tables with `id` and `text`), as `vera.toml` holds them too."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the rubric file ({exc})") from None
    return rubrics_from_tables(data.get("rubric", []), str(path))


def rubrics_from_tables(tables: object, origin: str) -> tuple[Rubric, ...]:
    """Rubrics from `[[rubric]]` tables read from `origin`; `ConfigError` naming the table
    and field where one is wrong."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ConfigError(f"{origin}: `rubric` must be an array of tables ([[rubric]])")
    found: list[Rubric] = []
    for number, table in enumerate(tables, 1):
        try:
            found.append(Rubric.model_validate(table))
        except ValueError as exc:
            errors = getattr(exc, "errors", None)
            first = errors()[0] if callable(errors) else {"loc": (), "msg": str(exc)}
            where = ".".join(str(p) for p in first["loc"])
            field = f" field {where!r}" if where else ""
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{origin}: [[rubric]] number {number}{field}: {message}") from None
    names = [r.name for r in found]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise ConfigError(f"{origin}: two [[rubric]] tables are named {', '.join(doubled)}")
    return tuple(found)


def write_items_file(rubric: Rubric, checklist: Checklist, path: Path) -> None:
    """Write `rubric` with `checklist`'s items as a `[[rubric]]` table to `path`, for the
    user to edit and pass back (`--rubrics FILE`, or `rubrics_file` in vera.toml)."""
    lines = [
        f"# Checklist of rubric {rubric.name}, fingerprint {checklist.fingerprint}, written by "
        f"{checklist.written_by}. Edit the items, then pass this file back: the items you",
        "# keep are the checklist, and no call writes another one.",
        "[[rubric]]",
        f"name = {_toml_str(rubric.name)}",
        f"scope = {_toml_str(rubric.scope)}",
        f"threshold = {rubric.threshold}",
        f"reference = {str(rubric.reference).lower()}",
    ]
    if rubric.criteria.strip():
        lines.append(f"criteria = {_toml_str(rubric.criteria.strip())}")
    if rubric.applies_to:
        lines.append(f"applies_to = [{', '.join(_toml_str(c) for c in rubric.applies_to)}]")
    for item in checklist.items:
        lines += [
            "",
            "[[rubric.items]]",
            f"id = {_toml_str(item.id)}",
            f"text = {_toml_str(item.text)}",
            f"weight = {item.weight}",
            f"reference = {str(item.reference).lower()}",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _toml_str(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(value, ensure_ascii=False)
