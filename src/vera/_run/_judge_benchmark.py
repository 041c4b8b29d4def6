"""How well a judge finds unfaithful responses, measured on a file of human labels: the library
behind `vera benchmark` and `benchmarks/judge_accuracy.py`.

    result = benchmark_judge("labelled.jsonl", "offline:learned")
    result.groups["all"].f1, result.groups["all"].auroc, result.span

The file is JSONL, one labelled answer a line: `response`, `contexts` and `label` (1 =
unfaithful, 0 = faithful), optionally `id`, `query`, `task_type` (figures are also given per
task type; `dataset` stands in when it is absent) and `hallucinated_spans` (`{start, end}`
character offsets in the response that a person marked). Sample fields may be spelled as
`vera eval` reads them (`answer`, `retrieved_contexts`, ...).

The judge analyses every response as `vera eval` does, and each response is judged by all three
rules, whose figures are given side by side:

- `"answer_verdict"` (the default, as `vera eval` decides an answer's pass or fail): flagged
  unfaithful when the answer verdict (`vera._results.claims_verdict`) is unfaithful: a claim
  NO_EVIDENCE or CONTRADICTED, PARTIALLY_SUPPORTED counting as the judge declares
  (`partial_rule`); ranked for AUROC by `1 - faithfulness_probability` where the judge gives
  claim probabilities (the probability that every claim is supported), else by
  `1 - faithfulness` (`JudgeBenchmark.ranked_by` says which).
- `"faithfulness"`: flagged when its `faithfulness` score (the seeds' mean of verdict weights)
  fails the metric's default threshold, 0.5, as `--threshold` gates the mean; ranked as above.
- `"any_claim"`: flagged when any of its claims is not FULLY_SUPPORTED; ranked by
  `1 - min support` over its claims: the judge's probability that its least supported claim is
  supported where it gives one (`ClaimVerdict.entailment`), else that of the verdict's weight.

A response without claims is faithful under every rule. Unfaithful is the positive class, as in
the benchmark literature (RAGTruth, Luna). Span figures count characters: those of the claims
not FULLY_SUPPORTED against those people marked, over the rows that have `hallucinated_spans`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vera._analysis._analysis import analyse_claims
from vera._baselines._verification import support
from vera._plan._settings import DEFAULT_CONCURRENCY, Settings
from vera._results._answers import claims_verdict
from vera._stats._agreement import Confusion, auroc
from vera._sync import run_sync
from vera._types import (
    AnswerStatus,
    Claim,
    ClaimAnalysis,
    ClaimVerdict,
    PartialRule,
    Sample,
    Verdict,
)
from vera._types._errors import DatasetError, DatasetRowError
from vera._types._results import MetricStatus
from vera.datasets._readers import RawRow, check_readable, read_rows
from vera.datasets._validate import RowRules, validate_row
from vera.judges._base import Judge, partial_rule
from vera.judges._registry import create_judge
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._faithfulness_probability import FaithfulnessProbability

OVERALL = "all"
"""The group every row is in; a task type may not take its name."""

Span = tuple[int, int]

Rule = Literal["answer_verdict", "faithfulness", "any_claim"]
"""How a response is flagged and ranked: by the answer verdict, as `vera eval` decides (the
default), by faithfulness's mean at its threshold (both ranked by faithfulness_probability
where the judge gives one), or by its least supported claim."""
RULES: tuple[Rule, ...] = ("answer_verdict", "faithfulness", "any_claim")

_FAITHFULNESS = Faithfulness()
_PROBABILITY = FaithfulnessProbability()


@dataclass(frozen=True)
class LabelledRow:
    """One labelled answer. `spans` is None when the row has no span labels at all, which is
    not the same as an empty list (a row a person read and found nothing in)."""

    sample: Sample
    label: int
    task_type: str | None = None
    spans: tuple[Span, ...] | None = None


@dataclass(frozen=True)
class RowOutcome:
    """What the judge made of one row: whether it flagged it, its score for AUROC (higher is
    more likely unfaithful), and the character spans of the claims it marked unsupported."""

    flagged: bool
    score: float
    marked: tuple[Span, ...] = ()


class GroupFigures(BaseModel):
    """The response-level figures of one group of rows, for the unfaithful class."""

    model_config = ConfigDict(frozen=True)

    n: int
    positives: int
    """Rows labelled unfaithful."""
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    balanced_accuracy: float
    kappa: float
    auroc: float | None
    """None when the group lacks one of the two classes."""


class SpanFigures(BaseModel):
    """Character-level agreement of the spans marked unsupported with those people marked."""

    model_config = ConfigDict(frozen=True)

    rows: int
    """Rows with span labels, over which the characters are counted."""
    marked_chars: int
    gold_chars: int
    overlap_chars: int
    precision: float
    recall: float
    f1: float


class JudgeBenchmark(BaseModel):
    """A judge's figures on one labelled file."""

    model_config = ConfigDict(frozen=True)

    path: str
    judge: str
    """The judge's spec, which rebuilds it."""
    rule: Rule = "answer_verdict"
    """The rule whose figures `groups` holds and a report lists first."""
    rows: int
    groups: dict[str, GroupFigures]
    """By `rule`: "all", then each task type in the order the file first names it."""
    rules: dict[Rule, dict[str, GroupFigures]]
    """Both rules' figures, each by group as `groups`."""
    ranked_by: str = "faithfulness"
    """What the faithfulness rule's AUROC ranks by: "faithfulness_probability" when some row's
    claims have probabilities of support, else "faithfulness"."""
    rows_without_probability: int = 0
    """With `ranked_by` "faithfulness_probability": rows with claims but no probability (a
    cascade that sent all of a response's claims to its LLM), ranked by faithfulness instead."""
    span: SpanFigures | None
    """None unless some row with span labels has a marked span."""
    wall_seconds: float
    """The judging alone, without reading the file."""
    samples_per_s: float

    @property
    def overall(self) -> GroupFigures:
        return self.groups[OVERALL]


def labelled_row(
    data: Mapping[str, Any], *, source: str = "<rows>", location: str = "row 1", index: int = 1
) -> LabelledRow:
    """One row of the benchmark format as a `LabelledRow`, or a `DatasetRowError` naming
    `source`, `location` and the field. `index` numbers a row without an id ("row-<index>")."""
    return _labelled(RawRow(location, data), index, source)


def _labelled(raw: RawRow, index: int, source: str) -> LabelledRow:
    # The sample fields go through the one validation every dataset row gets, so aliases and
    # the wording of errors are those of `vera eval`.
    sample = validate_row(raw, index, RowRules(label=source))
    data: Mapping[str, Any] = raw.data

    def problem(field: str, text: str) -> DatasetRowError:
        return DatasetRowError(source, raw.location, field, text)

    if sample.response is None:
        raise problem("response", "missing: the answer the judge is to check")
    if not sample.contexts:
        raise problem("contexts", "missing or empty: the passages the answer must be faithful to")
    label = data.get("label")
    if label is None:
        raise problem("label", "missing: 1 (unfaithful) or 0 (faithful)")
    if not isinstance(label, int) or label not in (0, 1):
        raise problem("label", f"expected 1 (unfaithful) or 0 (faithful); got {label!r}")
    task_type = data.get("task_type") or data.get("dataset")
    if task_type is not None and str(task_type) == OVERALL:
        raise problem("task_type", f"{OVERALL!r} names the overall figures; rename the group")
    spans = data.get("hallucinated_spans")
    return LabelledRow(
        sample=sample,
        label=int(label),
        task_type=None if task_type is None else str(task_type),
        spans=None if spans is None else _gold_spans(spans, len(sample.response), problem),
    )


def _gold_spans(
    value: Any, length: int, problem: Callable[[str, str], DatasetRowError]
) -> tuple[Span, ...]:
    field = "hallucinated_spans"
    if not isinstance(value, list):
        raise problem(field, f"expected a list of {{start, end}} objects; got {value!r}")
    spans: list[Span] = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise problem(f"{field}[{i}]", f"expected a {{start, end}} object; got {item!r}")
        bounds = []
        for key in ("start", "end"):
            offset = item.get(key)
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise problem(f"{field}[{i}].{key}", f"expected a character offset; got {offset!r}")
            bounds.append(offset)
        start, end = bounds
        if not 0 <= start <= end <= length:
            raise problem(
                f"{field}[{i}]",
                f"[{start}, {end}) is not within the response's {length} characters",
            )
        spans.append((start, end))
    return tuple(spans)


def read_labelled_rows(
    path: str | Path,
    *,
    limit: int | None = None,
    where: Callable[[LabelledRow], bool] | None = None,
) -> list[LabelledRow]:
    """The labelled rows of a JSONL file: those `where` keeps, the first `limit` of them.

    Reading stops once `limit` rows are kept, so rows past them are not checked. Raises
    `DatasetError` for a file that cannot be read or yields no row, `DatasetRowError` for a bad
    row (naming the file, the line and the field).
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    file = Path(path)
    check_readable(file)
    rows: list[LabelledRow] = []
    for index, raw in enumerate(read_rows(file, "jsonl"), start=1):
        row = _labelled(raw, index, str(file))
        if where is None or where(row):
            rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        kept = " that the row filter keeps" if where is not None else ""
        raise DatasetError(f"{file}: no labelled rows{kept}")
    return rows


def benchmark_figures(
    rows: Sequence[LabelledRow], outcomes: Sequence[RowOutcome]
) -> tuple[dict[str, GroupFigures], SpanFigures | None]:
    """The figures of `outcomes` (one per row) against the rows' labels: per group ("all" and
    each task type), and at character level where rows have span labels."""
    if len(rows) != len(outcomes):
        raise ValueError(f"{len(rows)} rows but {len(outcomes)} outcomes")
    members: dict[str, list[int]] = {OVERALL: list(range(len(rows)))}
    for i, row in enumerate(rows):
        if row.task_type is not None:
            members.setdefault(row.task_type, []).append(i)
    groups = {
        name: _group([rows[i].label for i in indices], [outcomes[i] for i in indices])
        for name, indices in members.items()
    }
    return groups, _span_figures(rows, outcomes)


def _group(labels: Sequence[int], outcomes: Sequence[RowOutcome]) -> GroupFigures:
    counts = Confusion.of([o.flagged for o in outcomes], labels)
    return GroupFigures(
        n=counts.n,
        positives=counts.positives,
        tp=counts.tp,
        fp=counts.fp,
        fn=counts.fn,
        tn=counts.tn,
        precision=counts.precision,
        recall=counts.recall,
        f1=counts.f1,
        accuracy=counts.accuracy,
        balanced_accuracy=counts.balanced_accuracy,
        kappa=counts.kappa,
        auroc=auroc([o.score for o in outcomes], labels),
    )


def _span_figures(
    rows: Sequence[LabelledRow], outcomes: Sequence[RowOutcome]
) -> SpanFigures | None:
    labelled = marked = gold = both = 0
    for row, outcome in zip(rows, outcomes, strict=True):
        if row.spans is None:
            continue
        # Sets, so characters inside two overlapping spans count once.
        marked_chars = {c for start, end in outcome.marked for c in range(start, end)}
        gold_chars = {c for start, end in row.spans for c in range(start, end)}
        labelled += 1
        marked += len(marked_chars)
        gold += len(gold_chars)
        both += len(marked_chars & gold_chars)
    if not gold:
        return None
    precision = both / marked if marked else 0.0
    recall = both / gold
    return SpanFigures(
        rows=labelled,
        marked_chars=marked,
        gold_chars=gold,
        overlap_chars=both,
        precision=precision,
        recall=recall,
        f1=2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    )


@dataclass(frozen=True)
class _Judged:
    """One row under every rule, and whether faithfulness_probability could rank it."""

    outcomes: dict[Rule, RowOutcome]
    probability: MetricStatus


def _judged(
    sample: Sample,
    claims: Sequence[Claim],
    verdicts: Sequence[ClaimVerdict],
    rule: PartialRule,
) -> _Judged:
    answer = claims_verdict([v.verdict for v in verdicts], [c.text for c in claims], rule)
    unsupported = [
        c for c, v in zip(claims, verdicts, strict=True) if v.verdict is not Verdict.FULLY_SUPPORTED
    ]
    marked = tuple(c.span for c in unsupported if c.span is not None)
    analysis = ClaimAnalysis(claims=tuple(claims), verdicts=tuple(verdicts))
    faithfulness = _FAITHFULNESS.score(sample, analysis)
    probability = _PROBABILITY.score(sample, analysis)
    # Decided by faithfulness, as `vera eval` decides; ranked by the finer probability where
    # the judge gives one (a mean of verdict weights ties many responses).
    ranking = probability.score if probability.score is not None else faithfulness.score
    supports = [support(v) for v in verdicts]
    return _Judged(
        outcomes={
            "answer_verdict": RowOutcome(
                flagged=answer.status is AnswerStatus.UNFAITHFUL,
                score=1.0 - (1.0 if ranking is None else ranking),
                marked=marked,
            ),
            "faithfulness": RowOutcome(
                flagged=faithfulness.passed is False,
                score=1.0 - (1.0 if ranking is None else ranking),
                marked=marked,
            ),
            "any_claim": RowOutcome(
                flagged=bool(unsupported),
                score=1.0 - min(supports) if supports else 0.0,
                marked=marked,
            ),
        },
        probability=probability.status,
    )


async def _judge_rows(rows: Sequence[LabelledRow], judge: Judge, concurrency: int) -> list[_Judged]:
    slots = asyncio.Semaphore(concurrency)

    rule = partial_rule(judge)

    async def one(row: LabelledRow) -> _Judged:
        async with slots:
            return _judged(row.sample, *await analyse_claims(row.sample, judge), rule)

    return list(await asyncio.gather(*(one(row) for row in rows)))


def _ranked_by(judged: Sequence[_Judged]) -> tuple[str, int]:
    """What the faithfulness rule ranked by, and how many rows with claims lacked it."""
    statuses = [j.probability for j in judged]
    if MetricStatus.OK not in statuses:
        return "faithfulness", 0
    return _PROBABILITY.name, statuses.count(MetricStatus.NOT_APPLICABLE)


async def abenchmark_judge(
    path: str | Path,
    judge: Judge | str = "offline",
    *,
    settings: Settings | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    limit: int | None = None,
    where: Callable[[LabelledRow], bool] | None = None,
    rule: Rule = "answer_verdict",
) -> JudgeBenchmark:
    """`benchmark_judge` in a running event loop (Jupyter, an async app)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    if isinstance(judge, str):
        judge = create_judge(judge, settings or Settings())
    rows = read_labelled_rows(path, limit=limit, where=where)
    started = time.perf_counter()
    judged = await _judge_rows(rows, judge, concurrency)
    elapsed = time.perf_counter() - started
    figures: dict[Rule, dict[str, GroupFigures]] = {}
    span: SpanFigures | None = None
    # The chosen rule first; every rule marks the same claims, so the span figures are one.
    for name in sorted(RULES, key=lambda r: r != rule):
        figures[name], span = benchmark_figures(rows, [j.outcomes[name] for j in judged])
    ranked_by, without = _ranked_by(judged)
    return JudgeBenchmark(
        path=str(path),
        judge=judge.spec,
        rule=rule,
        rows=len(rows),
        groups=figures[rule],
        rules=figures,
        ranked_by=ranked_by,
        rows_without_probability=without,
        span=span,
        wall_seconds=elapsed,
        samples_per_s=len(rows) / elapsed if elapsed > 0 else 0.0,
    )


def benchmark_judge(
    path: str | Path,
    judge: Judge | str = "offline",
    *,
    settings: Settings | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    limit: int | None = None,
    where: Callable[[LabelledRow], bool] | None = None,
    rule: Rule = "answer_verdict",
) -> JudgeBenchmark:
    """Run `judge` over the labelled JSONL file at `path` and measure how well it finds the
    unfaithful answers (see the module docstring for the format and the definitions).

    Args:
        path: the JSONL file.
        judge: a spec ("offline", "offline:learned", "openai:gpt-4o-mini", ...) or a judge.
        settings: configure a judge given by spec (`vera.load_settings()` reads them as the
            CLI does); default `Settings()`, no config file or environment read.
        concurrency: rows judged at once.
        limit: judge only the first `limit` rows (that `where` keeps).
        where: judge only the rows for which it is true.
        rule: which rule's figures `groups` holds and a report lists first (all are
            measured): "answer_verdict" flags a response whose answer verdict is unfaithful,
            as `vera eval` decides; "faithfulness" one whose faithfulness fails its default
            threshold; "any_claim" one with any claim not FULLY_SUPPORTED.

    Raises:
        DatasetError: the file cannot be read or has no row.
        DatasetRowError: a bad row: invalid JSON, a missing field, a label not 0 or 1.
        ConfigError: an unknown judge spec.
        JudgeError: the judge failed on a row; no figures are given from part of the file.
        RuntimeError: inside a running event loop; use `await abenchmark_judge(...)` there.
    """
    return run_sync(
        abenchmark_judge(
            path,
            judge,
            settings=settings,
            concurrency=concurrency,
            limit=limit,
            where=where,
            rule=rule,
        ),
        inside_a_loop="benchmark_judge was called inside a running event loop (Jupyter, an "
        "async app); use `await vera._run.abenchmark_judge(...)` there",
    )
