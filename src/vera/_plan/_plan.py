"""`RunPlan`: everything a run was asked to do, as one frozen, serialisable value.

Flags, `vera.toml` / `[tool.vera]`, the environment and Python arguments resolve into a plan
once (`build_plan`). The run history stores the plan itself, so `vera eval --resume` rebuilds
exactly the run that was asked for, and a dry run prices the same plan a run would execute.
Things are named, not held: metrics as name + options, the judge, pipelines and generator by
spec. Live objects given from Python (a metric instance, a judge, a pipeline) travel beside
the plan in `vera._run.Bindings`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vera._baselines._baselines import BASELINES
from vera._plan._settings import Settings, load_settings
from vera._registry import check_plugin_tables, plugin_table
from vera._types._errors import ConfigError
from vera._types._secrets import redact
from vera.metrics._registry import (
    METRIC_REGISTRY,
    configurable_metrics,
    create_metric,
    metric_classes,
)
from vera.metrics._rubric import PRESETS
from vera.providers._registry import PROVIDER_REGISTRY

QUICK_SAMPLES = 10
"""How many samples `quick` evaluates."""
EXTRACTIVE = "extractive"
DEFAULT_METRICS: tuple[str, ...] = ("faithfulness",)
"""The metrics a run computes when none are named: `vera eval` without `--metric`,
`vera.evaluate` without `metrics`, a `RunPlan` without `metrics`, the same everywhere."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class DatasetRef(BaseModel):
    """Where the samples come from: a file or bundled name, or data held in memory."""

    model_config = _FROZEN

    source: str | None = None
    """A file path or bundled name; None for data given from Python (not rebuildable)."""
    name: str | None = None
    format: str | None = None
    skip_invalid: bool = False
    digest: str | None = None
    """The content's "sha256:…" as the run that stored this plan read it (set by the run,
    not by you): a resumed run refuses data whose content differs."""


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
    metrics: tuple[MetricSpec, ...] = tuple(MetricSpec(name=name) for name in DEFAULT_METRICS)
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
            self.threshold is not None
            or self.regression
            or bool(self.baseline_run)
            or configured
            or self.settings.min_faithful_turns is not None
            or self.settings.min_consistency is not None
        )

    @property
    def judge(self) -> str:
        return self.settings.judge


def metric_specs(
    names: Iterable[str],
    threshold: float | None = None,
    plugins: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[MetricSpec, ...]:
    """Specs for the metrics named ("all" takes every registered one, plugins included);
    `threshold` becomes the pass mark of those where higher is better. A metric's
    `[plugins.NAME]` table in `plugins` becomes its `options` option (kept as values, so a
    stored plan names no code). Unknown names raise `ConfigError` with the known ones."""
    wanted = list(names)
    if any(name.strip().lower() == "all" for name in wanted):
        wanted = list(metric_classes())
    specs = []
    for name in dict.fromkeys(wanted):
        table = plugin_table(plugins or {}, name)
        own: dict[str, Any] = {} if table is None else {"options": table}
        metric = create_metric(name, **own)  # checks the name, and reads its direction
        marks = threshold is not None and metric.higher_is_better
        options: dict[str, Any] = {"threshold": threshold} if marks else {}
        if options:
            create_metric(name, **own, **options)  # the metric validates its own threshold
        specs.append(MetricSpec(name=metric.name, options={**options, **own}))
    return tuple(specs)


def _specs_with_rubrics(
    names: Sequence[str], threshold: float | None, settings: Settings, rubrics: Mapping[str, Any]
) -> tuple[MetricSpec, ...]:
    """`metric_specs` for `names`, where a configured rubric's name (or "all") gives the
    rubric's spec: its whole definition as values, so a stored plan rebuilds it."""
    taken = [name for name in rubrics if name in METRIC_REGISTRY]
    if taken:
        raise ConfigError(f"rubric {taken[0]!r} has the name of a metric: rename it")
    everything = any(name.strip().lower() == "all" for name in names)
    presets = {n: PRESETS[n]() for n in names if n in PRESETS and n not in rubrics}
    rubrics = {**rubrics, **presets}
    own = [name for name in names if name not in rubrics]
    specs = metric_specs(own, threshold, settings.plugins) if own else ()
    configured = [r for r in rubrics.values() if r.name not in presets]
    chosen = configured if everything else [rubrics[n] for n in names if n in rubrics]
    added = (MetricSpec(name=r.name, options={"rubric": r.model_dump(mode="json")}) for r in chosen)
    return (*specs, *added)


def build_plan(
    *,
    dataset: DatasetRef | None = None,
    metrics: Sequence[str] | tuple[MetricSpec, ...] | None = None,
    threshold: float | None = None,
    overrides: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    config_directory: Path | None = None,
    origin: str = "arguments",
    **fields: Any,
) -> RunPlan:
    """A plan from names and options: `overrides` are settings given by `origin` (None
    values mean "not given") applied over `settings`, else over the settings that `vera.toml`
    or `[tool.vera]` and the environment resolve to. `metrics` are names, or specs kept as
    they are; `fields` are the plan's other fields. `vera.plan_evaluation` and `vera eval`
    build their plans here (through `vera._api.build_evaluation`)."""
    if settings is None:
        resolved = load_settings(overrides, directory=config_directory)
    else:
        resolved = settings.merge(overrides or {}, origin=origin)
        check_plugin_tables(
            resolved.plugins, origin="settings.plugins", built_in=configurable_metrics()
        )
    rubrics = {r.name: r for r in resolved.rubrics()}
    wanted = metrics or (*DEFAULT_METRICS, *rubrics)
    specs = tuple(m for m in wanted if isinstance(m, MetricSpec))
    if len(specs) != len(wanted):
        specs = _specs_with_rubrics([str(m) for m in wanted], threshold, resolved, rubrics)
    try:
        return RunPlan(
            dataset=dataset or DatasetRef(),
            metrics=specs,
            threshold=threshold,
            settings=resolved,
            **fields,
        )
    except ValueError as exc:
        raise ConfigError(f"invalid run options: {exc}") from None


NAMED_AGAIN_FLAGS = {
    "pipeline": "--pipeline",
    "baselines": "--baseline",
    "prompts_dir": "--prompts-dir",
    "judge": "--judge",
    "cascade_judge": "--cascade-judge",
    "metrics": "--metric",
    "generator": "--generator",
    "ray_address": "--ray-address",
    "judge_base_url": "--judge-base-url",
    "generator_base_url": "--generator-base-url",
}
"""What a stored plan may name that chooses code or files that carry it, or where the
provider keys are sent, and the `vera eval` flag that names it again (the keys of
`named_again`'s `given`)."""

_OWN_JUDGES = frozenset({"offline", "cascade"})
"""Judges whose code is VERA's own whatever their argument (`nli:PATH` loads model files,
which may carry pickled code, so it is not among them)."""


def _plugin_judge(spec: str | None) -> bool:
    """Whether judge `spec` runs code from outside VERA: a plugin, or an NLI model's files."""
    if spec is None:
        return False
    name = spec.strip().partition(":")[0].strip().lower()
    return name not in _OWN_JUDGES and name not in PROVIDER_REGISTRY.builtin_names()


def _public_host(spec: str | None, base_url: str | None) -> bool:
    """Whether `spec` is a provider's model whose key goes to the provider's public host (no
    base URL): a history edited to another provider, or without its base URL, must not send
    a key there on resume, so the user names the model again."""
    if spec is None or base_url is not None:
        return False
    return spec.strip().partition(":")[0].strip().lower() in PROVIDER_REGISTRY.builtin_names()


def code_references(plan: RunPlan) -> dict[str, str]:
    """What `plan` names that would import code, load a plugin, read prompts from a folder or
    send a provider key to a server, by `NAMED_AGAIN_FLAGS` key, as text (lists joined with
    ", "). A plan read from a run history names these only as data: `named_again` runs them
    only when the user names them again."""
    settings = plan.settings
    found: dict[str, str] = {}
    if plan.pipeline is not None and plan.pipeline not in BASELINES:
        found["pipeline"] = plan.pipeline
    if any(name not in BASELINES for name in plan.baselines):
        found["baselines"] = ", ".join(plan.baselines)
    if settings.judge_prompts_dir is not None:
        found["prompts_dir"] = str(settings.judge_prompts_dir)
    if _plugin_judge(settings.judge) or _public_host(settings.judge, settings.judge_base_url):
        found["judge"] = settings.judge
    cascade = settings.cascade_judge
    if cascade is not None and (
        _plugin_judge(cascade) or _public_host(cascade, settings.judge_base_url)
    ):
        found["cascade_judge"] = cascade
    builtin_metrics = set(METRIC_REGISTRY.builtin_names())
    # A rubric's spec is data (its criteria and items), never code.
    named = [m for m in plan.metrics if "rubric" not in m.options]
    if any(METRIC_REGISTRY.key(m.name) not in builtin_metrics for m in named):
        found["metrics"] = ", ".join(m.name for m in plan.metrics)
    generator = plan.generator.spec
    url = plan.generator.base_url or settings.judge_base_url
    if plan.generator.uses_model and (_plugin_judge(generator) or _public_host(generator, url)):
        found["generator"] = generator
    if settings.ray_address is not None:
        found["ray_address"] = settings.ray_address
    # Not code, but where a provider key goes: a history edited to name another server would
    # have the resumed run send it the key.
    if settings.judge_base_url is not None:
        found["judge_base_url"] = settings.judge_base_url
    if plan.generator.base_url is not None:
        found["generator_base_url"] = plan.generator.base_url
    return found


def _stored_values(plan: RunPlan) -> dict[str, str | None]:
    """Every `NAMED_AGAIN_FLAGS` field of `plan` as text, None where the plan has none."""
    settings = plan.settings
    prompts = settings.judge_prompts_dir
    return {
        "pipeline": plan.pipeline,
        "baselines": ", ".join(plan.baselines) or None,
        "prompts_dir": str(prompts) if prompts is not None else None,
        "judge": settings.judge,
        "cascade_judge": settings.cascade_judge,
        "metrics": ", ".join(m.name for m in plan.metrics),
        "generator": plan.generator.spec,
        "ray_address": settings.ray_address,
        "judge_base_url": settings.judge_base_url,
        "generator_base_url": plan.generator.base_url,
    }


def _as_text(key: str, value: object) -> str | None:
    """A value given for `key` as `_stored_values` writes it (None: not given)."""
    if value is None:
        return None
    if isinstance(value, str | Path):
        text = str(Path(value)) if key == "prompts_dir" else str(value).strip()
        return text or None
    if isinstance(value, Iterable):
        names = [str(v).strip() for v in value]
        if key == "metrics":
            names = [METRIC_REGISTRY.key(n) for n in names]
        return ", ".join(names) or None
    return str(value)


def _shown(value: str | None, limit: int = 200) -> str:
    """A value in a message: quoted with its control characters escaped (a stored one may be
    hostile), and cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same(key: str, stored: str | None, given: str) -> bool:
    if stored is None:
        return False
    if key == "metrics":
        return [METRIC_REGISTRY.key(n) for n in stored.split(", ")] == given.split(", ")
    # The store keeps no secret: a URL given again with its key matches its redacted form.
    return stored in (given, redact(given))


def named_again(stored: RunPlan, given: Mapping[str, object], run_id: str) -> RunPlan:
    """`stored` (a plan read from a run history) to resume, once what it names that would run
    code is named again in `given` (`NAMED_AGAIN_FLAGS` keys; None or absent: not given).

    A history is data that anyone with the file can edit, so it never chooses code: every
    `code_references` entry must be given again, and anything given must equal what is stored
    (a resumed run keeps its options). Otherwise `ConfigError`, with the stored and the given
    value side by side and the flag to use. A URL the store kept redacted is taken as given,
    with its credentials.
    """
    unknown = set(given) - set(NAMED_AGAIN_FLAGS)
    if unknown:
        raise ConfigError(
            f"cannot name {', '.join(sorted(unknown))} again on resume; "
            f"known: {', '.join(NAMED_AGAIN_FLAGS)}"
        )
    stored_values = _stored_values(stored)
    texts = {key: _as_text(key, value) for key, value in given.items()}
    problems = [
        f"{NAMED_AGAIN_FLAGS[key]}: stored {_shown(stored_values[key])}, given {_shown(text)}"
        for key, text in texts.items()
        if text is not None and not _same(key, stored_values[key], text)
    ]
    problems += [
        f"{NAMED_AGAIN_FLAGS[key]}: stored {_shown(value)}, not given"
        for key, value in code_references(stored).items()
        if texts.get(key) is None
    ]
    if problems:
        raise ConfigError(
            f"run {run_id} cannot be resumed as asked: {'; '.join(problems)}. A stored run "
            "never chooses code to run or where your keys go: name its pipeline, prompts "
            "folder, plugins and servers again with the same values if you trust them (a "
            "resumed run keeps its options), or start a new run"
        )
    return _with_given(stored, texts, given.get("baselines"))


def _with_given(stored: RunPlan, texts: Mapping[str, str | None], baselines: object) -> RunPlan:
    """`stored` with the pipeline specs as given (they may carry the credentials the store
    redacted)."""
    updates: dict[str, Any] = {}
    if texts.get("pipeline") is not None:
        updates["pipeline"] = texts["pipeline"]
    if texts.get("baselines") is not None and isinstance(baselines, Iterable):
        names = [baselines] if isinstance(baselines, str) else baselines
        updates["baselines"] = tuple(str(name).strip() for name in names)
    return stored.model_copy(update=updates) if updates else stored


def resume_command(plan: RunPlan, run_id: str) -> str:
    """The `vera eval --resume` command that completes the run of `plan` stored as `run_id`,
    naming again what `named_again` asks for."""
    words = ["vera", "eval", "--resume", run_id]
    references = code_references(plan)
    for key in NAMED_AGAIN_FLAGS:
        if key not in references:
            continue
        values: list[str] = {
            "baselines": list(plan.baselines),
            "metrics": [m.name for m in plan.metrics],
        }.get(key, [references[key]])
        for value in values:
            words += [NAMED_AGAIN_FLAGS[key], shlex.quote(redact(value))]
    return " ".join(words)
