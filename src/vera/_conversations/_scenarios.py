"""The scenarios of simulated conversations: what each simulated user wants, who it is and what
it knows, read from a JSONL or a YAML file with the same fields and the same checks.

JSONL holds one object a line. YAML holds a list at the top, one mapping a scenario (`- goal:
...`). YAML is read with PyYAML's safe loader only, through its node tree: each scenario and each
field keeps the line it starts on for the error message, and a tag that would build a Python
object (`!!python/object...`) is refused, so a scenario file never chooses code to run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vera._types._errors import DatasetError, DatasetRowError

DEFAULT_PERSONA = "a customer who asks plainly and briefly"
YAML_SUFFIXES = (".yaml", ".yml")
"""Scenario files read as YAML; any other is read as JSONL."""

Where = Callable[[str | None], str]
"""The place a field (None: the scenario as a whole) is written, as an error names it."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """What the simulated user wants (`goal`), who it is (`persona`), and what it knows
    (`facts`, e.g. an account id: the only facts it may state beyond the documents)."""

    id: str
    goal: str
    persona: str = DEFAULT_PERSONA
    facts: tuple[str, ...] = ()

    def text(self) -> str:
        """The scenario as the simulated user (and the check of its facts) reads it."""
        lines = [f"Goal: {self.goal}", f"Persona: {self.persona}"]
        lines += [f"Fact: {fact}" for fact in self.facts]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "goal": self.goal, "persona": self.persona, "facts": [*self.facts]}


def read_scenarios(path: Path | str) -> list[Scenario]:
    """The scenarios of a JSONL file (one object a line) or a YAML file (`.yaml`, `.yml`: a
    list of mappings), each with `goal` and optionally `id`, `persona` and `facts` (a list of
    strings). A bad scenario raises `DatasetRowError` naming the file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"scenario file not found: {path}")
    yaml = path.suffix.lower() in YAML_SUFFIXES
    rows = _yaml_rows(path) if yaml else _jsonl_rows(path)
    scenarios = [scenario_from(data, path, where, n) for n, (where, data) in enumerate(rows, 1)]
    if not scenarios:
        example = "a list, one '- goal: ...' a scenario" if yaml else "one object a line"
        raise DatasetError(f"{path}: no scenario; write {example}")
    return scenarios


def scenario_from(data: Any, path: Path, where: Where, number: int) -> Scenario:
    """One scenario from its parsed fields; `number` names it when it has no `id`."""
    if not isinstance(data, dict):
        raise DatasetRowError(path, where(None), None, "expected an object with a 'goal'")
    for name in ("goal", "persona", "id"):
        value = data.get(name)
        if (value is not None or name == "goal") and not (isinstance(value, str) and value.strip()):
            raise DatasetRowError(path, where(name), name, "expected a non-empty string")
    facts = data.get("facts", [])
    if not isinstance(facts, list) or not all(isinstance(f, str) and f.strip() for f in facts):
        raise DatasetRowError(path, where("facts"), "facts", "expected a list of non-empty strings")
    persona = data.get("persona")
    return Scenario(
        id=str(data.get("id") or f"scenario-{number}").strip(),
        goal=data["goal"].strip(),
        persona=persona.strip() if persona else DEFAULT_PERSONA,
        facts=tuple(f.strip() for f in facts),
    )


def _jsonl_rows(path: Path) -> list[tuple[Where, Any]]:
    rows: list[tuple[Where, Any]] = []
    for number, line in enumerate(_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetRowError(path, f"line {number}", None, f"not JSON ({exc.msg})") from None
        rows.append((_line(number), data))
    return rows


def _line(number: int) -> Where:
    """A JSONL scenario is one line: every field is on it."""
    return lambda _field: f"line {number}"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None


def _yaml_rows(path: Path) -> list[tuple[Where, Any]]:
    """Each scenario's fields, built by the safe constructor one node at a time, with the
    lines its fields start on."""
    import yaml  # PyYAML loads only for a YAML scenario file

    loader = yaml.SafeLoader(_text(path))
    try:
        top = loader.get_single_node()
        if top is None:
            return []
        if not isinstance(top, yaml.SequenceNode):
            raise DatasetRowError(
                path,
                f"line {top.start_mark.line + 1}",
                None,
                "expected a list of scenarios at the top level, one '- goal: ...' each",
            )
        nodes = enumerate(top.value, 1)
        return [(_where(node, n), _construct(loader, node, path, n)) for n, node in nodes]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"line {mark.line + 1}" if mark is not None else "the file"
        raise DatasetRowError(path, at, None, _yaml_problem(exc)) from None
    finally:
        loader.dispose()


def _where(node: Any, number: int) -> Where:
    """Errors name the scenario and the line of the field (or of the scenario)."""
    lines: dict[str, int] = {}
    if isinstance(node.value, list):
        for pair in node.value:
            if isinstance(pair, tuple) and isinstance(pair[0].value, str):
                lines.setdefault(pair[0].value, pair[0].start_mark.line + 1)
    start = node.start_mark.line + 1

    def where(field: str | None) -> str:
        return f"scenario {number} (line {lines.get(field or '', start)})"

    return where


def _construct(loader: Any, node: Any, path: Path, number: int) -> Any:
    """The node as plain values; a key given twice is refused rather than silently dropped."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, _ in node.value:
            if not isinstance(key.value, str):
                continue
            if key.value in seen:
                at = f"scenario {number} (line {key.start_mark.line + 1})"
                raise DatasetRowError(path, at, key.value, "given twice; keep one")
            seen.add(key.value)
    return loader.construct_document(node)


def _yaml_problem(exc: Any) -> str:
    """What is wrong, and what to do about it."""
    import yaml

    problem = exc.problem or str(exc)
    if isinstance(exc, yaml.constructor.ConstructorError) and "constructor for the tag" in problem:
        return (
            f"{problem}: a scenario file holds plain values only (strings, lists, mappings), "
            "never a tag that builds an object; remove the tag"
        )
    return f"not valid YAML ({problem}); fix the syntax there"
