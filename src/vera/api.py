"""`vera.evaluate` and `vera.aevaluate`: a run from Python, through the same plan and run core
as `vera eval`.

    report = vera.evaluate(df, metrics=["faithfulness", "hallucination_rate"],
                           judge="openai:gpt-4o-mini", baselines=["naive-rag"])

Data may be a file path or bundled name, `Sample`s, dicts, a pandas DataFrame or a Hugging Face
`Dataset`; metrics, judge and pipelines may be names or objects. Names are checked at once: an
unknown one raises `ConfigError` with the known names. No config file or environment is read
unless `settings` is given (`vera.load_settings()` reads them as the CLI does), and nothing is
written to the run history unless `history` says where.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vera.calibration import CalibrationTally
from vera.datasets import SampleSource, open_dataset
from vera.errors import ConfigError
from vera.history import open_history
from vera.judges.base import Judge
from vera.metrics.base import Metric
from vera.metrics.registry import create_metric
from vera.pipelines.core import Pipeline
from vera.pipelines.user import as_pipeline
from vera.plan import DatasetRef, GeneratorSpec, MetricSpec, RetrievalOptions, RunPlan, metric_specs
from vera.report import Calibration, Report, SampleResult
from vera.run import Bindings, RunObserver, arun_plan, run_plan
from vera.settings import Settings

__all__ = ["aevaluate", "calibrate", "evaluate", "plan_evaluation"]

ProgressCallback = Callable[[SampleResult], None]


class _CallbackObserver(RunObserver):
    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback

    def sample_finished(self, result: SampleResult) -> None:
        self.callback(result)


def _metrics(
    metrics: Sequence[Metric | str] | str | None, threshold: float | None
) -> tuple[tuple[MetricSpec, ...], list[Metric] | None]:
    """Specs for the plan, and the metric objects when any were given as objects."""
    given: list[Metric | str] = [metrics] if isinstance(metrics, str) else list(metrics or [])
    names = [m for m in given if isinstance(m, str)] or (["faithfulness"] if not given else [])
    specs = metric_specs(names, threshold) if names else ()
    if len(names) == len(given) or not given:
        return specs, None
    named = iter(specs)
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
    return tuple(MetricSpec(name=m.name) for m in objects), objects


def _settings(
    settings: Settings | None,
    judge: Judge | str | None,
    concurrency: int | None,
    history: bool | str | Path,
    fields: Mapping[str, str] | None = None,
) -> Settings:
    overrides: dict[str, Any] = {
        "concurrency": concurrency,
        "history": bool(history),
        "history_path": Path(history) if isinstance(history, str | Path) else None,
        "fields": dict(fields) if fields else None,  # added to the config's [fields]
    }
    if isinstance(judge, str):
        overrides["judge"] = judge
    return (settings or Settings()).merge(overrides, origin="vera.evaluate")


def plan_evaluation(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    pipeline: Pipeline | str | object | None = None,
    baselines: Sequence[str] | Mapping[str, Pipeline] = (),
    generator: str | None = None,
    threshold: float | None = None,
    group_by: Sequence[str] = (),
    concurrency: int | None = None,
    dataset_name: str | None = None,
    resume_from: Mapping[str, SampleResult] | None = None,
    check_laws: bool = False,
    settings: Settings | None = None,
    history: bool | str | Path = False,
    quick: bool = False,
    skip_invalid: bool = False,
    format: str | None = None,
    retrieval: RetrievalOptions | None = None,
    fields: Mapping[str, str] | None = None,
    regression: bool = False,
    baseline_run: str | None = None,
    any_plan: bool = False,
) -> tuple[RunPlan, Bindings]:
    """The plan `evaluate` runs, and the objects given in place of names (see `evaluate`)."""
    specs, metric_objects = _metrics(metrics, threshold)
    source = str(data) if isinstance(data, str | Path) else None
    run_settings = _settings(settings, judge, concurrency, history, fields)
    dataset = open_dataset(
        data,
        format=format,
        skip_invalid=skip_invalid,
        name=dataset_name,
        fields=run_settings.fields,
    )
    named_baselines = tuple(baselines) if not isinstance(baselines, Mapping) else ()
    plan = RunPlan(
        dataset=DatasetRef(
            source=source, name=dataset.name, format=format, skip_invalid=skip_invalid
        ),
        quick=quick,
        metrics=specs,
        threshold=threshold,
        settings=run_settings,
        pipeline=pipeline if isinstance(pipeline, str) else None,
        baselines=named_baselines,
        generator=GeneratorSpec(spec=generator) if generator else GeneratorSpec(),
        retrieval=retrieval or RetrievalOptions(),
        group_by=tuple(group_by),
        check_laws=check_laws,
        regression=regression,
        baseline_run=baseline_run,
        any_plan=any_plan,
    )
    return plan, _bindings(dataset, metric_objects, judge, pipeline, baselines, resume_from)


def _bindings(
    dataset: SampleSource,
    metrics: list[Metric] | None,
    judge: Judge | str | None,
    pipeline: Pipeline | str | object | None,
    baselines: Sequence[str] | Mapping[str, Pipeline],
    resume_from: Mapping[str, SampleResult] | None,
) -> Bindings:
    """The objects given from Python in place of names."""
    return Bindings(
        data=dataset,
        metrics=metrics,
        judge=judge if judge is not None and not isinstance(judge, str) else None,
        pipeline=None if pipeline is None or isinstance(pipeline, str) else as_pipeline(pipeline),
        baselines=dict(baselines) if isinstance(baselines, Mapping) else {},
        resume_from=resume_from,
    )


async def aevaluate(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Any,
) -> Report:
    """`evaluate` in a running event loop (Jupyter, an async app)."""
    plan, bindings = plan_evaluation(data, metrics, judge, **options)
    observer = _CallbackObserver(progress) if progress is not None else None
    return (await arun_plan(plan, bindings, observer=observer)).report


def evaluate(
    data: Any,
    metrics: Sequence[Metric | str] | None = None,
    judge: Judge | str | None = None,
    *,
    progress: ProgressCallback | None = None,
    **options: Any,
) -> Report:
    """Evaluate `data` and return the report; everything `vera eval` does, from Python.

    Args:
        data: a file path or bundled name, `Sample`s or dicts (any field names `vera eval`
            reads), a pandas DataFrame or a Hugging Face `Dataset`.
        metrics: names (`["faithfulness", "hallucination_rate"]`, `["all"]`) or metric
            objects; default faithfulness.
        judge: a name ("offline", "offline:learned", "openai:gpt-4o-mini", …) or a judge
            object; default the offline judge.
        progress: called with each sample's result as it finishes.
        **options: `pipeline` (a name, a `Pipeline`, a function, a LangChain Runnable or a
            LlamaIndex query engine), `baselines` (names, or a mapping of name to `Pipeline`),
            `generator`, `threshold`, `group_by`, `concurrency`,
            `dataset_name`, `resume_from`, `check_laws`, `settings`, `history`, `quick`,
            `skip_invalid`, `format`, `retrieval`; `fields` (VERA field -> your column,
            `{"contexts": "docs"}`, as `--field`); `regression`, `baseline_run` and `any_plan`
            (the regression gate, which needs `history`; see `run_plan` for the gates'
            verdict) (see `plan_evaluation`).

    Raises:
        ConfigError: an unknown metric, judge or pipeline name (with the known ones), or
            options that cannot work together.
        DatasetRowError: an invalid row, naming the row and the field (unless
            `skip_invalid`).
        RuntimeError: inside a running event loop; use `await vera.aevaluate(...)` there.
    """
    plan, bindings = plan_evaluation(data, metrics, judge, **options)
    observer = _CallbackObserver(progress) if progress is not None else None
    return run_plan(plan, bindings, observer=observer).report


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
    history `settings` name.

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
            found = CalibrationTally.of(store.iter_results(store.get(source).id)).calibration()
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
