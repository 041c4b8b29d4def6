"""Running a docs page's example: every page in docs/ with one has a test that runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of `docs/<page>`, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


def run_example(page: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The page's one python block, run as a script in `folder` by this interpreter."""
    [example] = python_blocks(page)
    script = folder / "example.py"
    script.write_text(example, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
