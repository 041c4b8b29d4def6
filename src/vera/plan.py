"""`RunPlan`: everything a run was asked to do, as one frozen, serialisable value.

Flags, `vera.toml` / `[tool.vera]`, the environment and Python arguments resolve into a plan
once (`build_plan`). The run history stores the plan itself, so `vera eval --resume` rebuilds
exactly the run that was asked for, and a dry run prices the same plan a run would execute.
Things are named, not held: metrics as name + options, the judge, pipelines and generator by
spec. Live objects given from Python (a metric instance, a judge, a pipeline) travel beside
the plan in `vera.run.Bindings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vera.errors import ConfigError
from vera.metrics.registry import create_metric, metric_classes
from vera.settings import Settings, load_settings

__all__ = [
    "QUICK_SAMPLES",
    "DatasetRef",
    "GeneratorSpec",
    "MetricSpec",
    "RetrievalOptions",
    "RunPlan",
    "build_plan",
    "metric_specs",
]

QUICK_SAMPLES = 10
"""How many samples `quick` evaluates."""
EXTRACTIVE = "extractive"

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class DatasetRef(BaseModel):
    """Where the samples come from: a file or bundled name, or data held in memory."""

    model_config = _FROZEN

    source: str | None = None
    """A file path or bundled name; None for data given from Python (not rebuildable)."""
    name: str | None = None
    format: str | None = None
    skip_invalid: bool = False


class MetricSpec(BaseModel):
    """A metric by registry name and the options it is built with."""

    model_config = _FROZEN

    name: str
    options: dict[str, Any] = Field(default_factory=dict)


class GeneratorSpec(BaseModel):
    """The baselines' generator: "extractive" (offline) or PROVIDER:MODEL."""

    model_config = _FROZEN

    spec: str = EXTRACTIVE
    base_url: str | None = None
    """Default: the judge's base URL."""

    @property
    def uses_model(self) -> bool:
        return self.spec.strip().lower() != EXTRACTIVE


class RetrievalOptions(BaseModel):
    """How the baselines retrieve: chunking, top-k and the corpus."""

    model_config = _FROZEN

    top_k: int = Field(default=3, ge=1)
    chunk_size: int = Field(default=800, ge=1)
    chunk_overlap: int = Field(default=100, ge=0)
    documents: str | None = None
    """A folder of .txt/.md files; default the dataset's documents or its contexts."""


class RunPlan(BaseModel):
    """One run, fully described. `settings` holds the judge and its options, concurrency,
    cache, budget, prompt overrides, history and gates; the rest says what is evaluated."""

    model_config = _FROZEN

    plan_version: Literal[1] = 1
    dataset: DatasetRef = Field(default_factory=DatasetRef)
    quick: bool = False
    metrics: tuple[MetricSpec, ...] = (MetricSpec(name="faithfulness"),)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """`--threshold`: the pass mark of higher-is-better metrics, and a gate."""
    settings: Settings = Field(default_factory=Settings)
    pipeline: str | None = None
    """The system under evaluation: a baseline name, module:function or a URL; None when the
    responses come with the data."""
    baselines: tuple[str, ...] = ()
    generator: GeneratorSpec = Field(default_factory=GeneratorSpec)
    retrieval: RetrievalOptions = Field(default_factory=RetrievalOptions)
    group_by: tuple[str, ...] = ()
    check_laws: bool = False
    regression: bool = False
    """Guard against a significant drop from the last finished run of the dataset."""
    baseline_run: str | None = None
    """A stored run to guard against instead of the last one with the same fingerprint."""
    any_plan: bool = False
    """Let the regression gate compare with a run whose plan differs (`--any-plan`): the
    differences are reported, field by field, instead of refused."""

    @property
    def gated(self) -> bool:
        """Whether the run's outcome is checked by gates (and exits 1 when one fails)."""
        gates = self.settings.gates
        configured = bool(gates.metrics or gates.categories) or any(
            (gates.latency_p95_ms, gates.latency_p99_ms)
        )
        return (
            self.threshold is not None or self.regression or bool(self.baseline_run) or (configured)
        )

    @property
    def judge(self) -> str:
        return self.settings.judge


def metric_specs(names: Iterable[str], threshold: float | None = None) -> tuple[MetricSpec, ...]:
    """Specs for the metrics named ("all" takes every registered one, plugins included);
    `threshold` becomes the pass mark of those where higher is better. Unknown names raise
    `ConfigError` with the known ones."""
    wanted = list(names)
    if any(name.strip().lower() == "all" for name in wanted):
        wanted = list(metric_classes())
    specs = []
    for name in dict.fromkeys(wanted):
        metric = create_metric(name)  # checks the name, and reads the metric's direction
        marks = threshold is not None and metric.higher_is_better
        options: dict[str, Any] = {"threshold": threshold} if marks else {}
        if options:
            create_metric(name, **options)  # the metric validates its own threshold
        specs.append(MetricSpec(name=metric.name, options=options))
    return tuple(specs)


def build_plan(
    *,
    dataset: DatasetRef | None = None,
    metrics: Sequence[str] | None = None,
    threshold: float | None = None,
    overrides: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    config_directory: Path | None = None,
    **fields: Any,
) -> RunPlan:
    """A plan from names and options: `overrides` are settings given on the command line (None
    values mean "not given") applied over `settings`, else over the settings that `vera.toml`
    or `[tool.vera]` and the environment resolve to. `fields` are the plan's other fields."""
    if settings is None:
        resolved = load_settings(overrides, directory=config_directory)
    else:
        resolved = settings.merge(overrides or {}, origin="arguments")
    try:
        return RunPlan(
            dataset=dataset or DatasetRef(),
            metrics=metric_specs(metrics or ["faithfulness"], threshold),
            threshold=threshold,
            settings=resolved,
            **fields,
        )
    except ValueError as exc:
        raise ConfigError(f"invalid run options: {exc}") from None
