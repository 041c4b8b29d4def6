"""`vera` as a user runs it: a subprocess in a folder of theirs, with a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_vera"]


def run_vera(
    cwd: Path, *args: str, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run `python -m vera ARGS` in `cwd` (also its HOME); `env` adds variables. The
    caller's PYTHONPATH is kept after any `env` gives, so the subprocess imports the same
    `vera` as the tests (a worktree's `src/`, not another install)."""
    inherited = os.environ.get("PYTHONPATH")
    if inherited:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), inherited) if p)
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "COLUMNS": "200", "NO_COLOR": "1", **env},
    )
