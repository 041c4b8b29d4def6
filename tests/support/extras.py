"""Tests of an optional backend skip, naming its extra, when the extra is not installed.

The README's test command, `pip install -e '.[test]' && pytest`, installs no optional backend:
each such test must skip with a reason that says which extra brings it ("needs the pandas extra:
pip install -e '.[pandas]'"), never fail or stop collection. `.ci/run` runs that command in a
fresh environment and counts these skips by extra (`without`).
"""

from __future__ import annotations

import importlib.util

import pytest

__all__ = ["needs_extra", "without"]


def without(extra: str) -> str:
    """The reason a test skips without `extra`, for `pytest.importorskip(module, reason=...)`
    (which ruff lets stand above the imports it guards)."""
    return f"needs the {extra} extra: pip install -e '.[{extra}]'"


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return True


def needs_extra(extra: str, *modules: str) -> pytest.MarkDecorator:
    """A mark that skips a test, naming `extra`, unless every one of `modules` is installed:
    for a test that runs `vera` in a subprocess, where an import in the test cannot tell."""
    missing = any(_missing(module) for module in modules)
    return pytest.mark.skipif(missing, reason=without(extra))
