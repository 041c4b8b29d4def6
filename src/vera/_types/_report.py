"""A run's results as data: per-sample results, their aggregates, and the report holding both.

These are plain types with no aggregation logic: `vera._results.build_report` computes a
`Report` from `SampleResult`s, and the renderers, the run store and comparisons read one.
`Report.to_dict()` is exactly the JSON that `vera eval --output` writes. Its top level follows
seed 001 (dataset, timestamp, queries_evaluated, metrics, per_category_breakdown) and adds the
samples with their claims, so every number can be traced back to claim verdicts.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from vera._types._answers import AnswerVerdict, AnswerVerdicts
from vera._types._baselines import BaselineComparison
from vera._types._claims import Verdict
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera._types._fingerprint import RegressionCheck, RunFingerprint
from vera._types._judge_details import JudgeDetails
from vera._types._results import MetricResult
from vera._types._samples import Context, LabelledClaim
from vera._types._secrets import redact
from vera._types._turns import ConversationSummary, TurnRef

Message = Annotated[str, AfterValidator(redact)]
"""Text from an exception or a provider: kept with its URLs' secrets taken out (`redact`)."""

REPORT_SCHEMA_VERSION = 2
"""The layout of `Report.to_dict()`, written in every JSON report and stored run as
`schema_version`. Version 1 is the same layout without that field (reports written before it
existed); a report of a higher version than this is refused when read, never misread."""

F1_SCORE = "f1_score"
LATENCY_P99 = "latency_p99_ms"
RUN_FIGURES = frozenset({F1_SCORE, LATENCY_P99})
"""Keys of `Report.metrics` that seed 001's format puts beside the metric means but that are
not metrics: they have no per-sample scores, threshold or direction, and are never in
`Report.metric_summary`. `Report.figures` gives them typed, `Report.metric_means` the rest."""

SAMPLE_COLUMNS = ("id", "status", "category", "error", "latency_ms")
CLAIM_COLUMNS = (
    "sample_id",
    "claim_id",
    "text",
    "verdict",
    "evidence",
    "context_index",
    "reason",
    "quote_found",
    "agreement",
    "entailment",
    "span_start",
    "span_end",
    "traceable",
    "source",
)


class Estimate(BaseModel):
    """A mean with its 95 % bootstrap confidence interval; None fields when nothing was scored."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class StepRecord(BaseModel):
    """What one step took: wall time, and judge calls and dollars where it used a judge."""

    model_config = ConfigDict(frozen=True)

    name: str
    latency_ms: float
    judge_calls: int = 0
    cost_usd: float = 0.0


class InvalidRow(BaseModel):
    """A row skipped under `skip_invalid`, kept so the report can show it."""

    model_config = ConfigDict(frozen=True)

    location: str
    field: str | None
    problem: Message
    message: Message


class SampleStatus(StrEnum):
    """What happened to a sample. Only SCORED samples count in the aggregates."""

    SCORED = "scored"
    ERROR = "error"
    NEEDS_PIPELINE = "needs_pipeline"
    SKIPPED = "skipped"
    """Not evaluated because the run stopped (see `Report.stopped`)."""


class RunStop(BaseModel):
    """Why a run stopped before its end. `planned` is True for a limit the user set (a budget),
    False for a failure that every later sample would have hit (a rejected key)."""

    model_config = ConfigDict(frozen=True)

    reason: Message
    planned: bool


class ClaimRecord(BaseModel):
    """A claim with the verdict it received: the unit every score is explained by."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    span: tuple[int, int] | None
    verdict: Verdict
    evidence: str
    context_index: int | None
    reason: str
    quote_found: bool | None = None
    agreement: float | None = None
    entailment: float | None = None
    """The judge's probability that the contexts support the claim, from judges that give one
    (`offline:learned`, `nli:`, `cascade`); None from the others."""
    traceable: bool | None = None
    """False for a claim an LLM judge extracted that cannot come from the response (found
    nowhere in it, no content word in common); None where not checked."""
    source: str | None = None
    """The `source` of the context the verdict cites, where it has one: a document's source,
    or for a conversation turn where its support came from ("tool get_order, turn 4", "user,
    turn 3"). None, and absent from the JSON, otherwise."""

    @model_serializer(mode="wrap")
    def _omit_no_source(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_none(handler(self), "source")


class SampleResult(BaseModel):
    """One sample's outcome: scores, claims, or the error that stopped it."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: SampleStatus
    category: str | None = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    results: dict[str, MetricResult] = Field(default_factory=dict)
    claims: tuple[ClaimRecord, ...] = ()
    error: Message | None = None
    latency_ms: float | None = None
    group_values: dict[str, str | None] = Field(default_factory=dict)
    """The sample's values of the run's `group_by` metadata keys."""
    steps: tuple[StepRecord, ...] = ()
    """With a pipeline: each step's latency, judge calls and cost for this sample."""
    response: str | None = None
    """The response that was judged, so its claims can be shown in place."""
    contexts: tuple[Context, ...] = ()
    """With a pipeline: the contexts it retrieved (stored datasets keep their own)."""
    human_faithful: bool | None = None
    """The sample's human label, where it has one (see `Report.calibration`)."""
    human_claims: tuple[LabelledClaim, ...] = ()
    """Claims a person gave a verdict, where the sample has them (see `Report.calibration`)."""
    language: str | None = None
    """The response's language as identified (ISO 639-1, `vera._text._language`); None when
    there was no response or too little text to tell."""
    context_language: str | None = None
    """The contexts' language, identified the same way."""
    turn: TurnRef | None = None
    """The conversation and turn a turn sample came from; None (and absent from the JSON) for
    a sample that is no conversation turn."""
    verdict: AnswerVerdict | None = None
    """The answer verdict (`vera._results.answer_verdict`): faithful, unfaithful, no_claims or
    error, with its reason. None, and absent from the JSON, where the run verified no claims
    (no metric read them) or the sample was not evaluated."""

    @model_serializer(mode="wrap")
    def _omit_no_turn(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_none(_omit_none(handler(self), "turn"), "verdict")


class MetricSummary(BaseModel):
    """A metric over the run. `mean` is None when no sample could be scored, never NaN.

    `ci_low`/`ci_high` bound the mean with 95 % confidence (percentile bootstrap over the
    scored samples); `sub_scores` aggregates the metric's further figures the same way.
    """

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    scored: int
    not_scored: int
    not_applicable: int = 0
    """Of `not_scored`, the samples the metric does not apply to (no reference, …)."""
    not_applicable_reasons: dict[str, int] = Field(default_factory=dict)
    """Why the metric did not apply: each reason it gave (which names the sample field it
    needs) with how many samples it gave it for, most frequent first."""
    passed: int
    failed: int
    threshold: float
    higher_is_better: bool = True
    sub_scores: dict[str, Estimate] = Field(default_factory=dict)


class GroupStats(BaseModel):
    """One metric within one group of samples (a category, a metadata value)."""

    model_config = ConfigDict(frozen=True)

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    scored: int
    not_scored: int


class LatencySummary(BaseModel):
    """Percentiles of the samples' latency in milliseconds, over those that report one."""

    model_config = ConfigDict(frozen=True)

    count: int
    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None


class CorrectedEstimate(BaseModel):
    """A mean over the run as the judge alone gives it, as corrected by the human labels
    (prediction-powered, PPI++), and from the labels alone; each with its 95 % interval."""

    model_config = ConfigDict(frozen=True)

    judge_only_estimate: float
    estimate: float
    ci_low: float
    ci_high: float
    labels_only_estimate: float
    labels_only_ci_low: float
    labels_only_ci_high: float
    power_tuning: float
    """PPI++'s λ: how much of the judge's prediction the estimate leans on (0: none)."""


class RecommendedThreshold(BaseModel):
    """The pass threshold of the faithfulness score that best separates the labels
    (balanced accuracy), with its figures on the labelled samples."""

    model_config = ConfigDict(frozen=True)

    threshold: float
    balanced_accuracy: float
    precision: float
    recall: float
    f1: float
    accuracy: float


class VerdictAgreement(BaseModel):
    """How the judge and a person gave one verdict on the same claims."""

    model_config = ConfigDict(frozen=True)

    human: int
    """Claims the person gave this verdict."""
    judge: int
    """Claims the judge gave this verdict."""
    both: int
    """Claims both gave it."""
    precision: float
    """`both / judge` (0 where the judge never gave it)."""
    recall: float
    """`both / human` (0 where the person never gave it)."""


class ClaimAgreement(BaseModel):
    """The judge's verdicts against a person's on the same claims (`human_claims`)."""

    model_config = ConfigDict(frozen=True)

    claims: int
    """Claims compared: labelled claims the judge also stated."""
    accuracy: float
    kappa: float
    """Cohen's kappa over the verdicts."""
    per_verdict: dict[str, VerdictAgreement]
    unmatched: int
    """Labelled claims the judge did not state."""


class Calibration(BaseModel):
    """How the judge agrees with the samples a human labelled (`human_faithful`), and the
    run's figures corrected by them. "Positive" is unfaithful throughout."""

    model_config = ConfigDict(frozen=True)

    metric: str
    labelled: int
    """Labelled samples that were scored: the ones every figure here is computed from."""
    labelled_unscored: int = 0
    """Labelled samples that errored or were skipped, so could not be compared."""
    unlabelled: int
    agreement: dict[str, float | int]
    """The confusion counts (tp, fp, fn, tn) and accuracy, balanced accuracy, Cohen's kappa,
    precision, recall and F1 of the judge's decision against the labels."""
    auroc: float | None = None
    """How well the judge's score ranks the unfaithful below the faithful (None without both)."""
    ranked_by: str = "faithfulness"
    """The score `auroc` ranks by: "faithfulness_probability" where every labelled sample has
    one (a judge with claim probabilities, the metric selected), else "faithfulness"."""
    unfaithful_share: CorrectedEstimate | None = None
    mean_faithfulness: CorrectedEstimate | None = None
    recommended_threshold: RecommendedThreshold | None = None
    claims: ClaimAgreement | None = None
    """Where samples carry `human_claims`: the judge's verdicts on the same claims against the
    person's."""
    warnings: tuple[str, ...] = ()
    """What makes these figures unsteady: fewer than 30 labelled samples, or labels of one
    class (`vera._stats._calibration.calibration_warnings`)."""


class Counts(BaseModel):
    """How many samples of the run ended in each `SampleStatus`, and the invalid rows beside
    them. Read by attribute (`report.counts.scored`); `report.counts["scored"]` and
    `.get("scored")` also work, for code written when this was a dict."""

    model_config = ConfigDict(frozen=True)

    total: int = 0
    """Samples the run went through: scored + errors + needs_pipeline + skipped."""
    scored: int = 0
    errors: int = 0
    needs_pipeline: int = 0
    skipped: int = 0
    invalid_rows: int = 0
    """Rows skipped under `skip_invalid`; not among `total`."""

    def __getitem__(self, name: str) -> int:
        if name not in type(self).model_fields:
            raise KeyError(name)
        value: int = getattr(self, name)
        return value

    def get(self, name: str, default: int | None = None) -> int | None:
        """The count `name`, or `default` for a name that is no count."""
        return self[name] if name in type(self).model_fields else default


class RunFigures(BaseModel):
    """Seed 001's figures beside the metric means in `Report.metrics`, typed: None where the
    run did not measure them."""

    model_config = ConfigDict(frozen=True)

    f1_score: float | None = None
    """Grounding F1, where the run scored grounding precision and recall (or grounding_f1)."""
    latency_p99_ms: float | None = None
    """The 99th percentile of the samples' latency, where they report one."""


class Report(BaseModel):
    """Everything a run produced. Serialise it with `to_dict()` or `to_json()`."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = REPORT_SCHEMA_VERSION
    """The layout this report follows (`REPORT_SCHEMA_VERSION`). A report read from JSON
    without it (version 1, the same layout) or with it is held as the current version; a
    higher one than this VERA knows is refused with a message to upgrade."""
    dataset: str
    timestamp: str
    judge: str
    pipeline: str | None = None
    """The pipeline that produced the responses; None when they came with the dataset."""
    judge_details: JudgeDetails = Field(default_factory=JudgeDetails)
    """Prompt versions, calls, tokens and cost, for judges that report them, and the run's
    evidence checks of the verdicts."""
    vera_version: str
    queries_evaluated: int
    metrics: dict[str, float | None]
    """Seed 001's `metrics` block: each metric's mean, plus `f1_score` (grounding F1) and
    `latency_p99_ms` where known. Those two are not metrics (`RUN_FIGURES`): `figures` gives them
    typed, `metric_means` the metrics alone."""
    metric_summary: dict[str, MetricSummary]
    per_category_breakdown: dict[str, dict[str, float | int | None]]
    """Seed 001's shape: per category, each metric's mean and the count of scored samples."""
    breakdowns: dict[str, dict[str, dict[str, GroupStats]]] = Field(default_factory=dict)
    """By grouping key ("category", and each `group_by` metadata key), then value, then
    metric: mean, confidence interval and counts."""
    latency: LatencySummary | None = None
    latency_by_category: dict[str, LatencySummary] = Field(default_factory=dict)
    counts: Counts
    samples: tuple[SampleResult, ...]
    invalid_rows: tuple[InvalidRow, ...] = ()
    unrecognised_fields: tuple[str, ...] = ()
    """Row keys that are no VERA field or alias, kept in each sample's `metadata`: a column a
    metric was meant to read would show up here."""
    stopped: RunStop | None = None
    """Set when the run stopped early; its unevaluated samples have status "skipped"."""
    baseline_comparison: BaselineComparison | None = None
    """With baselines: each baseline's metric means, the improvement over each (seed 001's
    "+41.5%"), and a paired 95 % interval and p-value per metric (`significance`); written as
    seed 001's flat block."""
    categorical_tests: dict[str, str] | None = None
    """With `--check-laws`: seed 001's laws on the evaluated pipeline, each PASS or FAIL."""
    calibration: Calibration | None = None
    """When samples carry `human_faithful`: the judge against those labels (see
    `vera._stats._calibration`)."""
    fingerprint: RunFingerprint | None = None
    """What the run measured (dataset content, judge, metrics, pipeline, thresholds): a
    regression gate compares only runs with the same `digest` (see `vera._run._fingerprint`)."""
    regression: RegressionCheck | None = None
    """With `--regression` or `--baseline-run`: the stored run the gate compared with."""
    conversations: ConversationSummary | None = None
    """On a conversation dataset: each conversation's scores over its turns (faithful-turn
    share, first unfaithful turn). None, and absent from the JSON, on any other dataset."""
    answers: AnswerVerdicts | None = None
    """The answer verdicts over the run (faithful, unfaithful, no claims, errors) and the rule
    PARTIALLY_SUPPORTED counted by: what the headline and `--max-unfaithful` read. None, and
    absent from the JSON, where the run verified no claims."""

    @model_serializer(mode="wrap")
    def _omit_no_conversations(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _omit_none(_omit_none(handler(self), "conversations"), "answers")

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version > REPORT_SCHEMA_VERSION:
            raise ValueError(
                f"this report has schema_version {version}, written by a newer VERA; this one "
                f"reads up to {REPORT_SCHEMA_VERSION}: upgrade vera-eval (pip install -U vera-eval)"
            )
        if version < 1:
            raise ValueError(f"schema_version {version} is no report layout (they start at 1)")
        # Versions 1 and 2 have one layout, so a version 1 report is held as the current one.
        return REPORT_SCHEMA_VERSION

    @property
    def metric_means(self) -> dict[str, float | None]:
        """Each metric's mean, without the run figures that `metrics` holds beside them."""
        return {name: summary.mean for name, summary in self.metric_summary.items()}

    @property
    def figures(self) -> RunFigures:
        """`f1_score` and `latency_p99_ms` of `metrics`, typed; a metric that has one of
        those names keeps its place in `metrics` and is not a figure."""
        found = {k: v for k, v in self.metrics.items() if k in RUN_FIGURES}
        return RunFigures.model_validate(
            {k: v for k, v in found.items() if k not in self.metric_summary}
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data; what `--output` writes."""
        return self.model_dump(mode="json")

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON text (strict JSON: no NaN can appear)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    def sample(self, sample_id: str) -> SampleResult:
        """The result for one sample id."""
        for result in self.samples:
            if result.id == sample_id:
                return result
        raise KeyError(sample_id)

    def to_pandas(self) -> Any:
        """A pandas DataFrame with one row per sample, for analysis in a notebook.

        Columns: `id`, `status`, `category`, `error`, `latency_ms`; per metric of
        `metric_summary` its score (NaN where not scored) and `<metric>_passed` (True, False or
        None); then each `group_by` key. Needs pandas (`pip install 'vera-eval[pandas]'`).
        """
        pandas = _pandas()
        groups = self._group_keys()
        columns = [*SAMPLE_COLUMNS]
        for name in self.metric_summary:
            columns += [name, f"{name}_passed"]
        group_columns = {key: _free_name(key, columns) for key in groups}
        columns += group_columns.values()
        rows = [_sample_row(r, self.metric_summary, group_columns) for r in self.samples]
        return pandas.DataFrame(rows, columns=columns)

    def claims_to_pandas(self) -> Any:
        """A pandas DataFrame with one row per claim over all samples, with its verdict and
        evidence (`CLAIM_COLUMNS`). Needs pandas (`pip install 'vera-eval[pandas]'`)."""
        pandas = _pandas()
        rows = [_claim_row(r.id, c) for r in self.samples for c in r.claims]
        return pandas.DataFrame(rows, columns=list(CLAIM_COLUMNS))

    def _group_keys(self) -> list[str]:
        # The run's group_by keys are the breakdowns beside "category"; a sample can only
        # hold those, but a report edited by hand might hold more, and they are kept too.
        keys = [k for k in self.breakdowns if k != "category"]
        for result in self.samples:
            keys += [k for k in result.group_values if k not in keys]
        return keys


def _pandas() -> Any:
    # importlib, not `import pandas`: pandas ships no type information, and is optional.
    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise ConfigError(f"tables of results need pandas: {install_hint('pandas')}") from None


def _free_name(key: str, taken: Sequence[str]) -> str:
    """A group_by key's column name, prefixed where it would clash with another column."""
    return key if key not in taken else f"group_{key}"


def _sample_row(
    result: SampleResult, metrics: Iterable[str], group_columns: dict[str, str]
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": result.id,
        "status": result.status.value,
        "category": result.category,
        "error": result.error,
        "latency_ms": result.latency_ms,
    }
    scored = result.status is SampleStatus.SCORED
    for name in metrics:
        metric = result.results.get(name) if scored else None
        row[name] = result.scores.get(name) if scored else None
        row[f"{name}_passed"] = metric.passed if metric is not None else None
    for key, column in group_columns.items():
        row[column] = result.group_values.get(key)
    return row


def _claim_row(sample_id: str, claim: ClaimRecord) -> dict[str, Any]:
    start, end = claim.span if claim.span is not None else (None, None)
    return {
        "sample_id": sample_id,
        "claim_id": claim.id,
        "text": claim.text,
        "verdict": claim.verdict.value,
        "evidence": claim.evidence,
        "context_index": claim.context_index,
        "reason": claim.reason,
        "quote_found": claim.quote_found,
        "agreement": claim.agreement,
        "entailment": claim.entailment,
        "span_start": start,
        "span_end": end,
        "traceable": claim.traceable,
        "source": claim.source,
    }


def _omit_none(data: dict[str, Any], key: str) -> dict[str, Any]:
    """`data` without `key` where it is None: a field that only some runs have stays out of
    the others' JSON, which is then what it was before the field existed."""
    if key in data and data[key] is None:
        del data[key]
    return data
