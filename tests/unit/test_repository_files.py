"""What a clone gets must work on any machine (issue 39, item 9): no tracked file is a symlink
(a link into one machine's folders is dangling everywhere else; `benchmarks/llm_judges/.venv`
was one, and `setup_venv.sh` then failed with "File exists"), and no tracked file names a
folder of the machine it was written on (`/work/...`, `/root/...`, a home folder).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MACHINE_PATH = re.compile(rb"(?<![\w.~-])/(?:work|root)/|/(?:home|Users)/[a-z][\w.-]*/")
"""An absolute path into a machine's own folders. `/tmp/...` in an example command is not
one: it exists on every machine the commands are for."""

ALLOWED: dict[str, str] = {
    "tests/unit/test_repository_files.py": "this test: its own tests of the pattern",
}
"""Files that may name such a path, and why."""


def _tracked() -> list[tuple[str, str]]:
    """(mode, path) of each tracked file, or a skip where this is not a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: there is no list of tracked files to check")
    listed = subprocess.run(
        ["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    entries = []
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        entries.append((meta.split()[0], path))
    assert len(entries) > 100, "git ls-files listed too few files to be this repository"
    return entries


def test_no_tracked_file_is_a_symlink() -> None:
    links = [path for mode, path in _tracked() if mode == "120000"]
    assert links == [], f"symlinks are dangling on another machine; git rm them: {links}"


@pytest.mark.slow
def test_no_tracked_file_names_a_folder_of_one_machine() -> None:
    found = []
    for mode, path in _tracked():
        file = ROOT / path
        if mode == "120000" or path in ALLOWED or not file.is_file():
            continue
        for number, line in enumerate(file.read_bytes().splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path}:{number}: {line.decode(errors='replace').strip()[:120]}")
    assert found == [], "machine paths (write a relative path):\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("line", "machine"),
    [
        ("    /work/venv2/bin/python benchmarks/x.py", True),
        ("/root/.cache/huggingface", True),
        ("see /home/ana/data.jsonl", True),
        ("open /Users/bo/vera", True),
        ("python -m venv /tmp/libs", False),
        ("benchmarks/llm_judges/.venv/bin/python run.py", False),
        ("https://example.com/work/items", False),
        ("~/work/notes", False),
    ],
)
def test_the_pattern_tells_a_machine_path_from_a_relative_one(line: str, machine: bool) -> None:
    assert bool(MACHINE_PATH.search(line.encode())) is machine
