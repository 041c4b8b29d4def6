"""One pass over the samples: what each sample goes through, and the pass's bookkeeping.

`evaluate_sample` scores one sample; a failure on it is recorded on that sample and the run
goes on. Claims and verdicts are computed once per sample and shared by every metric that needs
them. `run_pass` owns a pass for every executor: the resumed and skipped samples, the recording
of each result, and the report's builder; an `Executor` (`vera._run._executors`) only turns the rows
it is handed into results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from vera._analysis._analysis import analyse_sample
from vera._plan._settings import DEFAULT_CONCURRENCY
from vera._results._answers import answer_verdict
from vera._results._builder import ReportBuilder
from vera._sample_limits import DEFAULT_LIMITS, SampleLimits, check_sizes, sample_deadline
from vera._text._language import identify
from vera._types import Sample
from vera._types._errors import RunStopError
from vera._types._report import ClaimRecord, Report, RunStop, SampleResult, SampleStatus, StepRecord
from vera._types._results import ClaimAnalysis, Need
from vera._types._turns import turn_ref
from vera._version import __version__
from vera.datasets._source import PassLog
from vera.judges._base import Judge, partial_rule
from vera.metrics._base import Metric
from vera.metrics._rubric import rubrics_of
from vera.pipelines._core import Pipeline, RagState

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
    error, and so is judge work that outlasts them. Where a metric verifies the response's
    claims, the result carries its answer verdict, by the judge's rule for
    PARTIALLY_SUPPORTED (`vera._results.answer_verdict`).
    """
    result = await _evaluate(sample, metrics, judge, group_by, pipeline, limits)
    if not any(Need.CLAIMS in m.needs for m in metrics):
        return result
    verdict = answer_verdict(result, partial_rule(judge))
    return result if verdict is None else result.model_copy(update={"verdict": verdict})


async def _evaluate(
    sample: Sample,
    metrics: Sequence[Metric],
    judge: Judge,
    group_by: Sequence[str],
    pipeline: Pipeline | None,
    limits: SampleLimits,
) -> SampleResult:
    steps: tuple[StepRecord, ...] = ()
    if pipeline is not None:
        try:
            sample, steps = await _answer(sample, pipeline)
        except RunStopError:
            raise
        except Exception as exc:
            return SampleResult(
                **sample_identity(sample, group_by),
                status=SampleStatus.ERROR,
                error=f"pipeline {pipeline.name}: {type(exc).__name__}: {exc}",
            )
    base = {
        **sample_identity(sample, group_by),
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
            analysis = await analyse_sample(sample, judge, needs, rubrics_of(metrics))
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
        claims=_claim_records(analysis, sample),
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


def checked_metrics(metrics: Sequence[Metric]) -> list[Metric]:
    """`metrics`, each checked to be a metric, and each once; at least one."""
    chosen = list(metrics)
    if not chosen:
        raise ValueError("a pass needs at least one metric")
    for metric in chosen:
        _check_metric(metric)
    names = [m.name for m in chosen]
    if len(set(names)) != len(names):
        raise ValueError(f"each metric may appear once; got {names}")
    return chosen


async def _answer(sample: Sample, pipeline: Pipeline) -> tuple[Sample, tuple[StepRecord, ...]]:
    if turn_ref(sample) is not None:
        # Answering the turn's last question alone would score an answer given without the
        # conversation before it, and replace the recorded answer its labels are about.
        raise ValueError(
            "this sample is a conversation turn: a pipeline answers one query without the "
            "history before it; replay the conversations through your system with "
            "vera._conversations.evaluate_conversations(data, assistant=...) "
            "(vera._conversations.pipeline_assistant(pipeline) makes a pipeline one), compare "
            "with a baseline by evaluate_conversations(data, baselines=[name]), or "
            "evaluate the recorded answers without a pipeline"
        )
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


def sample_identity(sample: Sample, group_by: Sequence[str]) -> dict[str, Any]:
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


def skipped_result(sample: Sample, reason: RunStopError, group_by: Sequence[str]) -> SampleResult:
    return SampleResult(
        **sample_identity(sample, group_by),
        status=SampleStatus.SKIPPED,
        error=f"not evaluated: the run stopped ({reason})",
    )


def _claim_records(analysis: ClaimAnalysis, sample: Sample) -> tuple[ClaimRecord, ...]:
    sources = [context.source for context in sample.contexts]

    def cited(index: int | None) -> str | None:
        return sources[index] if index is not None and 0 <= index < len(sources) else None

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
            source=cited(verdict.context_index),
        )
        for claim, verdict in zip(analysis.claims, analysis.verdicts, strict=True)
    )


@dataclass(frozen=True)
class PassWork:
    """What every sample of one pass goes through, whichever executor evaluates it: the
    metrics, the judge, the pipeline that answers first (if any), and the bounds."""

    metrics: Sequence[Metric]
    judge: Judge
    pipeline: Pipeline | None = None
    pipeline_spec: str | None = None
    """The plan's name of `pipeline` (the system's spec or a baseline's name), from which an
    executor in other processes rebuilds it; None for one given as an object from Python."""
    group_by: Sequence[str] = ()
    limits: SampleLimits = DEFAULT_LIMITS
    concurrency: int = DEFAULT_CONCURRENCY
    """Samples in flight at once, over every worker of the executor."""
    size_hint: int | None = None
    """Rows the pass expects, where known (an executor may size its batches by it)."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        object.__setattr__(self, "metrics", tuple(checked_metrics(self.metrics)))

    async def score(self, sample: Sample) -> SampleResult:
        """`evaluate_sample` with this pass's parts (a run stop is raised)."""
        return await evaluate_sample(
            sample, self.metrics, self.judge, self.group_by, self.pipeline, self.limits
        )


class PassSink:
    """Where one pass's results go as they finish, whoever evaluates them: counted by the
    report's `builder`, kept in dataset order only when `keep`, handed to `record` and
    `progress`; and the run stop that every later sample hears of (as skipped)."""

    def __init__(
        self,
        builder: ReportBuilder,
        *,
        keep: bool,
        progress: ProgressCallback | None,
        record: RecordCallback | None,
        resume_from: Mapping[str, SampleResult],
        group_by: Sequence[str],
        record_resumed: bool = False,
    ) -> None:
        self.builder = builder
        self.record_resumed = record_resumed
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

    def stopped(self, reason: RunStopError) -> None:
        """The run stops (the first reason is kept): the samples not yet handed to the
        executor are skipped."""
        self.stop = self.stop or reason

    def finished(self, index: int, result: SampleResult) -> None:
        """A newly finished sample at dataset position `index`. A `RunStopError` from
        `record_to` (a run history that cannot be written) stops the run as one from a sample
        does: a run that cannot record what it does goes no further."""
        self._keep(index, result)
        self._record(index, result)
        if self.progress is not None:
            self.progress(result)

    def _record(self, index: int, result: SampleResult) -> None:
        if self.record_to is None:
            return
        try:
            self.record_to(index, result)
        except RunStopError as exc:
            self.stopped(exc)

    def settled(self, index: int, sample: Sample) -> bool:
        """Whether `sample` needs no evaluation: an earlier run finished it (kept as it was),
        or the run has stopped (still listed, as skipped). A sample the earlier run skipped
        because it stopped was never evaluated: it is evaluated now."""
        done = self.resume_from.get(sample.id)
        if done is not None and done.status is not SampleStatus.SKIPPED:
            self._keep(index, done)
            if self.record_resumed:
                self._record(index, done)
            return True
        if self.stop is not None:
            self.finished(index, skipped_result(sample, self.stop, self.group_by))
            return True
        return False

    def kept(self) -> list[SampleResult]:
        """The kept results in dataset order (none unless `keep`)."""
        kept = self._kept or {}
        return [kept[index] for index in sorted(kept)]


Rows = Iterator[tuple[int, Sample]]
"""The samples an executor evaluates, each with its dataset position, read as it asks."""
Usage = dict[str, Any]
"""Calls, tokens and cost a pass's judge made (`JudgeDescription.usage`'s shape)."""


@runtime_checkable
class Executor(Protocol):
    """Turns rows into results, and nothing else: the pass (`run_pass`) owns resume, skips,
    recording and the report. Chosen by name (`vera._run._executors.EXECUTORS`, `--executor`)."""

    name: str

    async def execute(self, rows: Rows, work: PassWork, sink: PassSink) -> Usage | None:
        """Evaluate every row of `rows` (reading it lazily: a row after a run stop is never
        handed out) with `work`, each result to `sink.finished` as it comes, a run stop a
        sample raised to `sink.stopped` (that sample's result: `skipped_result`). Returns
        the calls, tokens and cost made outside this process (None: `work.judge` made them
        all, and its `describe()` says so)."""
        ...


class _Rows:
    """The rows of one pass an executor reads: settled ones (resumed, or after a stop) go to
    the sink instead. A row that cannot be read ends the rows and is kept in `error`, to be
    raised once the samples already handed out have finished."""

    def __init__(self, samples: Iterable[Sample], sink: PassSink) -> None:
        self._samples = enumerate(samples)
        self._sink = sink
        self.error: Exception | None = None

    def __iter__(self) -> Rows:
        return self

    def __next__(self) -> tuple[int, Sample]:
        while self.error is None:
            try:
                index, sample = next(self._samples)
            except StopIteration:
                raise
            except Exception as exc:  # a bad dataset row: raised by `run_pass`, as itself
                self.error = exc
                break
            if not self._sink.settled(index, sample):
                return index, sample
        raise StopIteration


async def run_pass(
    samples: Iterable[Sample],
    work: PassWork,
    executor: Executor,
    *,
    dataset_name: str | None = None,
    progress: ProgressCallback | None = None,
    resume_from: Mapping[str, SampleResult] | None = None,
    source: PassLog | None = None,
    keep_samples: bool = True,
    record: RecordCallback | None = None,
    record_resumed: bool = False,
) -> Report:
    """One pass over `samples`, evaluated by `executor` with `work`; the report of the pass.

    `samples` is consumed lazily, so a streamed dataset is never held in memory at once, and
    each result is counted in the report's aggregates as it finishes. With `keep_samples`
    False the results are not kept: `Report.samples` is empty, and `record` is where they go
    (to the run store, with their dataset position), so memory does not grow with the samples.
    `resume_from` holds results of an interrupted run by sample id: those samples are not
    evaluated again, and `progress` hears only of the others (`record` too, unless
    `record_resumed`: they come from elsewhere than the store `record` writes). `source` is
    the pass over the dataset (its name, and the pass's own invalid rows:
    `SampleSource.read()`). A run: `vera._run.arun_plan`.
    """
    started = datetime.now(UTC)
    builder = _report_builder(work.metrics, work.group_by)
    sink = PassSink(
        builder,
        keep=keep_samples,
        progress=progress,
        record=record,
        resume_from=resume_from or {},
        group_by=work.group_by,
        record_resumed=record_resumed,
    )
    rows = _Rows(samples, sink)
    usage = await executor.execute(rows, work, sink)
    if rows.error is not None:
        raise rows.error
    description = work.judge.describe()
    if usage is not None:  # the calls were made elsewhere: this process's judge made none
        description = description.model_copy(update={"usage": usage})
    return builder.build(
        dataset=dataset_name or (source.name if source else "samples"),
        judge=description.spec,
        judge_details=description.to_details(),
        version=__version__,
        samples=sink.kept(),
        invalid_rows=source.invalid_rows if source else (),
        unrecognised_fields=source.unrecognised_fields if source else (),
        started=started,
        stopped=None
        if sink.stop is None
        else RunStop(reason=str(sink.stop), planned=sink.stop.planned),
        pipeline=work.pipeline.name if work.pipeline is not None else None,
    )


def _report_builder(metrics: Sequence[Metric], group_by: Sequence[str]) -> ReportBuilder:
    """The builder that counts one pass's results as they finish."""
    return ReportBuilder(
        {m.name: m.threshold for m in metrics},
        lower_is_better=[m.name for m in metrics if not m.higher_is_better],
        group_by=group_by,
    )
