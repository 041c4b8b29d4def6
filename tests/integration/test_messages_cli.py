"""Messages that say what is true and what works: each missing-extra message gives the install
from the package index and from a clone (built in one place), help texts show the extra's
name, `vera metrics` never cuts a name, and `vera runs show` gives the summary before the plan."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from rich.text import Text
from typer.testing import CliRunner

import vera
from vera import cli
from vera._types import install_hint
from vera._viewer import INSTALL as VIEW_INSTALL
from vera.cli import _app as cli_app
from vera.metrics._registry import METRICS

WHITEBOX = "the CLI console's width"

SOURCE = Path(vera.__file__).parent


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_an_install_hint_works_from_the_index_and_from_a_clone() -> None:
    hint = install_hint("view")
    assert "pip install 'vera-eval[view]'" in hint
    assert "pip install -e '.[view]'" in hint
    assert hint == VIEW_INSTALL


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """Every string constant of a module but its docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_every_missing_extra_message_is_built_by_install_hint() -> None:
    # Before: a dozen messages each wrote `pip install 'vera-eval[X]'`, which fails from a
    # clone; now only `install_hint` writes the distribution's name with an extra.
    written = [
        f"{path.relative_to(SOURCE)}:{node.lineno}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.name != "extras.py"
        for node in _strings(ast.parse(path.read_text(encoding="utf-8")))
        if re.search(r"vera-eval\[", node.value)
    ]
    assert written == []


def _help(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(cli.app, [*args, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stdout).split())


def test_help_texts_show_the_extra_not_eaten_as_markup(runner: CliRunner) -> None:
    # Before: `vera view --help` said "pip install 'vera-eval'": `[view]` read as a style.
    # `vera view` needs no extra now; `vera eval --help` names two.
    run = _help(runner, "eval")
    for extra in ("ray", "otel"):
        assert f"'vera-eval[{extra}]'" in run, extra
        assert f"pip install -e '.[{extra}]'" in run, extra


@pytest.mark.parametrize("width", [40, 80, 200])
def test_vera_metrics_never_cuts_a_name(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    # Before: at 80 columns the names came out as "chunk_context_preci…".
    monkeypatch.setattr(cli_app.out, "_width", width)
    result = runner.invoke(cli.app, ["metrics"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    assert max(Text(line).cell_len for line in result.stdout.splitlines()) <= width
    for name in METRICS:
        assert re.search(rf"(?<![\w]){name}(?![\w])", result.stdout), name


def test_runs_show_gives_the_summary_first_and_the_plan_on_request(runner: CliRunner) -> None:
    ran = runner.invoke(cli.app, ["eval", "-d", "example"])
    assert ran.exit_code == 1, ran.output  # unfaithful answers: gate
    found = re.search(r"^Run (\S+)$", ran.stderr, re.MULTILINE)
    assert found is not None
    run_id = found.group(1)

    # Before: 70 lines of plan JSON came before the summary.
    shown = runner.invoke(cli.app, ["runs", "show", run_id[:12]])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"Run {run_id} · finished · 28 samples done · dataset ")
    assert "VERA · " in lines[1] or "VERA · " in lines[2]
    assert '"settings"' not in shown.stdout
    assert lines[-1] == f"Its plan: vera runs show {run_id} --plan"

    planned = runner.invoke(cli.app, ["runs", "show", run_id, "--plan"])
    assert planned.exit_code == 0, planned.output
    summary_at = planned.stdout.index("VERA · ")
    plan_at = planned.stdout.index("Plan:")
    assert summary_at < plan_at
    assert '"settings"' in planned.stdout[plan_at:]
