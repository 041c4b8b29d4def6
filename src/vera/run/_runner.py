"""Orchestration: run the judge and metrics over samples with bounded concurrency.

A failure on one sample is recorded on that sample and the run goes on. Claims and verdicts are
computed once per sample and shared by every metric that needs them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from vera._sample_limits import DEFAULT_LIMITS, SampleLimits, check_sizes, sample_deadline
from vera._version import __version__
from vera.analysis._analysis import analyse_sample
from vera.datasets._source import PassLog
from vera.judges._base import Judge, JudgeDescription
from vera.judges.offline import OfflineJudge
from vera.metrics._base import ClaimAnalysis, Metric
from vera.metrics._registry import create_metric
from vera.pipelines._core import Pipeline, RagState, StepRecord
from vera.plan._plan import DEFAULT_METRICS
from vera.plan._settings import DEFAULT_CONCURRENCY
from vera.results._builder import (
    ClaimRecord,
    Report,
    ReportBuilder,
    RunStop,
    SampleResult,
    SampleStatus,
)
from vera.text._language import identify
from vera.types import Sample
from vera.types._errors import RunStopError
from vera.types._turns import turn_ref

__all__ = ["DEFAULT_CONCURRENCY", "evaluate_sample", "run_pass"]

ProgressCallback = Callable[[SampleResult], None]
RecordCallback = Callable[[int, SampleResult], None]
"""Hears each newly finished sample with its position in the dataset (from 0): where a run
store commits it, so the stored results read back in dataset order."""


async def evaluate_sample(
    sample: Sample,
    metrics: Sequence[Metric],
    judge: Judge,
    group_by: Sequence[str] = (),
    pipeline: Pipeline | None = None,
    limits: SampleLimits = DEFAULT_LIMITS,
) -> SampleResult:
    """Score one sample; any exception becomes an ERROR result for this sample only.

    With a pipeline, the pipeline answers the sample's query first: its answer, retrieved
    contexts and measured latency replace any stored ones. A sample over `limits` is an
    error, and so is judge work that outlasts them.
    """
    steps: tuple[StepRecord, ...] = ()
    if pipeline is not None:
        try:
            sample, steps = await _answer(sample, pipeline)
        except RunStopError:
            raise
        except Exception as exc:
            return SampleResult(
                **_identity(sample, group_by),
                status=SampleStatus.ERROR,
                error=f"pipeline {pipeline.name}: {type(exc).__name__}: {exc}",
            )
    base = {
        **_identity(sample, group_by),
        **_languages(sample),
        "steps": steps,
        "response": sample.response,
        "contexts": sample.contexts if pipeline is not None else (),
    }
    if sample.response is None:
        return SampleResult(
            **base,
            status=SampleStatus.NEEDS_PIPELINE,
            error="no response: this sample needs a pipeline to generate one",
        )
    try:
        check_sizes(sample, limits)
        needs = frozenset().union(*(m.needs for m in metrics))
        async with sample_deadline(limits.sample_timeout):
            analysis = await analyse_sample(sample, judge, needs)
        results = {m.name: m.score(sample, analysis) for m in metrics}
    except RunStopError:
        raise
    except Exception as exc:  # isolate any failure to its sample
        return SampleResult(**base, status=SampleStatus.ERROR, error=f"{type(exc).__name__}: {exc}")
    return SampleResult(
        **base,
        status=SampleStatus.SCORED,
        scores={name: r.score for name, r in results.items()},
        results=results,
        claims=_claim_records(analysis),
    )


def _check_metric(metric: object) -> None:
    """Refuse, before any judge call, a metric that does not follow the `Metric` protocol."""
    if isinstance(metric, str):
        raise ValueError(
            f"metric {metric!r} is a name: pass metrics=[...] to vera.evaluate, which builds "
            "named metrics, or vera.metrics.create_metric(name)"
        )
    if not isinstance(metric, Metric):
        raise ValueError(f"{type(metric).__name__} is not a metric; see vera.metrics.Metric")


def _checked_metrics(metrics: Sequence[Metric] | None) -> list[Metric]:
    """The metrics to compute (`DEFAULT_METRICS` when none are named), each a metric, once."""
    chosen = list(metrics) if metrics else [create_metric(name) for name in DEFAULT_METRICS]
    for metric in chosen:
        _check_metric(metric)
    names = [m.name for m in chosen]
    if len(set(names)) != len(names):
        raise ValueError(f"each metric may appear once; got {names}")
    return chosen


async def _answer(sample: Sample, pipeline: Pipeline) -> tuple[Sample, tuple[StepRecord, ...]]:
    if not sample.query.strip():
        raise ValueError("the sample has no query for the pipeline to answer")
    state = await pipeline.run(RagState(query=sample.query))
    answered = sample.model_copy(
        update={
            "response": state.response or "",
            "contexts": state.contexts,
            "latency_ms": state.latency_ms,
        }
    )
    return answered, state.trace


def _identity(sample: Sample, group_by: Sequence[str]) -> dict[str, Any]:
    """What every result of a sample carries, whatever happened to it."""
    return {
        "id": sample.id,
        "category": sample.category,
        "latency_ms": sample.latency_ms,
        "human_faithful": sample.human_faithful,
        "human_claims": sample.human_claims,
        "group_values": {key: _group_by(sample, key) for key in group_by},
        "turn": turn_ref(sample),
    }


def _group_by(sample: Sample, key: str) -> str | None:
    """The sample's `key` metadata; for "language" without such metadata, the response's
    identified language (`--group-by language`)."""
    if key == "language" and key not in sample.metadata:
        return identify(sample.response) if sample.response else None
    return _group_value(sample.metadata.get(key))


def _group_value(value: object) -> str | None:
    return None if value is None else str(value)


def _languages(sample: Sample) -> dict[str, str | None]:
    """The languages the response and contexts are in, as the offline judge identifies them
    (the identification is cached, so the judge does not pay for it twice)."""
    contexts = "\n".join(c.text for c in sample.contexts)
    return {
        "language": identify(sample.response) if sample.response else None,
        "context_language": identify(contexts) if contexts else None,
    }


def _skipped(sample: Sample, reason: RunStopError, group_by: Sequence[str]) -> SampleResult:
    return SampleResult(
        **_identity(sample, group_by),
        status=SampleStatus.SKIPPED,
        error=f"not evaluated: the run stopped ({reason})",
    )


def _claim_records(analysis: ClaimAnalysis) -> tuple[ClaimRecord, ...]:
    return tuple(
        ClaimRecord(
            id=claim.id,
            text=claim.text,
            span=claim.span,
            verdict=verdict.verdict,
            evidence=verdict.evidence,
            context_index=verdict.context_index,
            reason=verdict.reason,
            quote_found=verdict.quote_found,
            agreement=verdict.agreement,
            entailment=verdict.entailment,
            traceable=claim.traceable,
        )
        for claim, verdict in zip(analysis.claims, analysis.verdicts, strict=True)
    )


class PassResults:
    """Where one pass's results go as they finish, whoever evaluates them (the local
    `_Scheduler` or a Ray driver): counted by the report's `builder`, kept in dataset order
    only when `keep`, handed to `record` and `progress`; and the run stop that every later
    sample hears of (as skipped)."""

    def __init__(
        self,
        builder: ReportBuilder,
        *,
        keep: bool,
        progress: ProgressCallback | None,
        record: RecordCallback | None,
        resume_from: Mapping[str, SampleResult],
        group_by: Sequence[str],
    ) -> None:
        self.builder = builder
        self.progress = progress
        self.record_to = record
        self.resume_from = resume_from
        self.group_by = group_by
        self._kept: dict[int, SampleResult] | None = {} if keep else None
        self.stop: RunStopError | None = None

    def _keep(self, index: int, result: SampleResult) -> None:
        self.builder.add(result)
        if self._kept is not None:
            self._kept[index] = result

    def record(self, index: int, result: SampleResult) -> None:
        """A newly finished sample at dataset position `index`. A `RunStopError` from
        `record_to` (a run history that cannot be written) stops the run as one from a sample
        does: a run that cannot record what it does goes no further."""
        self._keep(index, result)
        if self.record_to is not None:
            try:
                self.record_to(index, result)
            except RunStopError as exc:
                self.stop = self.stop or exc
        if self.progress is not None:
            self.progress(result)

    def settled(self, index: int, sample: Sample) -> bool:
        """Whether `sample` needs no evaluation: an earlier run finished it (kept as it was),
        or the run has stopped (still listed, as skipped)."""
        done = self.resume_from.get(sample.id)
        if done is not None:
            self._keep(index, done)
            return True
        if self.stop is not None:
            self.record(index, _skipped(sample, self.stop, self.group_by))
            return True
        return False

    def kept(self) -> list[SampleResult]:
        """The kept results in dataset order (none unless `keep`)."""
        kept = self._kept or {}
        return [kept[index] for index in sorted(kept)]


class _Scheduler:
    """One pass evaluated here: at most `concurrency` samples in flight, each result handed
    to `results` as it finishes."""

    def __init__(
        self,
        score: Callable[[Sample], Awaitable[SampleResult]],
        concurrency: int,
        results: PassResults,
    ) -> None:
        self.score = score
        self.slots = asyncio.Semaphore(concurrency)
        self.results = results

    async def _evaluate(self, index: int, sample: Sample) -> None:
        results = self.results
        try:
            try:
                result = await self.score(sample)
            except RunStopError as exc:
                results.stop = results.stop or exc
                result = _skipped(sample, exc, results.group_by)
            results.record(index, result)
        finally:
            self.slots.release()

    async def run(self, samples: Iterable[Sample]) -> list[SampleResult]:
        """Evaluate every sample; the kept results in dataset order (see `PassResults`)."""
        # Reading the next sample can fail (a bad dataset row). Raised inside the task group
        # it would come out wrapped in an ExceptionGroup; keep it, let in-flight samples
        # finish, and raise it as itself.
        read_error: Exception | None = None
        rows = enumerate(samples)
        async with asyncio.TaskGroup() as group:
            while True:
                await self.slots.acquire()
                try:
                    index, sample = next(rows)
                except StopIteration:
                    self.slots.release()
                    break
                except Exception as exc:
                    self.slots.release()
                    read_error = exc
                    break
                if self.results.settled(index, sample):
                    self.slots.release()
                    continue
                group.create_task(self._evaluate(index, sample))
        if read_error is not None:
            raise read_error
        return self.results.kept()


async def run_pass(
    samples: Iterable[Sample],
    metrics: Sequence[Metric] | None = None,
    judge: Judge | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    dataset_name: str | None = None,
    progress: ProgressCallback | None = None,
    group_by: Sequence[str] = (),
    pipeline: Pipeline | None = None,
    resume_from: Mapping[str, SampleResult] | None = None,
    source: PassLog | None = None,
    keep_samples: bool = True,
    record: RecordCallback | None = None,
    limits: SampleLimits = DEFAULT_LIMITS,
) -> Report:
    """One pass over `samples`: every sample scored, and the report of the pass.

    `samples` is consumed lazily, so a streamed dataset is never held in memory at once, and
    each result is counted in the report's aggregates as it finishes. With `keep_samples`
    False the results are not kept: `Report.samples` is empty, and `record` is where they go
    (to the run store, with their dataset position), so memory does not grow with the samples.
    At most `concurrency` samples are in flight. With no metrics, faithfulness is computed;
    with no judge, the embedded offline judge. `group_by` names metadata keys to break the
    aggregates down by, beside the category. With a `pipeline`, each sample's query is
    answered by it first (see `evaluate_sample`). `resume_from` holds results of an
    interrupted run by sample id: those samples are not evaluated again, and `progress` hears
    only of the others. `source` is the pass over the dataset (its name, and the pass's own
    invalid rows: `SampleSource.read()`). `limits` bound each sample's work
    (`vera._sample_limits`). A run: `arun_plan`.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    metrics = _checked_metrics(metrics)
    active_judge: Judge = judge if judge is not None else OfflineJudge()
    started = datetime.now(UTC)

    async def score(sample: Sample) -> SampleResult:
        return await evaluate_sample(sample, metrics, active_judge, group_by, pipeline, limits)

    builder = _report_builder(metrics, group_by)
    results = PassResults(
        builder,
        keep=keep_samples,
        progress=progress,
        record=record,
        resume_from=resume_from or {},
        group_by=group_by,
    )
    finished = await _Scheduler(score, concurrency, results).run(samples)
    return _build_report(
        builder,
        active_judge,
        finished,
        started=started,
        stop=results.stop,
        dataset_name=dataset_name,
        source=source,
        pipeline=pipeline,
    )


def _report_builder(metrics: Sequence[Metric], group_by: Sequence[str]) -> ReportBuilder:
    """The builder that counts one pass's results as they finish."""
    return ReportBuilder(
        {m.name: m.threshold for m in metrics},
        lower_is_better=[m.name for m in metrics if not m.higher_is_better],
        group_by=group_by,
    )


def _build_report(
    builder: ReportBuilder,
    judge: Judge | JudgeDescription,
    finished: list[SampleResult],
    *,
    started: datetime,
    stop: RunStopError | None,
    dataset_name: str | None,
    source: PassLog | None,
    pipeline: Pipeline | None,
) -> Report:
    """The report of one pass, from its builder (shared by every executor); the judge, or
    what it says of itself where the pass ran elsewhere."""
    description = judge if isinstance(judge, JudgeDescription) else judge.describe()
    return builder.build(
        dataset=dataset_name or (source.name if source else "samples"),
        judge=description.spec,
        judge_details=description.to_details(),
        version=__version__,
        samples=finished,
        invalid_rows=source.invalid_rows if source else (),
        unrecognised_fields=source.unrecognised_fields if source else (),
        started=started,
        stopped=None if stop is None else RunStop(reason=str(stop), planned=stop.planned),
        pipeline=pipeline.name if pipeline is not None else None,
    )
