"""The import contracts in pyproject.toml hold on this checkout, and they catch a break.

The other tests are what make the first mean something: the same contracts, run on a copy of
the package with one forbidden import (or one module outside the layers) added, must fail and
name the contract it breaks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "importlinter", reason="the import contracts need import-linter: pip install -e '.[test]'"
)

ROOT = Path(__file__).resolve().parents[2]
# The CLI entry point, run by this interpreter so the test needs no `lint-imports` on PATH.
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)


def contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def lint_imports(config_dir: Path, package_parent: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports with `config_dir`'s pyproject.toml on the `vera` in `package_parent`.

    A fresh interpreter, not the Python API in this one: import-linter finds `vera` on
    sys.path, and only a new process can be pointed at a copy instead of the installed
    package. COLUMNS is wide because the report wraps long contract names at 80 columns.
    """
    env = {**os.environ, "PYTHONPATH": str(package_parent), "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache"],
        cwd=config_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_checkout_keeps_every_contract() -> None:
    result = lint_imports(ROOT, ROOT / "src")

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for contract in contracts():
        assert f"{contract['name']} KEPT" in output, output
    assert "BROKEN" not in output


def copy_checkout(tmp_path: Path) -> Path:
    """A copy of the package and its contracts in `tmp_path`; returns the copy of `vera`."""
    shutil.copytree(
        ROOT / "src" / "vera", tmp_path / "vera", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path / "vera"


def layers_contract() -> str:
    (name,) = [c["name"] for c in contracts() if c["type"] == "layers"]
    return name


def assert_only_broken(output: str, broken: str) -> None:
    """`broken` is reported broken and every other contract kept: the failure is the edit's."""
    assert f"{broken} BROKEN" in output, output
    for contract in contracts():
        if contract["name"] != broken:
            assert f"{contract['name']} KEPT" in output, output


def test_a_forbidden_import_breaks_its_contract(tmp_path: Path) -> None:
    metric = copy_checkout(tmp_path) / "metrics" / "_faithfulness.py"
    # A metric that reaches for a model: exactly what the metrics contract forbids.
    metric.write_text(metric.read_text(encoding="utf-8") + "\nimport vera.providers\n")

    result = lint_imports(tmp_path, tmp_path)

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    (broken,) = [c["name"] for c in contracts() if c.get("source_modules") == ["vera.metrics"]]
    assert_only_broken(output, broken)
    assert "vera.metrics._faithfulness -> vera.providers" in output, output


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    registry = copy_checkout(tmp_path) / "judges" / "_registry.py"
    # The chain the layers were drawn to stop: judges -> settings -> gates -> report.
    registry.write_text(
        registry.read_text(encoding="utf-8") + "\nfrom vera._plan import Settings\n"
    )

    result = lint_imports(tmp_path, tmp_path)

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert_only_broken(output, layers_contract())
    assert "vera.judges is not allowed to import vera._plan" in output, output
    assert "vera.judges._registry -> vera._plan" in output, output


@pytest.mark.slow
def test_a_module_outside_every_layer_breaks_the_layers_contract(tmp_path: Path) -> None:
    # A new top-level module must be given a layer, or nothing would check its imports.
    (copy_checkout(tmp_path) / "newcomer.py").write_text('"""Not in any layer."""\n')

    result = lint_imports(tmp_path, tmp_path)

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert_only_broken(output, layers_contract())
    assert "vera.newcomer" in output, output
