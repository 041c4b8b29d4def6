"""A plugin's own config table: `[plugins.NAME]` in vera.toml (or `[tool.vera.plugins.NAME]` in
pyproject.toml), validated against the plugin's `options_model` and handed to it as `options=`.
The plugins are a real distribution written to a temporary folder and found through
`importlib.metadata`, as an installed one is."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.plugin import PLUGIN_MODULE, write_plugin
from typer.testing import CliRunner

from vera import ConfigError, RunPlan, Settings, load_settings
from vera._plan import build_plan
from vera.cli import app
from vera.judges import JUDGE_REGISTRY, create_judge
from vera.metrics import METRIC_REGISTRY, create_metric

WHITEBOX = "the plan builder under plan_evaluation, for a plan of given settings"

# A judge factory and a metric that each declare an options model, and a judge without one.
SOURCE = """
from typing import ClassVar

from pydantic import BaseModel, Field

from vera.judges import OfflineJudge
from vera.metrics import Need, not_applicable, scored

SEEN = []


class StrictOptions(BaseModel):
    min_support: float = Field(default=0.5, ge=0, le=1)
    label: str = "strict"


def strict_judge(arg, settings, *, options):
    SEEN.append(options)
    return OfflineJudge()


strict_judge.options_model = StrictOptions


def plain_judge(arg, settings):
    return OfflineJudge()


class WeightOptions(BaseModel):
    weight: float = 1.0


class WeightedMetric:
    name: ClassVar[str] = "weighted"
    description: ClassVar[str] = "a constant weight"
    needs: ClassVar[frozenset[Need]] = frozenset({Need.CLAIMS})
    higher_is_better: ClassVar[bool] = True
    options_model: ClassVar[type[BaseModel]] = WeightOptions

    def __init__(self, threshold: float = 0.0, options: WeightOptions | None = None) -> None:
        self.threshold = threshold
        self.options = options

    def score(self, sample, analysis):
        if not analysis.claims:
            return not_applicable(self, "no claims")
        return scored(self, self.options.weight, "weight")


class Tabular:
    name = "tabular"
    extension = ".tab"
    options_model = WeightOptions

    def write(self, view, out):
        out.write("tabular")


TABULAR = Tabular()
"""

ENTRIES = """
[vera.judges]
strict_judge = vera_test_plugin:strict_judge
plain_judge = vera_test_plugin:plain_judge

[vera.metrics]
weighted = vera_test_plugin:WeightedMetric

[vera.reporters]
tabular = vera_test_plugin:TABULAR
"""


@pytest.fixture(autouse=True)
def _installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    folder = write_plugin(tmp_path / "site", SOURCE, ENTRIES)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    JUDGE_REGISTRY.reset_plugins()
    METRIC_REGISTRY.reset_plugins()
    yield
    sys.modules.pop(PLUGIN_MODULE, None)
    JUDGE_REGISTRY.reset_plugins()
    METRIC_REGISTRY.reset_plugins()


def _project(tmp_path: Path, text: str, name: str = "vera.toml") -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / name).write_text(text, encoding="utf-8")
    return project


def _seen() -> list[Any]:
    seen: list[Any] = sys.modules[PLUGIN_MODULE].SEEN  # type: ignore[attr-defined]
    return seen


def test_a_judge_plugin_gets_its_table_validated_as_options(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        'judge = "strict_judge"\n\n[plugins.strict_judge]\nmin_support = 0.75\nlabel = "x"\n',
    )
    plan = build_plan(config_directory=project, metrics=["faithfulness"])
    assert plan.settings.plugins == {"strict_judge": {"min_support": 0.75, "label": "x"}}
    create_judge(plan.settings.judge, plan.settings)
    options = _seen()[-1]
    assert type(options).__name__ == "StrictOptions"
    assert (options.min_support, options.label) == (0.75, "x")


def test_a_judge_plugin_without_a_table_gets_its_models_defaults() -> None:
    create_judge("strict_judge", Settings())
    assert _seen()[-1].min_support == 0.5


def test_the_pyproject_table_is_read_too(tmp_path: Path) -> None:
    project = _project(
        tmp_path, "[tool.vera.plugins.strict-judge]\nmin_support = 0.25\n", "pyproject.toml"
    )
    settings = load_settings(directory=project)
    create_judge("strict_judge", settings)
    assert _seen()[-1].min_support == 0.25


def test_a_metric_plugin_gets_its_table_and_the_stored_plan_keeps_only_values(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, "[plugins.weighted]\nweight = 0.3\n")
    plan = build_plan(config_directory=project, metrics=["weighted"], threshold=0.5)
    spec = plan.metrics[0]
    assert spec.options == {"threshold": 0.5, "options": {"weight": 0.3}}
    stored = RunPlan.model_validate_json(plan.model_dump_json())
    metric: Any = create_metric(stored.metrics[0].name, **stored.metrics[0].options)
    assert (metric.options.weight, metric.threshold) == (0.3, 0.5)


def test_a_bad_value_names_the_file_the_table_and_the_field(tmp_path: Path) -> None:
    project = _project(tmp_path, "[plugins.strict_judge]\nmin_support = 2\n")
    with pytest.raises(ConfigError) as caught:
        build_plan(config_directory=project)
    message = str(caught.value)
    assert str(project / "vera.toml") in message
    assert "[plugins.strict_judge] field 'min_support'" in message
    assert "less than or equal to 1" in message


def test_a_bad_metric_value_is_refused_when_the_plan_is_built(tmp_path: Path) -> None:
    project = _project(tmp_path, '[plugins.weighted]\nweight = "heavy"\n')
    with pytest.raises(ConfigError, match=r"\[plugins.weighted\] field 'weight'"):
        build_plan(config_directory=project, metrics=["weighted"])


def test_a_table_naming_no_installed_plugin_lists_the_installed_ones(tmp_path: Path) -> None:
    project = _project(tmp_path, "[plugins.stirct_judge]\nmin_support = 0.5\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(directory=project)
    message = str(caught.value)
    assert "[plugins.stirct_judge] names no installed plugin" in message
    assert "plain_judge, strict_judge, tabular, weighted" in message


def test_a_table_for_a_plugin_not_handed_its_table_is_refused(tmp_path: Path) -> None:
    # A report format is built without the settings: its table would be dropped unread.
    project = _project(tmp_path, "[plugins.tabular]\nweight = 2\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(directory=project)
    message = str(caught.value)
    assert "[plugins.tabular]" in message and "vera.reporters plugin" in message
    assert "only judge and metric plugins" in message


def test_a_table_for_a_built_in_is_refused_like_an_unknown_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="names no installed plugin"):
        build_plan(settings=Settings(plugins={"offline": {"x": 1}}))


def test_a_plugin_without_an_options_model_refuses_a_table(tmp_path: Path) -> None:
    project = _project(tmp_path, "[plugins.plain_judge]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"plugin 'plain_judge' takes no options"):
        load_settings(directory=project)


def test_a_plugin_value_that_is_no_table_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path, 'plugins = { strict_judge = "fast" }\n')
    with pytest.raises(ConfigError, match=r"\[plugins.strict_judge\] must be a table"):
        load_settings(directory=project)


def _eval(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    (project / "d.jsonl").write_text(
        '{"id": "a", "query": "q", "response": "Paris.", "contexts": ["Paris is in France."]}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["eval", "-d", "d.jsonl", "--no-history", "-o", "r.json"])
    return result.exit_code, result.output


def test_vera_eval_hands_the_table_to_the_plugin_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, 'judge = "strict_judge"\n[plugins.strict_judge]\nlabel = "cli"\n')
    code, output = _eval(project, monkeypatch)
    assert code == 0, output
    assert [options.label for options in _seen()] == ["cli"]


def test_vera_eval_exits_2_on_a_bad_value_before_any_sample_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(
        tmp_path, 'judge = "strict_judge"\n[plugins.strict_judge]\nmin_support = -1\n'
    )
    code, output = _eval(project, monkeypatch)
    assert code == 2
    assert "[plugins.strict_judge] field 'min_support'" in output
    assert not (project / "r.json").exists()
