"""Scenario files of `vera generate --conversations`: YAML reads as JSONL does (the same fields,
the same checks), and a bad YAML scenario names its file, line and field; a tag that would
build a Python object is refused and never runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vera import DatasetError, DatasetRowError, read_scenarios
from vera._conversations import Scenario

WHITEBOX = "the generator's own parts"

YAML = """\
# Two simulated users of the help desk.
- id: refund
  goal: Learn how an annual plan is refunded
  persona: an annoyed customer

- goal: Add two seats to the account
  facts:
    - My account id is ACME-17.
"""

REFUND = "Learn how an annual plan is refunded"
SEATS = "Add two seats to the account"
EXPECTED = [
    Scenario(id="refund", goal=REFUND, persona="an annoyed customer"),
    Scenario(id="scenario-2", goal=SEATS, facts=("My account id is ACME-17.",)),
]
STRING = "expected a non-empty string"
STRINGS = "expected a list of non-empty strings"


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".YAML"])
def test_a_yaml_file_reads_as_the_same_scenarios_in_jsonl_do(tmp_path: Path, suffix: str) -> None:
    written = tmp_path / f"s{suffix}"
    written.write_text(YAML, encoding="utf-8")
    lines = tmp_path / "s.jsonl"
    rows = [{"id": "refund", "goal": EXPECTED[0].goal, "persona": EXPECTED[0].persona}]
    rows.append({"goal": EXPECTED[1].goal, "facts": list(EXPECTED[1].facts)})
    lines.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    assert read_scenarios(written) == EXPECTED
    assert read_scenarios(lines) == EXPECTED


@pytest.mark.parametrize(
    ("text", "location", "field", "problem"),
    [
        # The goal is missing: the scenario's own line.
        ("- goal: a\n- persona: p\n  id: b\n", "scenario 2 (line 2)", "goal", STRING),
        # The field's line, not the scenario's.
        ("- goal: a\n  persona: p\n  facts: ACME-17\n", "scenario 1 (line 3)", "facts", STRINGS),
        ("- goal: a\n  facts:\n    - ok\n    - 17\n", "scenario 1 (line 2)", "facts", STRINGS),
        ("- goal: a\n\n- goal: b\n  persona: 3\n", "scenario 2 (line 4)", "persona", STRING),
        ("- goal: '  '\n", "scenario 1 (line 1)", "goal", STRING),
        ("- goal: 2024-01-01\n", "scenario 1 (line 1)", "goal", STRING),  # YAML reads a date
        ("- just a goal\n", "scenario 1 (line 1)", None, "expected an object with a 'goal'"),
        (
            "- goal: a\n- goal: b\n  goal: c\n",
            "scenario 2 (line 3)",
            "goal",
            "given twice; keep one",
        ),
    ],
)
def test_a_bad_yaml_scenario_names_its_line_and_field(
    tmp_path: Path, text: str, location: str, field: str | None, problem: str
) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetRowError) as caught:
        read_scenarios(path)
    assert (caught.value.location, caught.value.field, caught.value.problem) == (
        location,
        field,
        problem,
    )
    assert str(caught.value).startswith(f"{path}: {location}")


def test_a_mapping_at_the_top_says_a_list_is_expected(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text("scenarios:\n  - goal: a\n", encoding="utf-8")
    with pytest.raises(DatasetRowError, match=r"line 1: expected a list of scenarios at the top"):
        read_scenarios(path)


def test_broken_yaml_names_the_line_of_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yml"
    path.write_text("- goal: a\n- goal: [b, c\n- goal: d\n", encoding="utf-8")
    with pytest.raises(DatasetRowError) as caught:
        read_scenarios(path)
    assert caught.value.location == "line 3"
    assert "not valid YAML" in str(caught.value) and "fix the syntax there" in str(caught.value)


def test_a_python_object_tag_is_refused_and_never_runs(tmp_path: Path) -> None:
    made = tmp_path / "made-by-the-tag"
    path = tmp_path / "scenarios.yaml"
    path.write_text(
        f"- goal: a\n  facts:\n    - !!python/object/apply:os.mkdir [{json.dumps(str(made))}]\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetRowError) as caught:
        read_scenarios(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line 3: could not determine a constructor for the tag")
    assert "python/object/apply:os.mkdir" in message and "remove the tag" in message
    assert not made.exists()


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "[]\n"])
def test_a_yaml_file_without_a_scenario_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=r"no scenario; write a list, one '- goal: \.\.\.'"):
        read_scenarios(path)


def test_a_scenario_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_bytes("- goal: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(DatasetError, match=r"not UTF-8 text .*save it as UTF-8"):
        read_scenarios(path)


def test_the_documented_example_reads() -> None:
    example = Path(__file__).parents[2] / "docs" / "examples" / "scenarios.yaml"
    scenarios = read_scenarios(example)
    assert [s.id for s in scenarios] == ["refund", "seats", "discount"]
    assert scenarios[1].facts == ("My account id is ACME-17.", "The team has five seats today.")
    assert scenarios[2].persona == "a student on a tight budget"
