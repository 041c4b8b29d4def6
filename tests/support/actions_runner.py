"""A composite action's steps run as the GitHub Actions runner runs them, on this machine.

It reads `action.yml`, evaluates `${{ ... }}` (contexts `inputs`, `github`, `steps`; the
operators `== != && || !` and `always()`, `success()`, `failure()`) in `if:`, `env:`, `with:`
and `run:`, and runs each `run:` step with `bash --noprofile --norc -eo pipefail` (the
runner's `shell: bash`) in the workspace, with fresh `GITHUB_OUTPUT` and
`GITHUB_STEP_SUMMARY` files per step, whose outputs later steps read. A `uses:` step is not run:
it is recorded, and `fakes` (by the action's name without its version) may answer for it,
which is how a test plays the Actions cache or the artifact store.

    runner = CompositeAction(ROOT / "action.yml", workspace=tmp, github={...}, fakes={...})
    job = runner.run({"dataset": "example"})
    job.steps[-1].returncode, job.summary, job.outputs["exit-code"]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["CompositeAction", "Job", "StepRun", "evaluate", "substitute"]

Fake = Callable[[dict[str, str]], dict[str, str]]
"""A `uses:` step's stand-in: its evaluated `with:` in, its outputs out."""

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\))"
    r"|(?P<call>[A-Za-z_]\w*\(\))|(?P<name>[A-Za-z_][\w.-]*))"
)
_OPS = {"&&": " and ", "||": " or ", "!": " not ", "==": "==", "!=": "!=", "(": "(", ")": ")"}
_CALLS = {"always()": "True", "success()": "_ok", "failure()": "(not _ok)"}


def evaluate(expression: str, contexts: Mapping[str, Any], *, ok: bool = True) -> Any:
    """One expression, as the runner reads it: a missing property is the empty string, `||`
    gives its first truthy operand, `==` compares strings without case."""
    python, position = [], 0
    text = expression.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read the expression {expression!r} at {text[position:]!r}")
        position = match.end()
        if match["str"] is not None:
            python.append(f"_s({match['str'][1:-1].replace(chr(39) * 2, chr(39))!r})")
        elif match["op"] is not None:
            python.append(_OPS[match["op"]])
        elif match["call"] is not None:
            python.append(_CALLS[match["call"]])
        else:
            python.append(f"_get({match['name']!r})")

    def get(name: str) -> Any:
        value: Any = contexts
        for part in name.split("."):
            value = value.get(part, "") if isinstance(value, Mapping) else ""
        return _s(value) if isinstance(value, str) else value

    namespace = {"_get": get, "_ok": ok, "_s": _s, "__builtins__": {}}
    return eval("".join(python), namespace)  # the grammar above, nothing else


class _s(str):
    """A string that compares as the runner compares strings: without case."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.casefold() == other.casefold()

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def substitute(template: str, contexts: Mapping[str, Any]) -> str:
    """`template` with each `${{ expression }}` replaced by its value."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _text(evaluate(m[1], contexts)), template)


@dataclass
class StepRun:
    """One step as it ran (`kind` "run"), was handed to a fake or recorded ("uses"), or was
    skipped by its `if:` ("skipped")."""

    name: str
    kind: str
    uses: str | None = None
    with_: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    """A run step's wall time."""


@dataclass
class Job:
    steps: list[StepRun]
    summary: str
    outputs: dict[str, str]

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)

    @property
    def failed(self) -> bool:
        return any(s.returncode not in (None, 0) for s in self.steps)


def _outputs(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line:
            key, sep, value = line.partition("=")
            assert sep, f"{path}: not key=value: {line!r}"
            found[key] = value
    return found


class CompositeAction:
    """The action at `path`, run for a job described by `github` (the `github` context, which
    also gives the runner's `GITHUB_*` variables)."""

    def __init__(
        self,
        path: Path,
        *,
        workspace: Path,
        github: Mapping[str, str],
        env: Mapping[str, str] | None = None,
        fakes: Mapping[str, Fake] | None = None,
        event: Mapping[str, Any] | None = None,
    ) -> None:
        self.action = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert self.action["runs"]["using"] == "composite"
        self.workspace = workspace
        self.github = {"action_path": str(path.parent), **github}
        self.env = dict(env or {})
        self.fakes = dict(fakes or {})
        self.event = event or {}

    def _runner_env(self, scratch: Path) -> dict[str, str]:
        event_path = scratch / "event.json"
        event_path.write_text(json.dumps(self.event))
        names = ["api_url", "server_url", "repository", "run_id", "event_name", "base_ref"]
        names += ["ref_name", "action_path", "run_attempt"]
        found = {f"GITHUB_{n.upper()}": self.github[n] for n in names if n in self.github}
        return {**self.env, **found, "GITHUB_EVENT_PATH": str(event_path), "CI": "true"}

    def run(self, inputs: Mapping[str, str]) -> Job:
        contexts: dict[str, Any] = {"github": self.github, "steps": {}, "inputs": {}}
        for name, spec in self.action.get("inputs", {}).items():
            given = inputs.get(name, spec.get("default", ""))
            contexts["inputs"][name] = substitute(str(given), contexts)
        unknown = set(inputs) - set(contexts["inputs"])
        assert not unknown, f"action.yml has no input {sorted(unknown)}"
        scratch = Path(tempfile.mkdtemp(prefix="runner-", dir=self.workspace.parent))
        env, steps, summary, ok = self._runner_env(scratch), [], [], True
        for number, step in enumerate(self.action["runs"]["steps"]):
            condition = str(step.get("if", "success()")).replace("${{", "").replace("}}", "")
            name = step.get("name", f"step {number}")
            if not evaluate(condition, contexts, ok=ok):
                steps.append(StepRun(name, "skipped", uses=step.get("uses")))
                continue
            done = self._step(step, name, contexts, env, scratch / str(number), summary)
            ok = ok and done.returncode in (None, 0)
            steps.append(done)
            if "id" in step:
                contexts["steps"][step["id"]] = {"outputs": done.outputs}
        declared = self.action.get("outputs", {})
        outputs = {k: substitute(v["value"], contexts) for k, v in declared.items()}
        return Job(steps, "".join(summary), outputs)

    def _step(
        self,
        step: Mapping[str, Any],
        name: str,
        contexts: Mapping[str, Any],
        env: Mapping[str, str],
        folder: Path,
        summary: list[str],
    ) -> StepRun:
        if "uses" in step:
            with_ = {k: substitute(str(v), contexts) for k, v in step.get("with", {}).items()}
            fake = self.fakes.get(step["uses"].split("@")[0])
            outputs = fake(with_) if fake else {}
            return StepRun(name, "uses", uses=step["uses"], with_=with_, outputs=outputs)
        assert step.get("shell") == "bash", f"{name}: a run step must say shell: bash"
        folder.mkdir()
        script, output, step_summary = folder / "script.sh", folder / "out", folder / "summary"
        script.write_text(substitute(step["run"], contexts))
        output.touch()
        step_summary.touch()
        step_env = {k: substitute(str(v), contexts) for k, v in step.get("env", {}).items()}
        started = time.perf_counter()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env={
                **env,
                **step_env,
                "GITHUB_OUTPUT": str(output),
                "GITHUB_STEP_SUMMARY": str(step_summary),
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        summary.append(step_summary.read_text(encoding="utf-8"))
        return StepRun(
            name,
            "run",
            returncode=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            outputs=_outputs(output),
            seconds=time.perf_counter() - started,
        )


def shell_path(*folders: Path) -> str:
    """A PATH with `folders` first, then the system's."""
    return os.pathsep.join([*(str(f) for f in folders), "/usr/bin", "/bin"])
