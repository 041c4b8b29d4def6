"""Every setting has a `vera eval` flag or a written reason not to, and a flag reaches the plan
as the Python keyword of the same setting does: the CLI's flags, Python's keywords and the
settings a resumed run keeps are all read from one table, `vera._plan.SETTING_USES`."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import click
import pytest
import typer

import vera
from vera import RetrievalOptions, RunPlan, Settings
from vera._plan import RESUME_SETTINGS, SETTING_USES
from vera.cli import app

WHITEBOX = "each eval flag parsed and followed into the plan"

HOW_TO_ADD = (
    "add a row to SETTING_USES (src/vera/_plan/_setting_uses.py): "
    'SettingUse("--the-flag") and the flag in EvalFlags (src/vera/cli/_eval_flags.py), or '
    'SettingUse(no_flag="why vera.toml is the place for it")'
)


def _eval_command() -> Any:
    """`vera eval` as the command-line parser sees it (typer's own click)."""
    group = typer.main.get_command(app)
    # The group imports a command's module when asked for it (`vera --help` loads none).
    return group.get_command(click.Context(group), "eval")


def _flags() -> dict[str, Any]:
    """Each `vera eval` flag (a switch's `--no-` form too) and its parameter."""
    return {
        opt: param
        for param in _eval_command().params
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--")
    }


def test_every_setting_has_a_flag_or_a_written_reason_not_to() -> None:
    missing = sorted(set(Settings.model_fields) - set(SETTING_USES))
    assert missing == [], f"settings with no row: {missing}; {HOW_TO_ADD}"
    stale = sorted(set(SETTING_USES) - set(Settings.model_fields))
    assert stale == [], f"rows of no setting: {stale}; remove them from SETTING_USES"
    for name, use in SETTING_USES.items():
        assert (use.flag is None) == bool(use.no_flag.strip()), (
            f"setting {name!r} needs exactly one of a flag or a reason for none; {HOW_TO_ADD}"
        )


def test_each_flag_the_table_names_is_a_flag_of_vera_eval() -> None:
    flags = _flags()
    unknown = {
        name: use.flag for name, use in SETTING_USES.items() if use.flag not in (*flags, None)
    }
    assert unknown == {}, f"add these flags to EvalFlags (src/vera/cli/_eval_flags.py): {unknown}"


def test_python_takes_each_keyword_setting_and_a_resumed_run_keeps_the_table_s() -> None:
    keywords = {name for name, use in SETTING_USES.items() if use.keyword}
    assert keywords <= set(vera.EvaluateOptions.__annotations__)
    assert set(RESUME_SETTINGS) == {name for name, use in SETTING_USES.items() if use.resume}
    assert set(RESUME_SETTINGS) <= set(Settings.model_fields)


def _value(name: str) -> str:
    """A value for setting `name`'s flag that differs from its default, from its type."""
    field, default = Settings.model_fields[name], getattr(Settings(), name)
    hint = typing.get_type_hints(Settings)[name]
    choices = [c for arg in (hint, *typing.get_args(hint)) for c in typing.get_args(arg)]
    if typing.get_origin(hint) is typing.Literal:
        return next(str(c) for c in typing.get_args(hint) if c != default)
    if isinstance(default, int) and not isinstance(default, bool):
        return str(default + 1)
    if isinstance(default, float) or float in choices:
        return "0.25" if default == 0.5 else "0.5"
    if int in choices:
        return "2"
    if isinstance(default, dict):
        return "contexts=docs"
    if field.metadata and isinstance(default, str):  # a count or a share
        return "3"
    return "de" if default is None or isinstance(default, str | Path) else "x"


def _args(name: str, flag: str, param: Any) -> list[str]:
    """The command-line words that set `name` to something other than its default."""
    if not getattr(param, "is_flag", False):
        return [flag, _value(name)]
    if flag != param.opts[0] or not param.secondary_opts:  # --no-cache, --no-history
        return [flag]
    return [param.secondary_opts[0] if getattr(Settings(), name) else flag]


def _cli_plan(args: list[str]) -> RunPlan:
    """The plan `vera eval ARGS` runs, parsed by the command itself."""
    from vera.cli._eval import _plan
    from vera.cli._eval_flags import EvalFlags

    context = _eval_command().make_context("eval", [*args, "--quick"])
    plan, _ = _plan(EvalFlags(**context.params))
    return plan


FLAGGED = [name for name, use in SETTING_USES.items() if use.flag is not None]


@pytest.mark.parametrize("name", FLAGGED)
def test_each_flag_reaches_its_setting_as_the_python_keyword_does(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no vera.toml: the settings are VERA's defaults
    for variable in ("VERA_JUDGE", "VERA_JUDGE_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    use = SETTING_USES[name]
    assert use.flag is not None
    plan = _cli_plan(_args(name, use.flag, _flags()[use.flag]))
    default = Settings(history=True)
    assert getattr(plan.settings, name) != getattr(default, name), f"{use.flag} changed nothing"
    others = {k for k in Settings.model_fields if k not in (name, "history", "history_path")}
    assert {k: getattr(plan.settings, k) for k in others} == {
        k: getattr(default, k) for k in others
    }, f"{use.flag} changed another setting"
    if use.keyword:
        given: dict[str, Any] = {name: getattr(plan.settings, name)}
        python, _ = vera.plan_evaluation("example", quick=True, history=None, **given)
        assert python.settings == plan.settings


def test_the_cli_and_python_build_one_plan_from_the_same_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for variable in ("VERA_JUDGE", "VERA_JUDGE_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    words = "-d example -m faithfulness -m hallucination_rate --threshold 0.7 --group-by category"
    more = "--top-k 2 --chunk-size 400 --baseline naive-rag --dataset-name ex --field contexts=docs"
    cli = _cli_plan([*words.split(), *more.split(), "--no-history"])
    python, bindings = vera.plan_evaluation(
        "example",
        ["faithfulness", "hallucination_rate"],
        threshold=0.7,
        group_by=["category"],
        retrieval=RetrievalOptions(top_k=2, chunk_size=400),
        baselines=["naive-rag"],
        dataset_name="ex",
        fields={"contexts": "docs"},
        quick=True,
    )
    assert cli == python
    assert cli.metrics[0].options == {"threshold": 0.7}  # a pass mark, not only a gate
    assert bindings.data is None  # a file is opened by the run, from the plan, as on resume
