"""VERA's pytest plugin (registered under the `pytest11` entry point): a `vera_judge` fixture.

Loaded by pytest whenever VERA is installed; importing it does nothing but define the fixture.
"""

from __future__ import annotations

import pytest

from vera._plan._settings import load_settings
from vera.judges._base import Judge
from vera.judges._registry import create_judge

__all__ = ["vera_judge"]


@pytest.fixture(scope="session")
def vera_judge() -> Judge:
    """The judge your settings name (`VERA_JUDGE`, `vera.toml`, `[tool.vera]`), else offline."""
    settings = load_settings()
    return create_judge(settings.judge, settings)
