"""Metrics by name, for the CLI and config files, on the shared `vera._registry.Registry`.

Names are looked up loosely ("Hallucination-Rate" finds `hallucination_rate`). Installed
packages add metrics under the `vera.metrics` entry-point group: the entry point's name is the
metric name and its object the metric class, built with the options `create_metric` is given.
`metric_classes()` lists built-in and plugin metrics; `METRICS` holds only those built in or
registered in this process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import ValidationError

from vera._registry import Registry, plugin_options
from vera._types._errors import ConfigError
from vera.metrics._agent_tools import ToolArgumentCorrectness, ToolCallAccuracy
from vera.metrics._answer import Abstention, AnswerCorrectness, AnswerRelevance
from vera.metrics._base import Metric
from vera.metrics._citation_accuracy import CitationAccuracy
from vera.metrics._context import ContextPrecision, ContextRecall, ContextRelevance
from vera.metrics._diagnostics import (
    ChunkContextPrecision,
    ClaimRecall,
    ContextUtilization,
    NoiseSensitivityIrrelevant,
    NoiseSensitivityRelevant,
    ReferenceHallucination,
    SelfKnowledge,
)
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._faithfulness_probability import FaithfulnessProbability
from vera.metrics._grounding import GroundingF1, GroundingPrecision, GroundingRecall
from vera.metrics._hallucination import HallucinationRate
from vera.metrics._rubric import rubric_metric
from vera.metrics._trajectory import TrajectoryMatch

ENTRY_POINT_GROUP = "vera.metrics"
"""Packages can offer metrics to the CLI under this entry-point group (name = metric class)."""

METRICS: dict[str, type[Any]] = {
    cls.name: cls
    for cls in (
        Faithfulness,
        FaithfulnessProbability,
        HallucinationRate,
        GroundingPrecision,
        GroundingRecall,
        GroundingF1,
        CitationAccuracy,
        ContextRelevance,
        ContextPrecision,
        ContextRecall,
        AnswerRelevance,
        AnswerCorrectness,
        Abstention,
        ClaimRecall,
        ChunkContextPrecision,
        ContextUtilization,
        NoiseSensitivityRelevant,
        NoiseSensitivityIrrelevant,
        ReferenceHallucination,
        SelfKnowledge,
        ToolCallAccuracy,
        ToolArgumentCorrectness,
        TrajectoryMatch,
    )
}
"""Built-in metrics and those registered in this process, by name (plugins: `metric_classes`).
The registry keeps its entries in this very dict, so changes to it are seen by `create_metric`."""


def metric_key(name: str) -> str:
    """The lookup key of a metric name: trimmed, lower-case, "-" read as "_"."""
    return name.strip().lower().replace("-", "_")


def _discover(group: str) -> Sequence[EntryPoint]:
    """The installed entry points of `group`; looked up through this module's `entry_points`
    at call time, so a test can substitute the installed set."""
    return list(entry_points(group=group))


METRIC_REGISTRY: Registry[type[Any]] = Registry(
    "metric", ENTRY_POINT_GROUP, normalise=metric_key, entries=METRICS, discover=_discover
)
"""Every metric by name: the built-ins, `register_metric`'s, and installed plugins."""


def register_metric(cls: type[Any]) -> type[Any]:
    """Make a metric class available by its `name` to `--metric` and `create_metric`.

    Usable as a class decorator. A name already taken by another class is refused.
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{cls.__name__} has no `name` to register it under")
    METRIC_REGISTRY.register(name, cls)
    return cls


def metric_classes() -> dict[str, type[Any]]:
    """Every metric class by name, plugins loaded: built-ins first in their order, then those
    registered in this process, then plugins by name (for `vera metrics` and `-m all`)."""
    return {name: METRIC_REGISTRY.get(name) for name in METRIC_REGISTRY.names()}


def configurable_metrics() -> dict[str, type[Any]]:
    """The built-in metrics that take options from a `[plugins.NAME]` table of the config
    file (those that declare an `options_model`), by name."""
    return {name: cls for name, cls in METRICS.items() if hasattr(cls, "options_model")}


def create_metric(name: str, **options: Any) -> Metric:
    """Build a metric from its registry name and options (`create_metric("faithfulness")`).

    Names not built in are looked up among installed packages' `vera.metrics` entry points; an
    unknown name raises `ConfigError` suggesting the closest known one, and options the metric
    refuses (a threshold above 1, an option it no longer takes) a `ConfigError` naming the
    metric, the option and why. A metric class that declares `options_model` (a pydantic
    model) gets `options=` that model, validated from the mapping given as `options` (its
    `[plugins.NAME]` table, which `vera._plan.metric_specs` puts there) or from its defaults.
    A rubric's spec carries its definition as the option `rubric` (`vera.metrics.Rubric`).
    """
    if isinstance(options.get("rubric"), Mapping):
        return rubric_metric(name, options["rubric"])
    cls = METRIC_REGISTRY.get(name)
    given = options.get("options")
    if given is None or isinstance(given, Mapping):
        model_options = plugin_options(cls, name.strip(), given)
        if model_options is not None:
            options = {**options, "options": model_options}
    try:
        metric: Metric = cls(**options)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        option = f" option {where!r}" if where else ""
        reason = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"metric {name!r}{option}: {reason}") from None
    return metric
