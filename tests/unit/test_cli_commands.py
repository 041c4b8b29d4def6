"""`vera --help` lists every command without loading the engine; each command's module loads
when the command is used, and registers the command the table names."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from vera import cli
from vera.cli._commands import COMMANDS

WHITEBOX = "the commands' table behind `vera --help`"

_HELP_IN_A_FRESH_PROCESS = """
import sys
from vera.cli import main
sys.argv = ["vera", "--help"]
try:
    main()
except SystemExit:
    pass
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] == "vera")))
"""


def test_vera_help_lists_every_command_and_loads_no_command_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _HELP_IN_A_FRESH_PROCESS],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": ""},
        check=True,
    )
    *help_lines, loaded = done.stdout.splitlines()
    assert loaded.split() == ["vera", "vera.cli", "vera.cli._app", "vera.cli._commands"]
    listed = "\n".join(help_lines)
    for name, home in COMMANDS.items():
        assert f"│ {name} " in listed and home.line in listed, name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_is_registered_by_the_module_the_table_names(name: str) -> None:
    result = CliRunner().invoke(cli.app, [name, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert f"Usage: vera {name} " in result.stdout
    assert COMMANDS[name].module in sys.modules


def test_a_mistyped_command_is_refused_naming_the_near_one() -> None:
    result = CliRunner().invoke(cli.app, ["evl"], env={"COLUMNS": "100"})
    assert result.exit_code == 2
    assert "No such command 'evl'. Did you mean 'eval'?" in result.output
