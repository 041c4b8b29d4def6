"""`vera eval --help` fits a screen: the options most runs name come first, in one panel, and
the rest in named panels, at most 100 lines at 100 columns."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from vera import cli

COMMON = (
    "--dataset",
    "--quick",
    "--judge",
    "--metric",
    "--threshold",
    "--max-unfaithful",
    "--regression",
    "--output",
)
"""What the first panel holds: where the data is, who judges, what is measured, the gates,
where the report goes."""


def _help(columns: int) -> list[str]:
    result = CliRunner().invoke(cli.app, ["eval", "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def _panels(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Each panel's title and the long options its rows start with, in order."""
    panels: list[tuple[str, list[str]]] = []
    for line in lines:
        title = re.match(r"╭─ (.+?) ─", line)
        if title:
            panels.append((title.group(1), []))
        elif panels and (option := re.match(r"│ (--[\w-]+)", line)):
            panels[-1][1].append(option.group(1))
    return panels


def test_vera_eval_help_fits_in_100_lines_at_100_columns() -> None:
    lines = _help(100)
    assert len(lines) <= 100, f"{len(lines)} lines: shorten a help text or move detail to docs"
    assert all(len(line) <= 100 for line in lines)


def test_the_first_panel_holds_the_common_options_and_the_rest_are_named() -> None:
    panels = _panels(_help(100))
    (first, common), *others = panels
    assert first == "Options"
    assert [flag for flag in common if flag != "--help"] == list(COMMON)
    assert len(others) >= 5 and all(title != "Options" for title, _ in others)
    assert all(options for _, options in others), "an empty panel"
    shown = [flag for _, options in panels for flag in options]
    assert len(shown) == len(set(shown)), "an option in two panels"
