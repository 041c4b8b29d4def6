"""The one registry pattern: lazy factories, did-you-mean errors, duplicates, and plugins found
through real entry points of a distribution written to a temporary folder on sys.path."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.plugin import (
    PLUGIN_ENTRY_POINTS,
    PLUGIN_MODULE,
    PLUGIN_SOURCE,
    write_plugin,
)

from vera import ConfigError, Report, Sample, SampleResult, SampleStatus, Settings
from vera._registry import Registry
from vera._results import build_report
from vera.judges import JUDGE_REGISTRY, JudgeOptions, OfflineJudge, create_judge
from vera.judges._registry import judge_names
from vera.metrics import METRIC_REGISTRY, MetricResult, MetricStatus, create_metric
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._registry import METRICS, metric_classes, metric_key
from vera.providers import PROVIDER_REGISTRY, create_chat_model
from vera.providers._registry import provider_names
from vera.render import REPORTER_REGISTRY, RenderContext, render_html, render_report
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.render._registry import format_for_path, reporter_names
from vera.render._view import HistoryPoint

WHITEBOX = (
    "the registry class every extension kind shares; the report builder, on hand-made results"
)

ALL_REGISTRIES = (METRIC_REGISTRY, JUDGE_REGISTRY, PROVIDER_REGISTRY, REPORTER_REGISTRY)


def install(folder: Path, monkeypatch: pytest.MonkeyPatch, source: str, entries: str) -> None:
    """Write the plugin into `folder` and put `folder` on sys.path."""
    write_plugin(folder, source, entries)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()


@pytest.fixture(autouse=True)
def _fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No plugin state leaks into or out of a test: registries forget their plugins, and the
    plugin module is imported afresh."""
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    for registry in ALL_REGISTRIES:
        registry.reset_plugins()
    yield
    sys.modules.pop(PLUGIN_MODULE, None)
    for registry in ALL_REGISTRIES:
        registry.reset_plugins()


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test plugin, installed; its folder."""
    folder = tmp_path / "site"
    install(folder, monkeypatch, PLUGIN_SOURCE, PLUGIN_ENTRY_POINTS)
    return folder


def report() -> Report:
    """A two-sample report, built without a run."""
    results = [
        SampleResult(
            id=sid,
            status=SampleStatus.SCORED,
            scores={"faithfulness": score},
            results={
                "faithfulness": MetricResult(
                    name="faithfulness", score=score, passed=score >= 0.5,
                    status=MetricStatus.OK, reason="2 of 3 claims supported", threshold=0.5,
                )
            },
        )
        for sid, score in (("s1", 1.0), ("s2", 0.25))
    ]  # fmt: skip
    return build_report(
        dataset="d", judge="offline", version="v", thresholds={"faithfulness": 0.5}, results=results
    )


# --- the generic registry ------------------------------------------------------------------


def test_a_lazy_factory_is_imported_only_when_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vera_lazy_backend.py").write_text("class Backend:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "vera_lazy_backend", raising=False)
    registry: Registry[type[Any]] = Registry("backend", "vera.tests.no_such_group")
    registry.register("lazy", "vera_lazy_backend:Backend")
    assert registry.names() == ["lazy"] and "lazy" in registry
    assert "vera_lazy_backend" not in sys.modules
    backend = registry.get(" LAZY ")
    assert "vera_lazy_backend" in sys.modules
    assert backend is sys.modules["vera_lazy_backend"].Backend


def test_lookup_normalises_names_and_resolves_aliases() -> None:
    registry: Registry[int] = Registry("number", "vera.tests.no_such_group", normalise=metric_key)
    registry.register("one_two", 12, aliases=["twelve"])
    assert registry.get("One-Two") == 12 and registry.get(" Twelve ") == 12
    assert registry.names() == ["one_two"] and registry.aliases() == {"twelve": "one_two"}
    assert registry.find("three") is None and "three" not in registry


def test_unknown_names_get_the_closest_suggestion_and_the_known_list() -> None:
    registry: Registry[int] = Registry("metric", "vera.tests.no_such_group")
    for value, name in enumerate(["faithfulness", "abstention", "grounding_f1"]):
        registry.register(name, value)
    with pytest.raises(ConfigError) as caught:
        registry.get("faithfulnes")
    assert str(caught.value) == (
        "unknown metric 'faithfulnes'; did you mean 'faithfulness'? "
        "Known: abstention, faithfulness, grounding_f1"
    )
    with pytest.raises(ConfigError) as nothing_close:
        registry.get("zzz")
    assert str(nothing_close.value) == (
        "unknown metric 'zzz'. Known: abstention, faithfulness, grounding_f1"
    )


def test_a_taken_name_is_refused_unless_it_is_the_same_factory() -> None:
    registry: Registry[object] = Registry("thing", "vera.tests.no_such_group")
    first, second = object(), object()
    registry.register("a", first, aliases=["alpha"])
    registry.register("a", first)  # the same factory again: allowed
    registry.register("lazy", "json:dumps")
    registry.register("lazy", "json:dumps")
    for name, factory in [("a", second), ("alpha", second), ("lazy", "json:loads")]:
        with pytest.raises(ConfigError, match=f"a thing named '{name}' is already registered"):
            registry.register(name, factory)
    with pytest.raises(ConfigError, match="a thing named 'a' is already registered"):
        registry.register("b", second, aliases=["a"])
    with pytest.raises(ConfigError, match="must look like 'module:attribute'"):
        registry.register("c", "json")
    assert registry.get("alpha") is first and registry.names() == ["a", "lazy"]


def test_register_metric_refuses_a_second_class_under_a_taken_name() -> None:
    from vera.metrics import register_metric

    class Imposter(Faithfulness):
        pass

    with pytest.raises(ConfigError, match="a metric named 'faithfulness' is already registered"):
        register_metric(Imposter)
    assert METRICS["faithfulness"] is Faithfulness


# --- plugins through real entry points ----------------------------------------------------


@pytest.mark.usefixtures("plugin")
def test_plugin_metrics_are_listed_after_the_built_ins_and_built_by_name() -> None:
    classes = metric_classes()
    assert list(classes)[: len(METRICS)] == list(METRICS)
    assert list(classes)[-1] == "plugin_metric"
    plugin_class = sys.modules[PLUGIN_MODULE].PluginMetric
    assert classes["plugin_metric"] is plugin_class
    assert "plugin_metric" not in METRICS  # METRICS stays the built-in dict
    metric = create_metric("Plugin-Metric", threshold=0.4)
    assert type(metric) is plugin_class and metric.threshold == 0.4


def test_plugins_follow_what_is_installed_and_load_once(plugin: Path) -> None:
    assert "plugin_metric" in METRIC_REGISTRY.names()
    first = METRIC_REGISTRY.get("plugin_metric")
    del sys.modules[PLUGIN_MODULE]
    METRIC_REGISTRY.load_plugins()  # again: nothing is imported twice
    assert PLUGIN_MODULE not in sys.modules
    assert METRIC_REGISTRY.get("plugin_metric") is first
    sys.path.remove(str(plugin))  # uninstalled: the next listing no longer shows it
    importlib.invalidate_caches()
    assert "plugin_metric" not in METRIC_REGISTRY.names()
    with pytest.raises(ConfigError, match="unknown metric 'plugin_metric'"):
        create_metric("plugin_metric")


def test_a_broken_plugin_names_its_entry_point_package_and_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "import vera_no_such_dependency\n"
    install(tmp_path, monkeypatch, source, "[vera.metrics]\nbroken = vera_test_plugin:Broken\n")
    with pytest.raises(ConfigError) as caught:
        create_metric("broken")
    message = str(caught.value)
    assert message.startswith("cannot load metric plugin 'broken' (vera_test_plugin:Broken)")
    assert "from vera-test-plugin" in message
    assert "ModuleNotFoundError" in message and "vera_no_such_dependency" in message
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)
    assert create_metric("faithfulness").name == "faithfulness"  # built-ins need no plugins


def test_a_plugin_may_not_take_a_built_in_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(
        tmp_path,
        monkeypatch,
        PLUGIN_SOURCE,
        "[vera.metrics]\nFaithfulness = vera_test_plugin:PluginMetric\n",
    )
    with pytest.raises(ConfigError, match="takes the name of a built-in metric") as caught:
        metric_classes()
    assert "vera-test-plugin" in str(caught.value)


@pytest.mark.usefixtures("plugin")
def test_plugin_judges_get_the_arg_and_settings() -> None:
    names = judge_names()  # built-ins first (a new one breaks nothing here), then plugins
    assert names[-1] == "my_judge" and {"offline", "nli", "cascade"} <= set(names[:-1])
    settings = Settings()
    judge = create_judge("My_Judge: some/arg ", settings)
    assert isinstance(judge, OfflineJudge)
    assert create_judge("my_judge") is not judge
    assert sys.modules[PLUGIN_MODULE].JUDGE_CALLS[0] == ("some/arg", settings)
    assert sys.modules[PLUGIN_MODULE].JUDGE_CALLS[1][0] is None


@pytest.mark.usefixtures("plugin")
def test_plugin_providers_build_chat_models() -> None:
    names = provider_names()
    assert names[-1] == "echo" and {"openai", "anthropic", "litellm", "ollama"} <= set(names)
    model: Any = create_chat_model("echo:tiny:1b", base_url="http://127.0.0.1:9", api_key="k")
    assert type(model).__name__ == "EchoModel"
    assert (model.model, model.base_url, model.api_key) == ("tiny:1b", "http://127.0.0.1:9", "k")


@pytest.mark.usefixtures("plugin")
def test_plugin_report_formats_render_by_name_and_extension() -> None:
    names = reporter_names()
    assert names[-2:] == ["counts", "csv"] and {"json", "html", "md", "junit"} <= set(names)
    text = render_report("CSV", report(), RenderContext(gate_failures=["faithfulness < 0.9"]))
    assert text == "id,faithfulness\ns1,1.0\ns2,0.25\ngate:1"
    assert format_for_path("out/scores.csv") == "csv"


# --- built-in names and their errors ------------------------------------------------------


def test_unknown_metric_suggests_the_closest() -> None:
    with pytest.raises(ConfigError, match=r"unknown metric 'faithfulnes'; did you mean "):
        create_metric("faithfulnes")
    with pytest.raises(ConfigError, match=r"did you mean 'hallucination_rate'\?"):
        create_metric("halucination-rate")


def test_unknown_judge_suggests_judges_and_providers_and_lists_the_forms() -> None:
    with pytest.raises(ConfigError) as caught:
        create_judge("ofline")
    said, _, known = str(caught.value).partition(" Known: ")
    assert said == "unknown judge 'ofline'; did you mean 'offline'?"
    # Each form once, judges before providers; a new built-in adds one and breaks nothing here.
    forms = known.split(", ")
    assert forms[:2] == ["offline", "offline:learned"] and len(forms) == len(set(forms))
    assert {"nli:MODEL", "cascade", "openai:MODEL", "anthropic:MODEL", "ollama:MODEL"} <= set(forms)
    assert forms.index("cascade") < forms.index("openai:MODEL")
    with pytest.raises(ConfigError) as provider:
        create_judge("antropic:claude-sonnet-4-5")
    assert str(provider.value).startswith(
        "unknown judge 'antropic' in 'antropic:claude-sonnet-4-5'; did you mean 'anthropic'?"
    )
    with pytest.raises(ConfigError) as nothing_close:
        create_judge("zzz")
    assert str(nothing_close.value) == f"unknown judge 'zzz'. Known: {known}"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("offline:fast", "unknown offline judge variant 'fast'; use offline or offline:learned"),
        ("cascade:openai:gpt-4o-mini", "cascade takes no argument"),
        ("nli: ", "the NLI judge needs a model: nli:PATH_OR_HUB_ID"),
        ("openai", "judge 'openai' needs a model: openai:MODEL"),
    ],
)
def test_judge_specs_that_cannot_work(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_judge(spec)


def test_built_in_judges_by_name() -> None:
    assert type(create_judge(" Offline ")) is OfflineJudge
    learned = create_judge("offline : learned", Settings(offline_min_support=0.7))
    assert isinstance(learned, OfflineJudge) and learned.model is not None
    assert learned.min_support == 0.7


def test_judges_are_built_from_their_own_options_without_settings() -> None:
    # The judges sit below vera._plan: their options model alone configures them.
    learned = create_judge("offline:learned", JudgeOptions(offline_min_support=0.6))
    assert isinstance(learned, OfflineJudge) and learned.min_support == 0.6
    crossed = JudgeOptions(cascade_judge="openai:gpt-4o-mini", cascade_low=0.9, cascade_high=0.1)
    with pytest.raises(ConfigError, match=r"--cascade-low \(0.9\) must not exceed"):
        create_judge("cascade", crossed)


def test_unknown_provider_suggests_the_closest() -> None:
    with pytest.raises(ConfigError) as caught:
        create_chat_model("opneai:gpt-4o-mini")
    said, _, known = str(caught.value).partition(" Known: ")
    assert said == "unknown provider 'opneai' in 'opneai:gpt-4o-mini'; did you mean 'openai'?"
    names = known.split(", ")
    assert names == sorted(names) and {"anthropic", "litellm", "ollama", "openai"} <= set(names)


def test_built_in_report_formats_render_as_their_renderers() -> None:
    rendered, samples = report(), {"s1": Sample(id="s1", response="r", contexts=["c"])}
    history = [HistoryPoint(run_id="r1", timestamp="2030-01-01T00:00:00", metrics={})]
    context = RenderContext(samples=samples, history=history, gate_failures=["faithfulness low"])
    assert render_report("json", rendered) == rendered.to_json() + "\n"
    assert render_report("junit", rendered) == render_junit(rendered)
    markdown = render_markdown(rendered, gate_failures=["faithfulness low"])
    assert render_report("markdown", rendered, context) == markdown
    assert render_report(" MD ", rendered, context) == markdown
    assert "faithfulness low" in markdown
    html = render_html(rendered, samples=samples, history=history)
    assert render_report("html", rendered, context) == html
    assert render_report("html", rendered) == render_html(rendered)
    assert {"json", "html", "md", "junit"} <= set(reporter_names())
    with pytest.raises(ConfigError, match=r"unknown report format 'htlm'; did you mean 'html'\?"):
        render_report("htlm", rendered)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("report.json", "json"),
        ("out/report.HTML", "html"),
        ("report.htm", "html"),
        ("summary.md", "md"),
        ("junit.xml", "junit"),
        ("notes.txt", None),
        ("README", None),
    ],
)
def test_format_for_path(path: str, expected: str | None) -> None:
    assert format_for_path(path) == expected
