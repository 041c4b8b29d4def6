"""Running a `RunPlan`: the one place a run is coordinated, for the CLI and Python alike.

`arun_plan` does everything in one event loop: the system pass, each baseline's pass (each
through `runner.run_pass` on the executor the plan names, which only turns rows into results),
the law checks, the recording of each finished sample in the run store, and the gates, whose
paired statistics read their pairs back from that store. It returns the report with the gates'
verdict; the caller renders it and picks an exit code. `run_plan` is the one synchronous edge.
"""

from __future__ import annotations

import heapq
import itertools
import os
import tempfile
import warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path

from vera._baselines._verification import Verify
from vera._json import JsonRefused
from vera._plan._plan import QUICK_SAMPLES, RunPlan, named_again
from vera._plan._resume import check_resumed
from vera._plan._settings import Settings
from vera._results._answers import unfaithful_failures
from vera._results._comparison import baseline_comparison
from vera._results._gates import gate_failures, regression_failures
from vera._results._turns import (
    FAITHFULNESS,
    TurnTally,
    conversation_gates_refused,
    turn_gate_failures,
)
from vera._run._collector import collecting_less
from vera._run._executors import EXECUTORS, create_executor
from vera._run._experiment import open_plan_data, plan_pipelines, system_spec
from vera._run._fingerprint import content_digest, file_digest, run_fingerprint
from vera._run._passes import add_pass_result, pass_pairs
from vera._run._runner import PassWork, run_pass
from vera._sample_limits import SampleLimits
from vera._sqlite_file import StoreWriteError
from vera._store._history import DEFAULT_HISTORY_PATH, RunStore, open_history
from vera._store._regression import regression_baseline, regression_without_history
from vera._sync import run_sync
from vera._types import Need, Sample, VeraError
from vera._types._errors import ConfigError, DatasetError
from vera._types._fingerprint import RegressionCheck, RunFingerprint
from vera._types._report import Counts, Report, RunStop, SampleResult
from vera._types._secrets import is_redacted, redact
from vera._types._turns import turn_ref
from vera.datasets._conversations import consistency_checks
from vera.datasets._source import SampleSource
from vera.datasets._unread import unread_columns
from vera.judges._base import ClaimJudge, Judge, as_judge, check_capabilities
from vera.judges._registry import create_judge
from vera.metrics._base import Metric
from vera.metrics._registry import create_metric
from vera.pipelines import _laws as laws
from vera.pipelines._core import Pipeline
from vera.providers._batch import batch_journal, check_batch_provider
from vera.providers._batch_journal import HistoryBatchJournal
from vera.providers._ready import local_defaults
from vera.providers._registry import provider_names

LAW_QUERIES = 5
"""Queries the pipeline laws are checked on."""


@dataclass(frozen=True)
class Bindings:
    """Live objects given from Python, used in place of what the plan names."""

    data: SampleSource | None = None
    metrics: Sequence[Metric] | None = None
    judge: Judge | ClaimJudge | None = None
    pipeline: Pipeline | None = None
    baselines: Mapping[str, Pipeline] = field(default_factory=dict)
    resume_from: Mapping[str, SampleResult] | None = None
    """Results of an earlier run by sample id: kept, not evaluated again."""
    keep_samples: bool = True
    """Keep every sample's result in `Report.samples`. False streams them: each goes to the
    run store as it finishes and leaves memory (`RunResult.results()` reads them back), so a
    run's memory does not grow with its size, baselines and `--regression` included: their
    paired statistics read the pairs from the store. Without a history a run with baselines
    streams to a temporary store, removed with the `RunResult`; one without baselines keeps
    its results (it writes no file). A baseline's pass always streams."""


class RunObserver:
    """Hears how a run goes; every method does nothing unless overridden (the CLI's progress
    bar, a callback from Python)."""

    def run_started(self, run_id: str) -> None:
        """The run was recorded in the history under `run_id`."""

    def pass_started(self, pipeline: str | None, total: int | None, done: int) -> None:
        """A pass over the samples begins: the system's (`pipeline` None when the responses
        came with the data) or a baseline's; `done` of `total` were finished earlier."""

    def sample_finished(self, result: SampleResult) -> None:
        """One sample of the current pass has its result."""

    def pass_finished(self) -> None:
        """The current pass is over."""

    def batch_changed(self, line: str) -> None:
        """A provider batch of a `--batch` run was submitted or changed state."""


class ExitCode(IntEnum):
    """How `vera eval` exits, and `RunResult.exit_code` (as pytest's `ExitCode`)."""

    OK = 0
    """Every gate held."""
    GATE_FAILED = 1
    """A gate failed: a threshold, a regression or a sample's verdict."""
    USAGE = 2
    """Bad usage or input: nothing was measured."""
    INCOMPLETE = 3
    """The run did not measure everything it was asked to (errors, a stop, a budget)."""


@dataclass(frozen=True)
class RunResult:
    """A finished run: its report, where it is stored, and what the gates found.

    `exit_code` reads the outcome the way `vera eval` exits (see docs/reliability.md):
    0 every sample scored and every gate holds; 1 a gate failed (unfaithful answers beyond
    `max_unfaithful` included); 2 the run stopped on a failure every sample would hit (a
    rejected key); 3 the run is incomplete: samples errored or were skipped beyond
    `max_errors`, or no sample could be scored at all.
    """

    plan: RunPlan
    report: Report
    run_id: str | None = None
    gate_failures: tuple[str, ...] = ()
    compared_with: str | None = None
    """The stored run a regression check compared against, if any."""
    unstored: tuple[tuple[int, SampleResult], ...] = ()
    """Results (by dataset position) a streamed run could not store: the run history failed
    a write (a full disk) and the run stopped."""
    scratch: _Scratch | None = field(default=None, repr=False, compare=False)
    """The temporary store of a streamed run without a history (removed with this result)."""
    consistency: Report | None = field(default=None, repr=False, compare=False)
    """On conversations, the report of the consistency pass: each turn again, judged
    against the assistant's own earlier turns alone (not stored; its counts are in
    `report.conversations`). None for a run of anything else."""
    baseline_shortfalls: tuple[str, ...] = ()
    """Each baseline whose pass measured less than it was asked to, and why ("baseline
    naive-rag: 28 of 28 samples errored or were skipped ..."): the run is incomplete (exit 3)."""

    def results(self) -> Iterable[SampleResult]:
        """Every sample's result in dataset order: `report.samples`, or, for a streamed run,
        read from the run store a batch at a time (with those it could not store)."""
        if self.report.samples or not self.report.counts.total:
            return self.report.samples
        settings = self.plan.settings
        if self.scratch is not None and self.scratch.run_id is not None:
            where, run_id = self.scratch.path, self.scratch.run_id
        elif self.run_id is not None:
            where, run_id = settings.history_path or DEFAULT_HISTORY_PATH, self.run_id
        else:
            return self.report.samples
        return _stored_results(where, settings.lock_timeout, run_id, self.unstored)

    @property
    def streamed(self) -> bool:
        """Whether the results went to the store only (see `Bindings.keep_samples`)."""
        return not self.report.samples and bool(self.report.counts.total)

    @property
    def incomplete(self) -> str | None:
        """Why the run measured less than it was asked to, or None when it is complete: the
        system's pass first, then each baseline's (a comparison with a baseline that measured
        nothing is no comparison)."""
        found = _shortfall(self.report.counts, self.plan.settings)
        found = found or _nothing_applied(self.report)
        return found or next(iter(self.baseline_shortfalls), None)

    @property
    def remedy(self) -> str | None:
        """What to do about an incomplete run, fitted to its cause; None when it is complete.

        `--max-errors` only lets some samples fail, so it is advised only when some were
        scored; a run stopped by a failure every sample would hit (a missing key, a server
        that is down) is fixed where its reason says (the variable to set, the URL to check).
        """
        if self.incomplete is None:
            return None
        stopped, counts = self.report.stopped, self.report.counts
        if _nothing_applied(self.report) is not None:
            return (
                "choose metrics that apply to these samples with this judge (vera metrics "
                "lists what each reads), or give the samples and judge what they need"
            )
        if stopped is None and _shortfall(counts, self.plan.settings) is None:
            return (
                "the baseline's pipeline failed on its samples: fix it (run it alone with "
                "--pipeline to see each sample's error), or drop that --baseline"
            )
        if stopped is not None and not stopped.planned:
            return f"fix what stopped it and run again: {stopped.reason}"
        if stopped is not None:
            return f"it stopped at a limit you set ({stopped.reason}); raise it to go further"
        if counts.scored == 0 and counts.errors:
            return (
                f"every sample that was tried errored ({counts.errors} of "
                f"{counts.total}); fix the errors above (--max-errors cannot help: it lets "
                "some samples error, and none was scored)"
            )
        if counts.scored == 0:
            return "nothing was scored; check that the samples have what the metrics read"
        return "fix the errors above, or allow some with --max-errors"

    @property
    def exit_code(self) -> int:
        stopped = self.report.stopped
        if stopped is not None and not stopped.planned:
            return ExitCode.USAGE
        if self.incomplete is not None:
            return ExitCode.INCOMPLETE
        if self.gated and self.gate_failures:
            return ExitCode.GATE_FAILED
        return ExitCode.OK

    @property
    def gated(self) -> bool:
        """Whether gates checked the run: the plan's (`RunPlan.gated`), or the answer-verdict
        gate, which holds on every run that verified claims (`Report.answers`)."""
        return self.plan.gated or self.report.answers is not None

    @property
    def passed(self) -> bool:
        """No gate failed (vacuously true for an ungated run)."""
        return not self.gate_failures


@dataclass(frozen=True)
class Components:
    """What a plan names, built: the data, metrics, judge and pipelines of one run."""

    data: SampleSource
    metrics: list[Metric]
    judge: Judge
    system: Pipeline | None
    baselines: dict[str, Pipeline]
    system_spec: str | None = None
    """The plan's name of `system` (None: the responses came with the data, or the pipeline
    was given from Python)."""
    built: frozenset[str] = frozenset()
    """The names of the baselines built from the plan (not given from Python)."""

    def spec_of(self, pipeline: Pipeline | None) -> str | None:
        """The plan's name of `pipeline`, from which a worker process rebuilds it; None for
        one given from Python as an object (or none)."""
        if pipeline is None:
            return None
        if pipeline is self.system:
            return self.system_spec
        names = (n for n, p in self.baselines.items() if p is pipeline and n in self.built)
        return next(names, None)

    def samples(self, quick: bool, rows: Iterable[Sample] | None = None) -> Iterable[Sample]:
        """The samples a pass uses, of `rows` (a pass over the data, by default a new one):
        all, or the first few with `quick`."""
        rows = self.data.read() if rows is None else rows
        return itertools.islice(rows, QUICK_SAMPLES) if quick else rows


def _data(plan: RunPlan, bindings: Bindings) -> SampleSource:
    return bindings.data if bindings.data is not None else open_plan_data(plan)


def _judge(plan: RunPlan, bindings: Bindings) -> Judge:
    # A plugin's factory may return a bare ClaimJudge, as Python may give one: adapted alike.
    given = bindings.judge
    return as_judge(
        given if given is not None else create_judge(plan.settings.judge, plan.settings)
    )


def build_components(plan: RunPlan, bindings: Bindings | None = None) -> Components:
    """Build what `plan` names; objects in `bindings` stand in for their names."""
    bindings = bindings or Bindings()
    if plan.settings.executor not in EXECUTORS:  # before any sample: exit 2, the known names
        raise EXECUTORS.unknown(plan.settings.executor)
    _check_batch(plan, bindings)
    data = _data(plan, bindings)
    metrics = list(bindings.metrics or [create_metric(m.name, **m.options) for m in plan.metrics])
    judge = _judge(plan, bindings)
    check_capabilities(judge, {m.name: m.needs for m in metrics})
    # A pipeline given from Python is the system; the plan's names are built.
    spec = None if bindings.pipeline is not None else system_spec(plan, data)
    names = [*([spec] if spec else []), *plan.baselines]
    if bindings.pipeline is not None or names or bindings.baselines:
        _refuse_answering_turns(data)
    built = plan_pipelines(plan, data, judge, [n for n in names if n not in bindings.baselines])
    system = bindings.pipeline or (built.pop(spec) if spec else None)
    # The system's entry is taken out above, so it is never its own baseline.
    baselines = {**built, **bindings.baselines}
    return Components(data, metrics, judge, system, baselines, spec, frozenset(built))


def _refuse_answering_turns(data: SampleSource) -> None:
    """Refuse (exit 2) a pipeline or baseline over conversation turns, as the first sample
    shows them: each would answer a turn's last question alone, without the conversation
    before it, in place of the recorded answer (a turn further on is refused by the runner)."""
    first = next(iter(data.read()), None)
    if first is None or turn_ref(first) is None:
        return
    raise ConfigError(
        f"the samples are conversation turns ({first.id}), "
        "and a pipeline or baseline answers one query without the history before it: replay "
        "the conversations through your system with vera conversations DATA --assistant "
        "module:function, or in Python evaluate_conversations(data, assistant=...) "
        "(vera._conversations.pipeline_assistant(pipeline) makes a pipeline one); compare "
        "with a baseline replaying them by vera conversations DATA --baseline NAME, or "
        "evaluate_conversations(data, baselines=[NAME]); "
        "or drop --pipeline / --baseline to evaluate the recorded answers"
    )


def _check_batch(plan: RunPlan, bindings: Bindings) -> None:
    """Refuse (exit 2) `batch` for a run that would make no provider call to batch: it
    would look like a run at batch prices and be none."""
    settings = plan.settings
    if not settings.batch:
        return
    if settings.executor != "local":
        raise ConfigError("--batch runs on the local executor: drop --executor ray or --batch")
    if bindings.judge is not None:
        return
    specs = [settings.judge, settings.cascade_judge or ""]
    if plan.generator.uses_model:
        specs.append(plan.generator.spec)
    providers = set(provider_names())
    called = [s for s in specs if s.partition(":")[0].strip().lower() in providers]
    for spec in called:
        check_batch_provider(spec)  # no batch API: exit 2, naming the providers that have one
    if called:
        return
    raise ConfigError(
        f"--batch (batch = true) sends provider calls in batches, and this run makes none "
        f"(judge {settings.judge!r}): use --judge openai:MODEL or anthropic:MODEL, or drop "
        "--batch"
    )


def stored_plan(
    run_id: str, history: Path | str | None = None, *, named: Mapping[str, object] | None = None
) -> tuple[RunPlan, str]:
    """The plan of a stored run and its full id, to resume it as it was asked for.

    The history is data, so it never chooses code: a pipeline (module:function or URL), a
    prompts folder or a plugin it names is used only when `named` names it again with the same
    value (keys as `vera._plan._plan.NAMED_AGAIN_FLAGS`: `{"pipeline": "my_rag:answer"}`);
    otherwise, or when a value given differs from the stored one, `ConfigError` says both.
    """
    store = RunStore(history or DEFAULT_HISTORY_PATH, read_only=True)
    try:
        try:
            record = store.get(run_id)
        except JsonRefused as exc:  # a stored plan edited to nest without end, say
            raise ConfigError(
                f"{store.path}: run {run_id}'s stored options are damaged: {exc}"
            ) from None
        plan = named_again(store.plan(record.id), named or {}, record.id)
        return _with_secrets(plan, record.id), record.id
    finally:
        store.close()


def _stored_results(
    path: Path, lock_timeout: float, run_id: str, unstored: Sequence[tuple[int, SampleResult]]
) -> Iterator[SampleResult]:
    # Only read: a history that just failed a write (full, read-only) can still be read.
    store = RunStore(path, lock_timeout=lock_timeout, read_only=True)
    try:
        merged = heapq.merge(store.iter_positioned(run_id), unstored, key=lambda item: item[0])
        for _, result in merged:
            yield result
    finally:
        store.close()


def _with_secrets(plan: RunPlan, run_id: str) -> RunPlan:
    """`plan` with the base URLs the store redacted given back from the environment.

    The store never keeps a key, so a URL that carried one must come from where it came from
    the first time; `VERA_JUDGE_BASE_URL` is read for the judge's.
    """
    settings = plan.settings
    if is_redacted(settings.judge_base_url):
        given = os.environ.get("VERA_JUDGE_BASE_URL")
        if not given or redact(given) != settings.judge_base_url:
            raise ConfigError(
                f"run {run_id} sent its judge calls to {settings.judge_base_url}, whose "
                "credentials VERA does not store; set VERA_JUDGE_BASE_URL to the full URL "
                "to resume it"
            )
        plan = plan.model_copy(
            update={"settings": settings.model_copy(update={"judge_base_url": given})}
        )
    if is_redacted(plan.generator.base_url):
        raise ConfigError(
            f"run {run_id}'s generator URL {plan.generator.base_url} carried credentials, "
            "which VERA does not store; start the run again instead of resuming it"
        )
    return plan


class _Recorder:
    """Commits each finished sample of a pass to the store, at once and at its dataset
    position, so a killed run keeps it and the store reads back in dataset order: the
    system's results as the run's, a baseline's (`of`) under the baseline's name.

    When the store fails a write (a full disk), the `StoreWriteError` stops the run (the
    runner hears it as a stop), and this and every later result is kept in `unstored`, so
    the run's reports still have them."""

    def __init__(
        self,
        store: RunStore | None,
        run_id: str | None,
        *,
        pass_name: str | None = None,
        run: _Recorder | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.pass_name = pass_name
        self.run = run
        self.failure: StoreWriteError | None = None
        self.unstored: list[tuple[int, SampleResult]] = []

    def of(self, pass_name: str) -> _Recorder:
        """The recorder of a baseline's pass of this run; a write it fails fails the run."""
        return _Recorder(self.store, self.run_id, pass_name=pass_name, run=self)

    def pairs(self, pass_name: str) -> Iterator[tuple[SampleResult, SampleResult]]:
        """The run's results paired by sample id with those of its pass `pass_name`, read
        from the store in sample-id order."""
        if self.store is None or self.run_id is None:
            raise RuntimeError("a run with baselines records to a store (a temporary one)")
        return pass_pairs(self.store, self.run_id, pass_name)

    def __call__(self, position: int, result: SampleResult) -> None:
        if self.store is None or self.run_id is None:
            return
        if self.failure is None:
            try:
                if self.pass_name is None:
                    self.store.add_result(self.run_id, position, result)
                else:
                    add_pass_result(self.store, self.run_id, self.pass_name, position, result)
                return
            except StoreWriteError as exc:
                self.failure = exc
                if self.run is not None and self.run.failure is None:
                    self.run.failure = exc
                self.unstored.append((position, result))
                raise
        self.unstored.append((position, result))


async def _pass(
    plan: RunPlan,
    parts: Components,
    pipeline: Pipeline | None,
    observer: RunObserver,
    *,
    record: _Recorder,
    done: Mapping[str, SampleResult] | None = None,
    keep: bool = True,
    record_resumed: bool = False,
) -> Report:
    """One pass over the samples, with `pipeline` answering them when given, on the executor
    the plan names; `keep` False leaves the results to `record` (see `Bindings.keep_samples`),
    and `record_resumed` hands it the `done` ones too (given from Python, not yet stored)."""
    total = parts.data.size_hint()
    if plan.quick and total is not None:
        total = min(total, QUICK_SAMPLES)
    observer.pass_started(pipeline.name if pipeline else None, total, len(done or {}))
    settings = _run_settings(plan)
    work = PassWork(
        parts.metrics,
        parts.judge,
        pipeline,
        parts.spec_of(pipeline),
        group_by=plan.group_by,
        limits=SampleLimits.of(settings),
        concurrency=_concurrency(plan),
        size_hint=total,
    )
    # Each pass reads the data afresh and keeps its own invalid-row log.
    rows = parts.data.read()
    try:
        return await run_pass(
            parts.samples(plan.quick, rows),
            work,
            create_executor(plan),
            dataset_name=parts.data.name,
            progress=observer.sample_finished,
            record=record if record.store is not None else None,
            resume_from=done,
            source=rows,
            keep_samples=keep,
            record_resumed=record_resumed,
        )
    finally:
        observer.pass_finished()


async def _extras(
    plan: RunPlan, parts: Components, report: Report, observer: RunObserver, record: _Recorder
) -> tuple[Report, tuple[str, ...]]:
    """The baselines' passes and the law checks, added to the system's report, and what each
    baseline measured less than it was asked to (`RunResult.baseline_shortfalls`). Each
    baseline's results go to the run store as they finish, and the paired statistics read
    the pairs back from it, so no pass keeps its samples for the comparison."""
    updates: dict[str, object] = {}
    shortfalls: tuple[str, ...] = ()
    if parts.baselines:
        others = {
            name: await _pass(plan, parts, pipeline, observer, record=record.of(name), keep=False)
            for name, pipeline in parts.baselines.items()
            if pipeline is not parts.system
        }
        updates["baseline_comparison"] = baseline_comparison(report, others, pairs=record.pairs)
        shortfalls = tuple(
            f"baseline {name}: {why}"
            for name, other in others.items()
            if (why := _shortfall(other.counts, plan.settings)) is not None
        )
    if plan.check_laws:
        if parts.system is None:
            raise ConfigError("--check-laws needs --pipeline (or --baseline)")
        queries = [s.query for s in itertools.islice(parts.data, LAW_QUERIES) if s.query]
        updates["categorical_tests"] = await laws.check_laws(
            parts.system, Verify(parts.judge), queries
        )
    return (report.model_copy(update=updates) if updates else report), shortfalls


def _nothing_applied(report: Report) -> str | None:
    """Why a run whose samples ran measured nothing: every metric was not applicable to
    every sample (rubrics with the offline judge, context recall without references); None
    when some metric scored some sample."""
    summaries = report.metric_summary
    if report.counts.scored == 0 or not summaries:
        return None
    if any(s.mean is not None or s.not_applicable == 0 for s in summaries.values()):
        return None
    reasons = "; ".join(
        f"{name}: {next(iter(s.not_applicable_reasons), 'not applicable')}"
        for name, s in summaries.items()
    )
    return f"no metric applied to any sample ({reasons})"


def _shortfall(counts: Counts, settings: Settings) -> str | None:
    """Why a pass measured less than it was asked to, or None when it is complete."""
    if counts.scored == 0:
        return "no sample could be scored"
    missed = counts.errors + counts.skipped
    allowed = settings.error_budget(counts.total)
    if missed > allowed:
        return (
            f"{missed} of {counts.total} samples errored or were skipped "
            f"(--max-errors allows {allowed})"
        )
    return None


async def _consistency(
    plan: RunPlan, parts: Components, report: Report, record: _Recorder
) -> tuple[Report, Report | None]:
    """On conversations, the second pass that checks each turn against the assistant's own
    earlier turns (`vera.datasets.consistency_checks`, with the run's faithfulness metric
    alone), and the report's conversation block counted again with it: consistency, and
    turns that contradict an earlier one counted unfaithful. A run without faithfulness
    does not judge turns' faithfulness, so it is not checked (no calls it did not ask for);
    nor is a run with a pipeline, whose answers are no recorded conversation."""
    metric = next((m for m in parts.metrics if m.name == FAITHFULNESS), None)
    if report.conversations is None or parts.system is not None or metric is None:
        return report, None
    checks = consistency_checks(parts.samples(plan.quick))
    if not checks:
        return report, None
    work = PassWork(
        [metric],
        parts.judge,
        None,
        None,
        limits=SampleLimits.of(_run_settings(plan)),
        concurrency=_concurrency(plan),
        size_hint=len(checks),
    )
    checked = await run_pass(checks, work, create_executor(plan), dataset_name=parts.data.name)
    tally = TurnTally()
    for result in _turn_results(report, record):
        tally.add(result)
    for result in checked.samples:
        tally.check(result)
    update: dict[str, object] = {"conversations": tally.summary()}
    usage = checked.judge_details.get("usage")
    if usage is not None:
        # One judge made both passes and counts every call it made: the run's usage is the
        # consistency pass's figure, the turns' calls included.
        update["judge_details"] = {**report.judge_details, "usage": usage}
    return report.model_copy(update=update), checked


def _turn_results(report: Report, record: _Recorder) -> Iterable[SampleResult]:
    """The run's results: kept in the report, or, for a streamed run, in its store."""
    if report.samples or record.store is None or record.run_id is None:
        return report.samples
    return (r for _, r in record.store.iter_positioned(record.run_id, damaged="skip"))


def _concurrency(plan: RunPlan) -> int:
    """Samples in flight: with `batch`, enough for a whole batch, so that each wave of
    requests (claims, then verdicts) goes in one batch rather than in many small ones."""
    settings = _run_settings(plan)
    if settings.batch:
        return max(settings.concurrency, settings.batch_size)
    return settings.concurrency


def _run_settings(plan: RunPlan) -> Settings:
    """The plan's settings, with a judge on this machine given the sample timeout and the
    samples in flight that suit one local model where they were left at their defaults
    (`vera.providers.local_defaults`; the judge's model takes its call timeout alike)."""
    settings = plan.settings
    return settings.model_copy(
        update=local_defaults(settings, settings.judge, settings.judge_base_url)
    )


class _Scratch:
    """A run store in a temporary folder, for a run without a history that has baselines or
    streams its results: the baselines pair their samples through it, and a streamed run reads
    its results back from it. It lives as long as the `RunResult` that holds it: then the
    folder is removed."""

    def __init__(self, settings: Settings) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="vera-run-")
        self.path = Path(self._folder.name) / "run.sqlite"
        self.lock_timeout = settings.lock_timeout
        self.run_id: str | None = None

    def open(self) -> RunStore:
        return RunStore(
            self.path,
            lock_timeout=self.lock_timeout,
            what="the temporary run store (a run without a history streams its results there)",
            flag="TMPDIR (a folder on a disk with room)",
            scratch=True,
        )


def _open_store(
    plan: RunPlan, parts: Components, bindings: Bindings, resume: str | None
) -> tuple[RunStore | None, _Scratch | None]:
    """The run's store: the history, or with the history off a temporary one where a
    comparison pairs samples (baselines) or the results stream (`keep_samples` False, as
    the CLI runs), so memory stays flat however many samples; None where nothing needs one
    (the results are kept in memory, and no file is written)."""
    settings = plan.settings
    if resume is not None or settings.history:
        return open_history(settings), None
    if not parts.baselines and bindings.keep_samples:
        return None, None
    scratch = _Scratch(settings)
    return scratch.open(), scratch


@contextmanager
def _run_scope(store: RunStore | None, run_id: str | None, observer: RunObserver) -> Iterator[None]:
    """What holds while a run's passes go: its batch journal (in the history file, where
    there is one) and the collector's lighter settings (`collecting_less`)."""
    journal = HistoryBatchJournal(
        None if store is None else store.file, run_id, observer.batch_changed
    )
    with batch_journal(journal), collecting_less():
        yield


async def arun_plan(
    plan: RunPlan,
    bindings: Bindings | None = None,
    *,
    resume: str | None = None,
    observer: RunObserver | None = None,
    accept: Collection[str] = (),
) -> RunResult:
    """Run `plan` in the running event loop: system, baselines, laws, history, gates.

    With `resume` (a stored run's id), the samples that run finished are kept and only the
    others are evaluated; the plan should be the stored one (`stored_plan`): a setting that
    changes a result or the bill may differ only where `accept` names it (`vera._plan.
    check_resumed`), and the data must have the content the stored run read.
    """
    observer = observer or RunObserver()
    bindings = bindings or Bindings()
    parts = build_components(plan, bindings)
    _check_unread_columns(plan, parts)
    # In every report, so that it says what it measured, whether or not a history keeps it.
    fingerprint = run_fingerprint(plan, parts.data, parts.judge, parts.metrics, parts.system)
    store, scratch = _open_store(plan, parts, bindings, resume)
    try:
        history = store if scratch is None else None
        baseline = _baseline(plan, history, fingerprint, parts.data.name)
        run_id, done = _start(store, plan, parts, resume, bindings, accept, scratch is not None)
        if history is not None and run_id is not None:
            observer.run_started(run_id)
        recorder = _Recorder(store, run_id)
        with _run_scope(store, run_id, observer):
            report = await _pass(
                plan,
                parts,
                parts.system,
                observer,
                record=recorder,
                done=done,
                keep=bindings.keep_samples or store is None,
                record_resumed=resume is None,
            )
            report, shortfalls = await _extras(plan, parts, report, observer, recorder)
            report, checked = await _consistency(plan, parts, report, recorder)
        report = report.model_copy(update={"fingerprint": fingerprint, "regression": baseline})
        failures = _gates(plan, report, history, run_id)
        _refuse_unmeasured(plan, parts, report, recorder if resume is None else None)
        report = _record_end(recorder, report)
    finally:
        if store is not None:
            store.close()
    compared = baseline.compared_with if baseline is not None else None
    if scratch is not None:
        scratch.run_id, run_id = run_id, None  # not in any history: nothing to resume or show
    unstored = tuple(recorder.unstored)
    return RunResult(
        plan, report, run_id, tuple(failures), compared, unstored, scratch, checked, shortfalls
    )


def _record_end(recorder: _Recorder, report: Report) -> Report:
    """Store the run's report and mark it finished; a run that could not record everything
    is marked `stopped` instead (as far as the file still takes it), and its report says
    why, so it never passes for a finished one."""
    store, run_id = recorder.store, recorder.run_id
    if store is None or run_id is None:
        return report
    if recorder.failure is None:
        try:
            store.finish(run_id, report)
            return report
        except StoreWriteError as exc:
            recorder.failure = exc
    if report.stopped is None:
        report = report.model_copy(
            update={"stopped": RunStop(reason=str(recorder.failure), planned=False)}
        )
    if not store.stop(run_id, report):
        warnings.warn(
            f"run {run_id} could not be marked stopped in {store.path} either; it shows as "
            f"running, and `vera eval --resume {run_id}` completes it",
            stacklevel=2,
        )
    return report


def _baseline(
    plan: RunPlan, store: RunStore | None, fingerprint: RunFingerprint, dataset: str
) -> RegressionCheck | None:
    """The stored run the regression gate will compare with, found (or refused, exit 2)
    before any sample is evaluated; None when the plan has no regression gate."""
    if not (plan.regression or plan.baseline_run):
        if plan.any_plan:
            raise ConfigError(
                "--any-plan (any_plan=True) only widens a regression gate: add --regression "
                "or --baseline-run RUN_ID, or drop it"
            )
        return None
    if store is None:
        raise regression_without_history(plan)
    return regression_baseline(store, plan, fingerprint, dataset)


def _refuse_unmeasured(
    plan: RunPlan, parts: Components, report: Report, recorder: _Recorder | None
) -> None:
    """Refuse (exit 2) a run that measured nothing, or gates a score it has not; its stored
    start (`recorder`'s, None for a resumed run, whose results stay) is removed, so that bad
    input never lists as a finished run of its dataset."""
    try:
        _check_measured(plan, parts, report)
        _check_conversation_gates(plan, report)
    except VeraError:
        if recorder is not None and recorder.store is not None and recorder.run_id is not None:
            recorder.store.discard(recorder.run_id)
        raise


def _check_measured(plan: RunPlan, parts: Components, report: Report) -> None:
    """Refuse a run that had nothing to measure: bad input, not a result (exit 2)."""
    counts = report.counts
    where = plan.dataset.source or parts.data.name
    if counts.total == 0 and counts.invalid_rows == 0:
        raise DatasetError(f"no samples in {where}")
    if counts.total and counts.needs_pipeline == counts.total:
        unread = ", ".join(report.unrecognised_fields)
        hint = (
            f" (fields VERA did not read: {unread}; is one of them the response?)" if unread else ""
        )
        raise ConfigError(
            f"no sample in {where} has a response{hint}, so there is nothing to score: name "
            "the system that answers the queries with --pipeline (a baseline, module:function "
            "or a URL), or compare baselines with --baseline naive-rag"
        )


def _check_conversation_gates(plan: RunPlan, report: Report) -> None:
    """Refuse (exit 2) a gate on a conversation score over a run without conversations."""
    settings = plan.settings
    refused = conversation_gates_refused(
        report, settings.min_faithful_turns, settings.min_consistency
    )
    if refused is not None:
        raise ConfigError(refused)


_READS_CONTEXTS = frozenset(Need) - {Need.REFERENCE_IN_RESPONSE}
"""Judge work done against the contexts: with none, a metric needing it scores nothing true."""


def _check_unread_columns(plan: RunPlan, parts: Components) -> None:
    """Refuse (exit 2) a run whose samples lack their responses, or their contexts where its
    metrics read them, when a column VERA did not read holds them under another name: named
    by what it holds (`unread_columns`), with the `--field` flags that map it."""
    reads_contexts = any(m.needs & _READS_CONTEXTS for m in parts.metrics)
    if parts.system is not None or (parts.baselines and not reads_contexts):
        return
    found = unread_columns(parts.data, QUICK_SAMPLES if plan.quick else None)
    where = plan.dataset.source or parts.data.name
    if found.response is not None and not parts.baselines:
        raise ConfigError(
            f"no sample in {where} has a response, so there is nothing to score; its column "
            f"{found.response!r} holds the longest text VERA did not read. If it holds the "
            f"answers, map it: {found.flags()} (fields={found.python()} in Python, or under "
            "[tool.vera.fields]); "
            "if not, name the system that answers with --pipeline"
        )
    if found.contexts is None or not reads_contexts:
        return
    column = found.contexts
    held = "a list of texts" if found.contexts_listed else "text"
    question = f", and {found.query!r} a shorter text, likely the question" if found.query else ""
    raise ConfigError(
        f"no sample in {where} has contexts, so every claim would be NO_EVIDENCE and score 0; "
        f"its column {column!r} holds {held} VERA did not read{question}. If it holds the "
        f"retrieved contexts, map it: {found.flags()} (fields={found.python()} in Python, or "
        "under [tool.vera.fields]); if not, move it under 'metadata' and name the contexts' "
        "column the same way"
    )


def _start(
    store: RunStore | None,
    plan: RunPlan,
    parts: Components,
    resume: str | None,
    bindings: Bindings,
    accept: Collection[str] = (),
    scratch: bool = False,
) -> tuple[str | None, Mapping[str, SampleResult]]:
    """The run's id in the store (new, or the resumed one) and the results it already has.
    A new run in a history keeps its data's content digest, which a resume checks."""
    if store is None:
        return None, bindings.resume_from or {}
    if resume is not None:
        run_id = store.get(resume).id
        stored = store.plan(run_id)
        check_resumed(stored, plan, run_id, accept)
        _check_same_data(stored, parts, bindings, run_id)
        return run_id, store.finished(run_id)
    if scratch:  # never resumed: no digest to keep
        return store.start(parts.data.name, plan), bindings.resume_from or {}
    digest = _data_digest(plan, parts, bindings)
    dataset = plan.dataset.model_copy(update={"digest": digest})
    stored = plan.model_copy(update={"dataset": dataset})
    return store.start(parts.data.name, stored), bindings.resume_from or {}


def _data_digest(plan: RunPlan, parts: Components, bindings: Bindings) -> str:
    """The content digest of the run's data: its file's bytes where it is one file (no second
    parse), else every field of every sample it reads."""
    source = plan.dataset.source
    if bindings.data is None and source is not None and Path(source).is_file():
        return file_digest(Path(source))
    return content_digest(parts.samples(plan.quick))


def _check_same_data(stored: RunPlan, parts: Components, bindings: Bindings, run_id: str) -> None:
    """Refuse (exit 2) to resume a run whose data changed since it started: its report would
    hold two datasets. (A run stored before VERA kept the digest is not checked.)"""
    if stored.dataset.digest is None:
        return
    now = _data_digest(stored, parts, bindings)
    if now != stored.dataset.digest:
        where = stored.dataset.source or parts.data.name
        raise ConfigError(
            f"run {run_id} cannot be resumed: its data {where} has changed since the run "
            f"started (content {stored.dataset.digest[:23]} then, {now[:23]} now), and one "
            "report would mix the two datasets. Put the file back as it was, or start a new "
            f"run on it (vera eval -d {where})"
        )


def _gates(
    plan: RunPlan, report: Report, history: RunStore | None, run_id: str | None
) -> list[str]:
    """What fails the run's gates: the answer-verdict gate (`--max-unfaithful`) always, and,
    on a gated plan, the others, the regression gate against `report.regression`'s run
    included: its pairs read from the history, this run's results being stored there."""
    settings = plan.settings
    # The answer-verdict gate holds on every run that verified claims, gated or not.
    failures = unfaithful_failures(report.answers, settings.max_unfaithful)
    if not plan.gated:
        return failures
    failures += gate_failures(report, settings.gates)
    failures += turn_gate_failures(report, settings.min_faithful_turns, settings.min_consistency)
    compared = report.regression.compared_with if report.regression is not None else None
    if compared is not None and history is not None and run_id is not None:
        previous = history.aggregates(compared)
        if previous is not None:
            pairs = history.paired(run_id, compared)
            failures += regression_failures(report, previous, compared, pairs=pairs)
    return failures


def run_plan(
    plan: RunPlan,
    bindings: Bindings | None = None,
    *,
    resume: str | None = None,
    observer: RunObserver | None = None,
    accept: Collection[str] = (),
) -> RunResult:
    """`arun_plan` from synchronous code: the one event loop of the run. Inside a running
    loop (Jupyter, an async app) use `await arun_plan(...)`."""
    return run_sync(
        arun_plan(plan, bindings, resume=resume, observer=observer, accept=accept),
        inside_a_loop="vera was called inside a running event loop (Jupyter, an async app); "
        "use the async form there: `await vera.aevaluate(...)` or `await vera.arun_plan(...)`",
    )
