"""`vera.evaluate`, `vera.run_evaluation` and their async forms: a run from Python, through
the same plan and run core as `vera eval`.

    report = vera.evaluate(df, metrics=["faithfulness", "hallucination_rate"],
                           judge="openai:gpt-4o-mini", baselines=["naive-rag"])
    result = vera.run_evaluation("answers.jsonl", threshold=0.8)   # RunResult
    result.gate_failures, result.exit_code                        # as `vera eval` exits

Data may be a file path or bundled name, `Sample`s, dicts, a pandas DataFrame or a Hugging Face
`Dataset`; metrics, judge and pipelines may be names or objects. Names are checked at once: an
unknown one raises `ConfigError` with the known names. Every option is a typed keyword of
`EvaluateOptions`; an unknown one raises `TypeError` naming the closest. No config file or
environment is read unless `settings` is given (`vera.load_settings()` reads them as the CLI
does), and nothing is written to the run history unless `history` says where.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from vera._plan._plan import (
    DatasetRef,
    GeneratorSpec,
    MetricSpec,
    RetrievalOptions,
    RunPlan,
    build_plan,
    metric_specs,
)
from vera._plan._setting_uses import settings_with
from vera._plan._settings import Settings
from vera._review._review import review_calibration
from vera._run._engine import Bindings, ExitCode, RunObserver, RunResult, arun_plan, run_plan
from vera._stats._calibration import CalibrationTally
from vera._store._history import open_history
from vera._types._errors import ConfigError
from vera._types._report import Calibration, Report, SampleResult
from vera.datasets import open_dataset
from vera.datasets._source import SampleSource
from vera.judges._base import Judge
from vera.metrics._base import Metric
from vera.metrics._registry import create_metric
from vera.metrics._rubric import Rubric
from vera.pipelines._core import Pipeline
from vera.pipelines._user import as_pipeline
from vera.render._outputs import ReportTargets, open_run_view, write_reports
from vera.render._run_view import RunView

ProgressCallback = Callable[[SampleResult], None]


class EvaluateOptions(TypedDict, total=False):
    """Every option of `vera.evaluate`, `run_evaluation` and `plan_evaluation` beside `data`,
    `metrics`, `judge` and `progress`, each as the `vera eval` flag it matches (see
    docs/python.md). Absent or None: the setting's value from `settings` (default: VERA's)."""

    # What is evaluated.
    pipeline: Pipeline | str | object | None
    """--pipeline: a name, a `Pipeline`, a function, a LangChain Runnable or a LlamaIndex
    query engine."""
    baselines: Sequence[str] | Mapping[str, Pipeline]
    """--baseline: names, or a mapping of name to `Pipeline`."""
    generator: str | None
    generator_base_url: str | None
    retrieval: RetrievalOptions | None
    """--top-k, --chunk-size, --chunk-overlap, --documents."""
    dataset_name: str | None
    format: str | None
    skip_invalid: bool
    user_facts: bool | None
    agent_steps: bool | None
    """--agent-steps: verify an agent trace's intermediate assistant messages too."""
    """--no-user-facts: in conversations, the user's words are no evidence."""
    fields: Mapping[str, str] | None
    """--field: VERA field -> your column, `{"contexts": "docs"}`."""
    quick: bool
    group_by: Sequence[str]
    check_laws: bool
    resume_from: Mapping[str, SampleResult] | None
    # Gates (see `RunResult.exit_code`).
    min_faithful_turns: float | None
    """--min-faithful-turns: on conversations, the least share of faithful turns."""
    min_consistency: float | None
    """--min-consistency: on conversations, the least consistency of each conversation."""
    threshold: float | None
    regression: bool
    """--regression: fail on a significant drop from the last comparable run (needs
    `history`)."""
    baseline_run: str | None
    any_plan: bool
    max_errors: int | str | None
    """--max-errors: samples that may error or be skipped, a count or "5%"."""
    max_unfaithful: int | str | None
    """--max-unfaithful: answers that may be unfaithful (a claim NO_EVIDENCE or
    CONTRADICTED) before the gate fails, a count or "5%"; default 0."""
    # Settings, over `settings`.
    settings: Settings | None
    history: bool | str | Path | None
    """--history PATH: record the run there (True: the settings' path; False is
    --no-history; None: as `settings` say, the CLI's default); off by default."""
    concurrency: int | None
    judge_base_url: str | None
    judge_mode: Literal["batched", "per_claim", "truths", "single_call"] | None
    judge_output: Literal["auto", "schema", "json", "prompt"] | None
    """--judge-output: how JSON is asked of an OpenAI-compatible server."""
    judge_replies: Literal["auto", "compact", "reasoned"] | None
    """--judge-replies: the bundled prompt set, compact or reasoned (default: reasoned for a
    model served on this machine)."""
    judge_samples: int | None
    judge_temperature: float | None
    judge_max_tokens: int | None
    judge_prompts_dir: str | Path | None
    judge_batch_rubrics: bool | None
    """False asks each rubric in a call of its own, not in the faithfulness verification."""
    cascade_judge: str | None
    cascade_low: float | None
    cascade_high: float | None
    offline_min_support: float | None
    language: str | None
    """--language: the offline judge reads every sample in this language (ISO 639-1)."""
    timeout: float | None
    retries: int | None
    fail_fast: int | None
    executor: str | None
    """--executor: "local", "ray", or a plugin's executor (the `vera.executors` group)."""
    ray_address: str | None
    ray_workers: int | None
    cache: bool | None
    """False is --no-cache."""
    cache_path: str | Path | None
    max_cost: float | None
    batch: bool | None
    """--batch: judge and generator calls through the provider's batch API."""
    batch_retry: Literal["batch", "direct"] | None
    batch_poll: float | None
    batch_window: float | None
    batch_size: int | None
    max_response_chars: int | None
    max_context_chars: int | None
    sample_timeout: float | None
    # After the run (`run_evaluation` and `evaluate`).
    reports: ReportTargets | None
    """--output/--html/--markdown/--junit/--report: format -> path, or (format, path) pairs,
    written from the finished run as `vera eval` writes them."""
    otel_endpoint: str | None
    """--otel-endpoint: send the finished run as OpenTelemetry spans (the `otel` extra)."""
    phoenix: str | None
    """--phoenix: each answer's verdict, scores and claims as annotations on the span it came
    from in the Phoenix at this URL (the `phoenix` extra); answers it could not place are
    said in a `UserWarning`."""
    mlflow: str | None
    """--mlflow: log the finished run to this MLflow experiment, after its reports (the
    `mlflow` extra; docs/integrations-mlflow.md)."""


_SETTING_OPTIONS = settings_with(keyword=True)
"""Options that are settings of the same name, applied over `settings` (`SETTING_USES`)."""

OPTION_NAMES: frozenset[str] = frozenset(EvaluateOptions.__annotations__)
"""Every keyword `EvaluateOptions` takes."""

_ARGUMENTS = ("data", "metrics", "judge", "progress")


def _check_options(function: str, options: Mapping[str, object]) -> None:
    """`TypeError` for a keyword no option has, naming the closest (as Python would, and more)."""
    unknown = sorted(set(options) - OPTION_NAMES)
    if not unknown:
        return
    known = sorted(OPTION_NAMES | set(_ARGUMENTS))
    close = difflib.get_close_matches(unknown[0], known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise TypeError(
        f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint} "
        "(every option: vera.EvaluateOptions, docs/python.md)"
    )


class _CallbackObserver(RunObserver):
    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback

    def sample_finished(self, result: SampleResult) -> None:
        self.callback(result)


def _metrics(
    metrics: Sequence[Metric | str] | str | None,
    threshold: float | None,
    plugins: Mapping[str, Mapping[str, Any]],
) -> tuple[Sequence[str] | tuple[MetricSpec, ...], list[Metric] | None]:
    """The metrics for `build_plan` (names, or specs where objects were given), and the metric
    objects when any were given as objects."""
    given: list[Metric | str] = [metrics] if isinstance(metrics, str) else list(metrics or [])
    names = [m for m in given if isinstance(m, str)]
    if len(names) == len(given):
        return names, None  # none named: `build_plan` adds the defaults and the rubrics
    named = iter(metric_specs(names, threshold, plugins))
    objects: list[Metric] = []
    for metric in given:
        if isinstance(metric, str):
            spec = next(named)
            objects.append(create_metric(spec.name, **spec.options))
        elif isinstance(metric, Metric):
            objects.append(metric)
        else:
            raise ConfigError(
                f"{type(metric).__name__} is not a metric: give a name such as "
                "'faithfulness' or an object following vera.metrics.Metric"
            )
    # A rubric is data: its spec carries its definition, so a resumed run rebuilds it.
    specs = tuple(
        MetricSpec(name=m.name, options={"rubric": m.model_dump(mode="json")})
        if isinstance(m, Rubric)
        else MetricSpec(name=m.name)
        for m in objects
    )
    return specs, objects


def _overrides(judge: Judge | str | None, options: EvaluateOptions) -> dict[str, object]:
    """The settings `options` give, over `settings` (None: not given, the settings' value)."""
    given: Mapping[str, object] = options
    overrides: dict[str, object] = {name: given.get(name) for name in _SETTING_OPTIONS}
    history = options.get("history", False)
    if history is not None:  # None (the CLI without --no-history / --history): as configured
        overrides["history"] = bool(history)
        overrides["history_path"] = Path(history) if isinstance(history, str | Path) else None
    fields = options.get("fields")
    overrides["fields"] = dict(fields) if fields else None  # added to the [fields] table
    overrides["judge"] = judge if isinstance(judge, str) else None
    return overrides


def plan_evaluation(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    origin: str = "vera.evaluate",
    **options: Unpack[EvaluateOptions],
) -> tuple[RunPlan, Bindings]:
    """The plan `evaluate` runs, and the objects given in place of names (see `evaluate`).

    The one plan builder: `vera eval` parses its flags into `options` and calls it too, with
    `origin` "command line", the name an invalid setting's error gives them. The settings
    `options` give apply over `options["settings"]` (default VERA's), through `build_plan`. A
    dataset file or bundled name is opened here to check it, and again by the run from the
    plan (as `vera eval --resume` opens it); other data travels in the `Bindings`.
    """
    _check_options("plan_evaluation", options)
    experiment = options.get("mlflow")
    if experiment is not None:
        from vera.integrations._mlflow_run import require_mlflow

        require_mlflow(experiment)  # before the run, not after it
    base = options.get("settings") or Settings()
    wanted, metric_objects = _metrics(metrics, options.get("threshold"), base.plugins)
    source = str(data) if isinstance(data, str | Path) else None
    plan = _plan(source, wanted, judge, options, base, origin)
    settings, ref = plan.settings, plan.dataset
    dataset = open_dataset(
        data,
        format=ref.format,
        skip_invalid=ref.skip_invalid,
        name=ref.name,
        fields=settings.fields,
        user_facts=settings.user_facts,
        agent_steps=settings.agent_steps,
    )
    bound = None if source is not None else dataset
    pipeline, baselines = options.get("pipeline"), options.get("baselines", ())
    bindings = _bindings(bound, metric_objects, judge, pipeline, baselines, options)
    return plan, bindings


def _plan(
    source: str | None,
    metrics: Sequence[str] | tuple[MetricSpec, ...],
    judge: Judge | str | None,
    options: EvaluateOptions,
    settings: Settings,
    origin: str,
) -> RunPlan:
    """The `RunPlan` of `plan_evaluation`, by `build_plan`: the names and specs `options` give,
    and their settings over `settings`."""
    pipeline, baselines = options.get("pipeline"), options.get("baselines", ())
    dataset = DatasetRef(
        source=source,
        name=options.get("dataset_name"),
        format=options.get("format"),
        skip_invalid=options.get("skip_invalid", False),
    )
    return build_plan(
        dataset=dataset,
        metrics=metrics,
        threshold=options.get("threshold"),
        overrides=_overrides(judge, options),
        settings=settings,
        origin=origin,
        quick=options.get("quick", False),
        pipeline=pipeline if isinstance(pipeline, str) else None,
        baselines=tuple(baselines) if not isinstance(baselines, Mapping) else (),
        generator=GeneratorSpec(
            spec=options.get("generator") or "extractive",
            base_url=options.get("generator_base_url"),
        ),
        retrieval=options.get("retrieval") or RetrievalOptions(),
        group_by=tuple(options.get("group_by", ())),
        check_laws=options.get("check_laws", False),
        regression=options.get("regression", False),
        baseline_run=options.get("baseline_run"),
        any_plan=options.get("any_plan", False),
    )


def _bindings(
    dataset: SampleSource | None,
    metrics: list[Metric] | None,
    judge: Judge | str | None,
    pipeline: Pipeline | str | object | None,
    baselines: Sequence[str] | Mapping[str, Pipeline],
    options: EvaluateOptions,
) -> Bindings:
    """The objects given from Python in place of names."""
    return Bindings(
        data=dataset,
        metrics=metrics,
        judge=judge if judge is not None and not isinstance(judge, str) else None,
        pipeline=None if pipeline is None or isinstance(pipeline, str) else as_pipeline(pipeline),
        baselines=dict(baselines) if isinstance(baselines, Mapping) else {},
        resume_from=options.get("resume_from"),
    )


def _after_run(result: RunResult, options: EvaluateOptions) -> None:
    """The reports and spans asked for, from the finished run's one view, as `vera eval`
    writes and sends them."""
    targets, endpoint = options.get("reports"), options.get("otel_endpoint")
    phoenix = options.get("phoenix")
    experiment = options.get("mlflow")
    if not targets and not endpoint and not phoenix and experiment is None:
        return
    with open_run_view(result) as view:
        if targets:
            write_reports(view, targets)
        if endpoint:
            from vera.integrations._otel_export import export_report  # the SDK only when asked for

            export_report(view.report, endpoint, results=view.sample_results())
        if phoenix:
            _annotate_phoenix(view, phoenix)

        if experiment is not None:
            from vera.integrations._mlflow_run import log_run  # MLflow only when asked for

            log_run(result, experiment, view=view)


def _annotate_phoenix(view: RunView, url: str) -> None:
    """As `vera eval --phoenix`: answers it could not place are a warning, not silence."""
    from vera.integrations._phoenix import annotate_phoenix  # the client only when asked for

    tally = annotate_phoenix(
        view.sample_results(), view.dataset_samples(), url, judge=view.report.judge
    )
    if tally.without_span or tally.unknown_span:
        warnings.warn(tally.summary(url), UserWarning, stacklevel=4)


async def arun_evaluation(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Unpack[EvaluateOptions],
) -> RunResult:
    """`run_evaluation` in a running event loop (Jupyter, an async app)."""
    _check_options("arun_evaluation", options)
    plan, bindings = plan_evaluation(data, metrics, judge, **options)
    observer = _CallbackObserver(progress) if progress is not None else None
    result = await arun_plan(plan, bindings, observer=observer)
    _after_run(result, options)
    return result


def run_evaluation(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Unpack[EvaluateOptions],
) -> RunResult:
    """`vera eval` from Python: the run's `RunResult` (report, `run_id`, `gate_failures`,
    `exit_code` as `vera eval` exits, `incomplete` and `remedy`), through the same
    `run_plan` the CLI calls. Arguments as `evaluate`.

    Raises:
        TypeError: a keyword no option has (naming the closest).
        ConfigError, DatasetRowError, RuntimeError: as `evaluate`.
    """
    _check_options("run_evaluation", options)
    plan, bindings = plan_evaluation(data, metrics, judge, **options)
    observer = _CallbackObserver(progress) if progress is not None else None
    result = run_plan(plan, bindings, observer=observer)
    _after_run(result, options)
    return result


class GateWarning(UserWarning):
    """`vera.evaluate` returned a report of a run that would not exit 0 from `vera eval`: a
    gate failed or the run is incomplete. `vera.run_evaluation` returns the verdict itself."""


def _report_of(result: RunResult) -> Report:
    """The report, warning when the run's outcome is not a pass: a report alone carries no
    gate verdict, and a failed gate must not look like a pass."""
    code = result.exit_code
    if code != ExitCode.OK:
        stopped = result.report.stopped
        failed = stopped.reason if stopped is not None and not stopped.planned else None
        why = failed or result.incomplete or "; ".join(result.gate_failures)
        warnings.warn(
            f"vera eval would exit {code}: {why} (vera.run_evaluation returns the gate "
            "results and the exit code)",
            GateWarning,
            stacklevel=3,
        )
    return result.report


async def aevaluate(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Unpack[EvaluateOptions],
) -> Report:
    """`evaluate` in a running event loop (Jupyter, an async app)."""
    _check_options("aevaluate", options)
    result = await arun_evaluation(data, metrics, judge, progress=progress, **options)
    return _report_of(result)


def evaluate(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Unpack[EvaluateOptions],
) -> Report:
    """Evaluate `data` and return the report; `run_evaluation` returns the whole `RunResult`
    (gate results and exit code). A run that `vera eval` would not exit 0 from (a failed
    gate, an incomplete run) warns with `GateWarning`.

    Args:
        data: a file path or bundled name, `Sample`s or dicts (any field names `vera eval`
            reads), a pandas DataFrame or a Hugging Face `Dataset`.
        metrics: names (`["faithfulness", "hallucination_rate"]`, `["all"]`) or metric
            objects; default `vera._plan.DEFAULT_METRICS` (faithfulness), as `vera eval`.
        judge: a name ("offline", "offline:learned", "openai:gpt-4o-mini", …) or a judge
            object; default the offline judge.
        progress: called with each sample's result as it finishes.
        **options: the typed keywords of `EvaluateOptions`, one per `vera eval` flag:
            `pipeline`, `baselines`, `generator`, `threshold`, `regression`, `baseline_run`,
            `any_plan`, `max_errors`, `max_unfaithful`, `history`, `fields`, `concurrency`,
            `reports`, the judge's and the limits' settings, ….

    Raises:
        TypeError: a keyword no option has (naming the closest).
        ConfigError: an unknown metric, judge or pipeline name (with the known ones), or
            options that cannot work together.
        DatasetRowError: an invalid row, naming the row and the field (unless
            `skip_invalid`).
        RuntimeError: inside a running event loop; use `await vera.aevaluate(...)` there.
    """
    _check_options("evaluate", options)
    return _report_of(run_evaluation(data, metrics, judge, progress=progress, **options))


def calibrate(
    source: str | Path,
    judge: Judge | str | None = None,
    *,
    settings: Settings | None = None,
) -> Calibration:
    """How the judge agrees with human labels (`human_faithful`), and the run's figures
    corrected by them: `vera calibrate` from Python.

    `source` is a JSON report file, a labelled dataset file (evaluated with faithfulness and
    faithfulness_probability by `judge`), or the id (or a unique prefix) of a run in the
    history `settings` name: its labels stored by review (`vera._review._review`), else those its
    dataset carried.

    Raises:
        ConfigError: no sample carries a label, or no such run.
    """
    path = Path(source)
    if path.is_file() and _is_report(path):
        tally = CalibrationTally.of(Report.model_validate_json(path.read_text()).samples)
        found = tally.calibration()
    elif path.exists() or not isinstance(source, str):
        # faithfulness_probability ranks where the judge gives probabilities (`ranked_by`).
        metrics = ["faithfulness", "faithfulness_probability"]
        found = evaluate(source, metrics, judge, settings=settings).calibration
    else:
        store = open_history(settings or Settings())
        try:
            # Labels stored by review (`vera view --review`) take the dataset's place.
            run_id = store.get(source).id
            found = review_calibration(store, run_id)
            if found is None:
                found = CalibrationTally.of(store.iter_results(run_id)).calibration()
        finally:
            store.close()
    if found is None:
        raise ConfigError(
            f"no sample of {source} carries a human label: give some samples "
            "`human_faithful: true` or `false` to calibrate the judge against"
        )
    return found


def _is_report(path: Path) -> bool:
    """Whether `path` holds a VERA JSON report rather than a dataset (which may be JSON too)."""
    if path.suffix.lower() != ".json":
        return False
    with path.open("rb") as head:
        start = head.read(4096)
    return b'"metric_summary"' in start or b'"vera_version"' in start
