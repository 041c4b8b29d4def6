"""One settings object, merged in layers: defaults < config file < environment < CLI flags.

The config file is `vera.toml` in the working directory, else the `[tool.vera]` table of
`pyproject.toml` there. Keys are the field names of `Settings` and of the components' options
models it composes (dashes or underscores); `[plugins.NAME]` tables are plugins' own options
(`vera._registry.PluginTables`), checked against the installed plugins as they are read. The
environment
gives `VERA_JUDGE` and `VERA_JUDGE_BASE_URL`; provider keys stay in the providers' own
variables and are never part of settings.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from vera._registry import PluginTables, check_plugin_tables
from vera._results._gates import GateConfig
from vera._sample_limits import SampleLimitOptions
from vera._types._errors import ConfigError
from vera.datasets._fields import check_field_map
from vera.judges._options import JudgeOptions
from vera.metrics._registry import configurable_metrics
from vera.metrics._rubric import Rubric, load_rubrics

DEFAULT_CONCURRENCY = 8
"""Samples evaluated at once unless configured."""

ENVIRONMENT = {"VERA_JUDGE": "judge", "VERA_JUDGE_BASE_URL": "judge_base_url"}

GIVEN = "given"
"""The key, beside the settings' values in a stored plan (and the plan a Ray worker reads), of
the settings that were given rather than left at their defaults (`model_fields_set`)."""


class Settings(JudgeOptions, SampleLimitOptions, PluginTables):
    """Everything a run can be configured with.

    Composed, not repeated: the judge and provider options (`vera.judges._options`,
    `vera.providers._options`) and the sample limits (`vera._sample_limits`) are defined beside
    their components; this class adds what only a run has. Each component reads its own
    model, so none of them imports this module.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    """Samples evaluated at once."""
    max_errors: str = Field(default="0", pattern=r"^\s*\d+(\.\d+)?\s*%?\s*$")
    """Samples that may error or be skipped before the run counts as incomplete (exit 3): a
    count ("5") or a share of the samples ("2%"). Default 0, like inspect's fail_on_error."""
    max_unfaithful: str = Field(default="0", pattern=r"^\s*\d+(\.\d+)?\s*%?\s*$")
    """The answer-verdict gate: answers that may be unfaithful (a claim NO_EVIDENCE or
    CONTRADICTED, `Report.answers`) before the run fails its gate and exits 1: a count ("5")
    or a share of the judged answers ("5%", rounded down). Default 0: an answer with an
    unsupported claim never passes unless a tolerance is set. A run that verified no claims
    has no answer verdicts, and this gate does not apply to it."""
    history: bool = True
    """Store every run and its results as they finish (see `vera._store._history`)."""
    history_path: Path | None = None
    """The run store; default `.vera/runs.sqlite` in the working directory."""
    executor: str = Field(default="local", pattern=r"^\s*[A-Za-z0-9][\w.-]*\s*$")
    """Where samples are evaluated: "local" (this process), "ray" (worker processes of a
    Ray cluster, the `ray` extra; see `vera._run._ray`), or an executor a plugin registers under
    the `vera.executors` entry-point group. An unknown name stops the run before any sample
    (exit 2), naming the known ones."""
    ray_address: str | None = None
    """With `executor = "ray"`: the cluster to join ("auto", "ray://HOST:10001"); None
    starts a local Ray on this machine."""
    ray_workers: int | None = Field(default=None, ge=1)
    """With `executor = "ray"`: worker processes; None takes one per CPU of the cluster."""
    gates: GateConfig = Field(default_factory=GateConfig)
    """The `[gates]` table: per-metric, per-category and latency limits (see `vera._results`)."""
    user_facts: bool = True
    agent_steps: bool = False
    """In agent traces, whether the assistant's intermediate messages (an LLM span's text
    between tool calls) are verified too; by default only each trace's final answer is."""
    min_faithful_turns: float | None = Field(default=None, ge=0, le=1)
    """On conversations: the gate on the share of faithful assistant turns
    (`Report.conversations`); a run with no turn scored on faithfulness fails it."""
    min_consistency: float | None = Field(default=None, ge=0, le=1)
    """On conversations: the gate on each conversation's consistency (the share of its
    claims that contradict none of the assistant's earlier turns); a run that checked no
    claim fails it."""
    """In conversations, whether what the user said is evidence for an assistant turn (False:
    a claim resting only on the user's word has no evidence; see docs/conversations.md)."""
    rubric: tuple[Rubric, ...] = ()
    """The `[[rubric]]` tables: rubric metrics in plain words (`vera.metrics.Rubric`), scored
    in every run unless `--metric` names others; see docs/metrics.md."""
    rubrics_file: Path | None = None
    """A TOML file of more `[[rubric]]` tables (one `vera rubric items --write` wrote, and
    you edited)."""
    fields: dict[str, str] = Field(default_factory=dict)
    """The `[fields]` table: VERA field -> the dataset's column that holds it, as RAGAS's
    `column_map` (`contexts = "docs"`; `--field contexts=docs`). Later layers add to it."""

    @model_validator(mode="wrap")
    @classmethod
    def _keep_given(cls, data: Any, handler: ModelWrapValidatorHandler[Settings]) -> Settings:
        # Defaults that depend on the judge (`vera.providers.local_defaults`) replace only the
        # settings left unset, so a plan read back must know which those were, not only their
        # values: a value given equal to its default is still given.
        if not isinstance(data, dict) or GIVEN not in data:
            return handler(data)
        given = data[GIVEN]
        if not isinstance(given, list) or not all(isinstance(key, str) for key in given):
            raise ValueError(f"'{GIVEN}' must be a list of setting names")
        settings = handler({key: value for key, value in data.items() if key != GIVEN})
        object.__setattr__(settings, "__pydantic_fields_set__", set(given) & set(cls.model_fields))
        return settings

    @model_serializer(mode="wrap")
    def _dump_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        dumped[GIVEN] = sorted(self.model_fields_set)
        return dumped

    @field_validator("fields", mode="before")
    @classmethod
    def _known_fields(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError('expected a table of FIELD = "COLUMN"')
        return check_field_map(value)

    def rubrics(self) -> tuple[Rubric, ...]:
        """The rubric metrics configured: the `[[rubric]]` tables, then `rubrics_file`'s;
        `ConfigError` for a name given twice."""
        found = self.rubric + (load_rubrics(self.rubrics_file) if self.rubrics_file else ())
        names = [r.name for r in found]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise ConfigError(f"two rubrics are named {', '.join(doubled)}: rename one")
        return found

    def error_budget(self, samples: int) -> int:
        """How many of `samples` may error or be skipped under `max_errors`."""
        text = self.max_errors.strip()
        if text.endswith("%"):
            return int(float(text[:-1]) / 100 * samples)
        return int(float(text))

    def merge(self, overrides: Mapping[str, Any], *, origin: str) -> Settings:
        """A copy with `overrides` applied; None values leave a setting as it is. The copy's
        `model_fields_set` is this one's and the overrides' keys: a value given equal to its
        default counts as given."""
        given = {k.replace("-", "_"): v for k, v in overrides.items() if v is not None}
        if GIVEN in given:
            raise ConfigError(f"{origin}: setting '{GIVEN}': extra inputs are not permitted")
        if isinstance(given.get("fields"), dict):
            given["fields"] = {**self.fields, **given["fields"]}  # --field adds to the config's
        for key in ("max_errors", "max_unfaithful"):
            if isinstance(given.get(key), int | float):
                given[key] = str(given[key])
        try:
            named = sorted(self.model_fields_set | given.keys())
            merged = Settings.model_validate({**self.model_dump(), **given, GIVEN: named})
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(p) for p in error["loc"])
            raise ConfigError(f"{origin}: setting '{key}': {error['msg'].lower()}") from None
        if "plugins" in given:
            check_plugin_tables(merged.plugins, origin=origin, built_in=configurable_metrics())
        return merged

    def given_by_value(self) -> Settings:
        """This copy with the settings whose value differs from VERA's default counted as
        given, the others as unset: how a plan stored before plans kept what was given
        (`GIVEN`) was read, so such a run resumes with the defaults it ran with."""
        defaults = Settings()
        given = {
            key for key in type(self).model_fields if getattr(self, key) != getattr(defaults, key)
        }
        return Settings.model_validate({**self.model_dump(), GIVEN: sorted(given)})


def _config_file(directory: Path) -> tuple[str, dict[str, Any]] | None:
    vera_toml = directory / "vera.toml"
    pyproject = directory / "pyproject.toml"
    for path, table in ((vera_toml, None), (pyproject, "tool.vera")):
        if not path.exists():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML ({exc})") from None
        if table is None:
            return str(path), data
        section = data.get("tool", {}).get("vera")
        if isinstance(section, dict):
            return f"{path} [tool.vera]", section
    return None


def load_settings(
    cli: Mapping[str, Any] | None = None,
    *,
    directory: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings from every layer; CLI values of None mean "not given"."""
    settings = Settings()
    found = _config_file(directory or Path.cwd())
    if found is not None:
        origin, values = found
        settings = settings.merge(values, origin=origin)
    env = os.environ if environ is None else environ
    from_env = {field: env[name] for name, field in ENVIRONMENT.items() if env.get(name)}
    settings = settings.merge(from_env, origin="environment")
    return settings.merge(cli or {}, origin="command line")
