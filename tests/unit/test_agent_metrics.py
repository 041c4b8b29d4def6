"""The agent metrics that need no judge, on the bundled `agents` conversations.

Every expected value below was worked out by hand from src/vera/datasets/examples/agents.jsonl
(docs/metrics.md shows the working for each metric); the runs are offline.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import vera
from vera import DatasetError, DatasetRowError, cli
from vera.metrics import create_metric
from vera.metrics._agent_calls import ToolCallOptions
from vera.metrics._agent_tools import ToolArgumentCorrectness, ToolCallAccuracy
from vera.metrics._trajectory import TrajectoryMatch, TrajectoryOptions

WHITEBOX = "the agent metrics' own parts; the built-in metric classes behind the names"

SCORED = [f"agent-0{i}" for i in range(1, 9)]


def _results(metric: Any, data: Any = "agents") -> dict[str, Any]:
    """Each conversation's result of `metric`, by conversation id (the last answer's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the offline run's gate warnings are not under test
        report = vera.evaluate(data, metrics=[metric])
    found = {}
    for sample in report.samples:
        result = next(iter(sample.results.values()))
        conversation = sample.id.split("/")[0]
        if result.score is not None or conversation not in found:
            found[conversation] = result
    return found


def _scores(metric: Any) -> list[float | None]:
    results = _results(metric)
    return [results[c].score for c in SCORED]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (ToolCallOptions(), [1.0, 0.5, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0]),
        (ToolCallOptions(arguments="semantic"), [1.0, 0.5, 1.0, 0.5, 0.5, 1.0, 0.0, 0.0]),
        (ToolCallOptions(arguments="subset"), [1.0, 0.5, 0.0, 0.5, 0.5, 0.0, 1.0, 0.0]),
        (ToolCallOptions(ordered=False), [1.0, 0.5, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]),
    ],
    ids=["exact-ordered", "semantic", "subset", "unordered"],
)
def test_tool_call_accuracy_scores_each_conversation_as_worked_by_hand(
    options: ToolCallOptions, expected: list[float]
) -> None:
    assert _scores(ToolCallAccuracy(options=options)) == pytest.approx(expected)


def test_tool_call_accuracy_says_which_calls_are_missing_and_which_were_not_expected() -> None:
    results = _results("tool_call_accuracy")
    assert results["agent-02"].reason == (
        "1 of 2 expected calls made in order: missing book_flight(flight_id='BA117')"
    )
    assert results["agent-04"].reason == (
        "1 of 1 expected calls made in order; 1 call not expected: cancel_order(order_id='A-1001')"
    )
    assert results["agent-05"].sub_scores == {"recall": 0.5, "precision": 0.5}
    assert results["agent-05"].reason == (
        "1 of 2 expected calls made in order: get_account(account='ACME-17') made out of order"
    )
    assert results["agent-03"].reason == (
        "0 of 1 expected calls made in order: get_weather(city='Paris') made with other "
        "arguments: get_weather(city='paris ')"
    )


def test_without_a_reference_the_metrics_do_not_apply_and_say_what_to_add() -> None:
    for metric, field in [
        ("tool_call_accuracy", "expected_tool_calls"),
        ("tool_argument_correctness", "expected_tool_calls"),
        ("trajectory_match", "reference_trajectory"),
    ]:
        result = _results(metric)["agent-09"]
        assert result.score is None and result.passed is None
        assert f"`{field}`" in result.reason


def test_tool_argument_correctness_counts_expected_arguments_of_calls_made() -> None:
    exact = _results("tool_argument_correctness")
    assert [exact[c].score for c in SCORED[:7]] == pytest.approx(
        [1.0, 1.0, 0.0, 1.0, 1.0, 1 / 3, 1.0]
    )
    assert exact["agent-06"].reason == (
        "1 of 3 expected arguments match over 1 call: convert_currency amount: expected 100, "
        "made '100.0'; convert_currency from: expected 'USD', made 'usd'"
    )
    # agent-08 made no call at all: no argument to check (tool_call_accuracy scores it 0).
    assert exact["agent-08"].score is None
    assert "no call of an expected tool (get_weather)" in exact["agent-08"].reason
    semantic = _results(ToolArgumentCorrectness(options=ToolCallOptions(arguments="semantic")))
    assert semantic["agent-03"].score == 1.0 and semantic["agent-06"].score == 1.0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("strict", [1, 0, 1, 0, 0, 0, 1, 0]),
        ("unordered", [1, 0, 1, 0, 1, 0, 1, 0]),
        ("subset", [1, 1, 1, 0, 1, 0, 1, 1]),
        ("superset", [1, 0, 1, 1, 1, 0, 1, 0]),
    ],
)
def test_trajectory_match_modes_as_agentevals_defines_them(mode: str, expected: list[int]) -> None:
    metric = create_metric("trajectory_match", options={"mode": mode})
    assert _scores(metric) == expected


def test_trajectory_match_names_the_first_difference() -> None:
    results = _results("trajectory_match")
    assert results["agent-02"].reason == "strict: step 2: missing book_flight"
    assert results["agent-04"].reason == (
        "strict: step 2: made cancel_order(order_id='A-1001'), beyond the reference"
    )
    subset = _results(TrajectoryMatch(options=TrajectoryOptions(mode="subset")))
    assert subset["agent-04"].reason == (
        "subset: made cancel_order(order_id='A-1001'), which the reference does not have"
    )


def test_the_cli_scores_the_bundled_agents_offline_and_lists_the_metrics(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    args = ["eval", "-d", "agents", "--metric", "tool_call_accuracy", "--no-history"]
    ran = CliRunner().invoke(cli.app, [*args, "-o", str(out)])
    assert ran.exit_code == 0, ran.output
    means = json.loads(out.read_text())["metrics"]
    assert means["tool_call_accuracy"] == pytest.approx(2.5 / 8)
    listed = CliRunner().invoke(cli.app, ["metrics"]).output
    for name in ("tool_call_accuracy", "tool_argument_correctness", "trajectory_match"):
        assert name in listed
    assert "expected_tool_calls" in listed and "reference_trajectory" in listed


def _conversation(**fields: Any) -> dict[str, Any]:
    call = {"id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    return {
        "id": "w",
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "Oslo: 3 degrees."},
            {"role": "assistant", "content": "It is 3 degrees in Oslo."},
        ],
        **fields,
    }


def test_a_malformed_reference_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "agents.jsonl"
    good = _conversation(expected_tool_calls=[{"name": "get_weather"}])
    bad = _conversation(id="x", expected_tool_calls=[{"arguments": {"city": "Oslo"}}])
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DatasetRowError) as caught:
        vera.evaluate(str(path), metrics=["tool_call_accuracy"])
    message = str(caught.value)
    assert str(path) in message and "line 2" in message
    assert "expected_tool_calls[0].name" in message


def test_a_sample_row_with_mapped_columns_is_scored_like_a_conversation() -> None:
    row = {
        "id": "s1",
        "query": "Weather in Oslo?",
        "response": "It is 3 degrees in Oslo.",
        "calls": [{"name": "get_weather", "args": {"city": "oslo"}}],
        "gold": json.dumps([{"name": "get_weather", "arguments": {"city": "Oslo"}}]),
    }
    fields = {"tool_calls": "calls", "expected_tool_calls": "gold"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate(
            [row],
            metrics=[ToolCallAccuracy(options=ToolCallOptions(arguments="semantic"))],
            fields=fields,
        )
    assert report.samples[0].scores == {"tool_call_accuracy": 1.0}
    # The error names the column as the user's rows spell it.
    with pytest.raises(DatasetError, match=r"field 'gold\[0\]': expected a call object"):
        vera.evaluate([{**row, "gold": "[1]"}], metrics=["tool_call_accuracy"], fields=fields)


def test_a_conversation_reference_in_a_mapped_column_is_read() -> None:
    rows = [_conversation(gold=["get_weather"]), _conversation(id="v", gold=["get_time"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate(
            rows, metrics=["trajectory_match"], fields={"reference_trajectory": "gold"}
        )
    assert [s.scores["trajectory_match"] for s in report.samples] == [1.0, 0.0]


def test_a_trace_whose_tool_results_record_no_call_is_matched_by_tool_names() -> None:
    # Tool results with the tool's name, and no assistant message recording the call.
    row = {
        "id": "trace-1",
        "messages": [
            {"role": "user", "content": "Status of order B-2002?"},
            {"role": "tool", "name": "get_order", "content": "Order B-2002: delivered."},
            {"role": "assistant", "content": "Order B-2002 was delivered."},
        ],
        "reference_trajectory": ["get_order"],
        "expected_tool_calls": [{"name": "get_order", "arguments": {"order_id": "B-2002"}}],
    }
    trajectory = _results("trajectory_match", [row])["trace-1"]
    assert trajectory.score == 1.0
    accuracy = _results("tool_call_accuracy", [row])["trace-1"]
    assert accuracy.score == 0.0
    assert accuracy.reason.endswith(
        "made, but its arguments are unknown (not recorded, or no JSON object)"
    )


def test_vera_toml_sets_the_options_of_the_built_in_agent_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("vera.toml").write_text(
        '[plugins.tool_call_accuracy]\narguments = "semantic"\n\n'
        '[plugins.trajectory_match]\nmode = "superset"\n'
    )
    args = ["eval", "-d", "agents", "-m", "tool_call_accuracy", "-m", "trajectory_match"]
    ran = CliRunner().invoke(cli.app, [*args, "-o", "r.json", "--no-history"])
    assert ran.exit_code == 0, ran.output
    means = json.loads(Path("r.json").read_text())["metrics"]
    assert means == pytest.approx({"tool_call_accuracy": 4.5 / 8, "trajectory_match": 5 / 8})
    Path("vera.toml").write_text('[plugins.trajectory_match]\nmode = "sideways"\n')
    refused = CliRunner().invoke(cli.app, [*args, "--no-history"])
    assert refused.exit_code == 2
    assert "[plugins.trajectory_match] field 'mode'" in refused.output


def test_ragas_and_deepeval_rows_are_read_with_their_own_field_names() -> None:
    ragas = {  # a RAGAS MultiTurnSample as model_dump writes it
        "user_input": [
            {"type": "human", "content": "Weather in Oslo?"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "get_weather", "args": {}}]},
            {"type": "tool", "content": "Oslo: 3 degrees."},
            {"type": "ai", "content": "It is 3 degrees in Oslo."},
        ],
        "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}],
    }
    deepeval = {  # a DeepEval LLMTestCase with the tools it called and the expected ones
        "input": "Weather in Oslo?",
        "actual_output": "It is 3 degrees in Oslo.",
        "tools_called": [{"name": "get_weather", "input_parameters": {"city": "Oslo"}}],
        "expected_tools": [{"name": "get_weather", "input_parameters": {"city": "Oslo"}}],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate([ragas, deepeval], metrics=["tool_call_accuracy"])
    results = [s.results["tool_call_accuracy"] for s in report.samples]
    assert [r.score for r in results] == [0.0, 1.0]
    assert results[0].reason.endswith(
        "get_weather(city='Oslo') made with other arguments: get_weather()"
    )


def test_a_conversation_is_scored_once_on_its_last_answer() -> None:
    row = _conversation(
        expected_tool_calls=[{"name": "get_weather", "arguments": {"city": "Oslo"}}]
    )
    row["messages"] += [
        {"role": "user", "content": "Thanks. Is that cold?"},
        {"role": "assistant", "content": "Yes, 3 degrees is cold."},
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate([row], metrics=["tool_call_accuracy"])
    first, last = (s.results["tool_call_accuracy"] for s in report.samples)
    assert first.score is None
    assert (
        first.reason == "the conversation's tool calls are scored on its last answer, not this turn"
    )
    assert last.score == 1.0


def test_a_misspelt_agent_field_is_refused_rather_than_left_unread() -> None:
    row = {"query": "q", "response": "r", "expected_tool_call": [{"name": "get_weather"}]}
    with pytest.raises(DatasetRowError, match="did you mean 'expected_tool_calls'"):
        vera.evaluate([row], metrics=["tool_call_accuracy"])
