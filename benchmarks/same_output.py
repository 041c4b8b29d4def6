"""Do two revisions of VERA say the same thing on the bundled data?

Runs the same `vera` commands with a revision's source tree and with this one's (each in its own
folder, the same environment), then compares every file they wrote and their stdout and stderr
byte for byte, after masking what differs between any two runs of one revision: run ids, the
report's timestamp, seconds and samples/s, and the measured latencies. Prints one line per file;
exit 1 when any differs.

    python benchmarks/same_output.py --before 81b1294
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS: dict[str, list[str]] = {
    "example": ["eval", "-d", "example", "-o", "example.json", "--markdown", "example.md",
                "--junit", "example.xml"],
    "quick": ["eval", "--quick", "-o", "quick.json"],
    "technical": ["eval", "-d", "technical", "--pipeline", "naive-rag", "-o", "technical.json",
                  "--markdown", "technical.md"],
    "multilingual": ["eval", "-d", "multilingual", "-o", "multilingual.json"],
    "legal": ["eval", "-d", "legal"],
    "conversations": ["conversations", "conversations", "-o", "conversations.json"],
    "metrics": ["metrics"],
}  # fmt: skip
_MASKS = (
    (re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b"), "RUN_ID"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "TIMESTAMP"),
    (re.compile(r"in \d+(\.\d+)? s( · [\d.]+ samples/s)?"), "in S s"),
    (re.compile(r"p50 \d+ ms · p95 \d+ ms · p99 \d+ ms"), "p50 P ms · p95 P ms · p99 P ms"),
)
_MEASURED = re.compile(r"latency|seconds|elapsed|duration", re.I)


def _source(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", "--detach", str(into), rev],
                   check=True, capture_output=True)  # fmt: skip
    return into / "src"


def _run(source: Path, folder: Path) -> None:
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(source), "COLUMNS": "100", "NO_COLOR": "1"}
    for name, args in COMMANDS.items():
        done = subprocess.run([sys.executable, "-m", "vera", *args], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        (folder / f"{name}.out").write_text(done.stdout)
        (folder / f"{name}.err").write_text(done.stderr)
        (folder / f"{name}.rc").write_text(str(done.returncode))


def _unmeasured(value: object) -> object:
    """A JSON report without the figures a clock gives."""
    if isinstance(value, dict):
        return {k: "MEASURED" if _MEASURED.search(k) else _unmeasured(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmeasured(v) for v in value]
    return value


def _masked(path: Path) -> str:
    text = path.read_text()
    if path.suffix == ".json":
        text = json.dumps(_unmeasured(json.loads(text)), indent=1, sort_keys=True)
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            _run(_source(args.before, work / "tree"), work / "before")
            _run(ROOT / "src", work / "now")
            differ = 0
            files = sorted(p for p in (work / "before").iterdir() if p.is_file())
            for path in files:
                now = work / "now" / path.name
                same = now.exists() and _masked(path) == _masked(now)
                differ += not same
                print(f"{'same' if same else 'DIFFERS'}  {path.name}")
            print(f"{differ} of {len(files)} files differ")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(work / "tree")], capture_output=True)  # fmt: skip
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
