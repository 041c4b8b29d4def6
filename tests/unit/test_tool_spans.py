"""The tool calls an agent made, read from its OTLP trace (OpenInference and GenAI spans), scored
by the agent metrics.

The traces are made by the real OpenTelemetry SDK and written as its file exporter writes them
(`tests.support.otel_traces.FileSpanExporter`). Every expected score is worked by hand in the
test's comments from the formulas in docs/metrics.md.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from tests.support.docs import run_example
from tests.support.extras import without

import vera
from vera import DatasetRowError
from vera.datasets._conversations import read_conversations

WHITEBOX = "how conversations become turn samples and consistency checks"

METRICS = ["tool_call_accuracy", "tool_argument_correctness", "trajectory_match"]


def _tracer(path: Path) -> tuple[Any, Any]:
    pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from tests.support.otel_traces import FileSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    return provider, provider.get_tracer("agent")


def _scores(path: Path) -> dict[str, float | None]:
    """The trace's agent scores: a conversation's calls are scored on its last answer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the offline run's gate warnings are not under test
        report = vera.evaluate(str(path), metrics=METRICS)
    last = report.samples[-1]
    return {name: last.results[name].score for name in METRICS}


def _made(path: Path) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    [conversation] = read_conversations(path)
    return [
        (call.name, json.loads(call.arguments) if call.arguments else None, call.id)
        for turn in conversation.turns
        for call in turn.tool_calls
    ]


def _openinference_trace(path: Path) -> None:
    """An agent that asks for two calls in one LLM answer and runs both as TOOL spans: each
    call is recorded twice (the LLM span's tool_calls, the TOOL span) and must count once."""
    provider, tracer = _tracer(path)
    expected = [
        {"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}},
        {"name": "get_time", "arguments": {"tz": "Europe/Oslo"}},
    ]
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", "Weather and time in Oslo?")
        root.set_attribute("metadata", json.dumps({"expected_tool_calls": expected}))
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            asked = [
                ("call_1", "get_weather", {"unit": "fahrenheit", "city": "Oslo"}),
                ("call_2", "get_time", {"tz": "Europe/Oslo"}),
            ]
            for n, (call_id, name, arguments) in enumerate(asked):
                prefix = f"llm.output_messages.0.message.tool_calls.{n}.tool_call"
                llm.set_attribute(f"{prefix}.id", call_id)
                llm.set_attribute(f"{prefix}.function.name", name)
                llm.set_attribute(f"{prefix}.function.arguments", json.dumps(arguments))
        for call_id, name, arguments, result in [
            ("call_1", "get_weather", {"city": "Oslo", "unit": "fahrenheit"}, "37 F, cloudy"),
            ("call_2", "get_time", {"tz": "Europe/Oslo"}, "14:05"),
        ]:
            with tracer.start_as_current_span(name) as tool:
                tool.set_attribute("openinference.span.kind", "TOOL")
                tool.set_attribute("tool.name", name)
                tool.set_attribute("tool_call.id", call_id)
                tool.set_attribute("input.value", json.dumps(arguments))
                tool.set_attribute("input.mime_type", "application/json")
                tool.set_attribute("output.value", result)
        root.set_attribute("output.value", "It is 37 F and cloudy in Oslo; the time is 14:05.")
    provider.shutdown()


def test_openinference_llm_and_tool_spans_give_each_call_once(tmp_path: Path) -> None:
    path = tmp_path / "oi.jsonl"
    _openinference_trace(path)
    assert _made(path) == [
        ("get_weather", {"city": "Oslo", "unit": "fahrenheit"}, "call_1"),
        ("get_time", {"tz": "Europe/Oslo"}, "call_2"),
    ]
    # tool_call_accuracy: get_weather's unit differs, get_time matches: 1 / max(2, 2) = 0.5.
    # tool_argument_correctness: city and tz match, unit does not: 2 / 3.
    # trajectory_match (strict, reference the expected calls with arguments): step 1 differs, 0.
    assert _scores(path) == pytest.approx(
        {"tool_call_accuracy": 0.5, "tool_argument_correctness": 2 / 3, "trajectory_match": 0.0}
    )
    [answer] = vera.load_dataset(str(path))
    tools = [c for c in answer.contexts if c.metadata["source_kind"] == "tool"]
    assert [(c.metadata["tool_name"], c.metadata["call_id"], c.text) for c in tools] == [
        ("get_weather", "call_1", "37 F, cloudy"),
        ("get_time", "call_2", "14:05"),
    ]


def _genai_trace(path: Path, booked: str) -> None:
    """A GenAI agent: a chat span asks for search_flights (a `tool_call` part), an
    execute_tool span runs it; book_flight is run by an execute_tool span alone."""
    provider, tracer = _tracer(path)
    with tracer.start_as_current_span("invoke_agent travel") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute(
            "expected_tool_calls",
            json.dumps(
                [
                    {"name": "search_flights", "arguments": {"origin": "LHR", "to": "JFK"}},
                    {"name": "book_flight", "arguments": {"flight_id": "BA117", "seats": 2}},
                ]
            ),
        )
        root.set_attribute("reference_trajectory", json.dumps(["search_flights", "book_flight"]))
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            user = {"role": "user", "parts": [{"type": "text", "content": "Book me LHR-JFK."}]}
            call = {"type": "tool_call", "id": "call_a", "name": "search_flights"}
            asked = {"role": "assistant", "parts": [{**call, "arguments": {"origin": "LHR"}}]}
            chat.set_attribute("gen_ai.input.messages", json.dumps([user]))
            chat.set_attribute("gen_ai.output.messages", json.dumps([asked]))
        with tracer.start_as_current_span("execute_tool search_flights") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "search_flights")
            tool.set_attribute("gen_ai.tool.call.id", "call_a")
            tool.set_attribute("gen_ai.tool.call.result", json.dumps({"flights": ["BA117"]}))
        with tracer.start_as_current_span("execute_tool book_flight") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "book_flight")
            tool.set_attribute("gen_ai.tool.call.id", "call_b")
            tool.set_attribute("gen_ai.tool.call.arguments", booked)
            tool.set_attribute("gen_ai.tool.call.result", "Booked BA117.")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            reply = {"role": "assistant", "parts": [{"type": "text", "content": "Booked BA117."}]}
            chat.set_attribute("gen_ai.output.messages", json.dumps([reply]))
    provider.shutdown()


def test_genai_chat_and_execute_tool_spans_are_scored(tmp_path: Path) -> None:
    path = tmp_path / "genai.jsonl"
    _genai_trace(path, json.dumps({"flight_id": "BA117", "seats": 1}))
    assert _made(path) == [
        ("search_flights", {"origin": "LHR"}, "call_a"),
        ("book_flight", {"flight_id": "BA117", "seats": 1}, "call_b"),
    ]
    # tool_call_accuracy: search_flights lacks `to`, book_flight has seats 1 not 2: 0 / 2.
    # tool_argument_correctness: origin, flight_id match; to, seats do not: 2 / 4.
    # trajectory_match (strict, reference tool names): the same two tools in order, 1.
    assert _scores(path) == pytest.approx(
        {"tool_call_accuracy": 0.0, "tool_argument_correctness": 0.5, "trajectory_match": 1.0}
    )


def test_tool_calls_are_in_the_order_their_spans_ran(tmp_path: Path) -> None:
    # The same agent run in the other order: book_flight's span starts first.
    path = tmp_path / "reversed.jsonl"
    provider, tracer = _tracer(path)
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", "Book me LHR-JFK.")
        root.set_attribute("reference_trajectory", json.dumps(["search_flights", "book_flight"]))
        for name in ("book_flight", "search_flights"):
            with tracer.start_as_current_span(name) as tool:
                tool.set_attribute("openinference.span.kind", "TOOL")
                tool.set_attribute("tool.name", name)
                tool.set_attribute("output.value", "done")
        root.set_attribute("output.value", "Booked.")
    provider.shutdown()
    assert [name for name, _, _ in _made(path)] == ["book_flight", "search_flights"]
    assert _scores(path)["trajectory_match"] == 0.0


def test_a_tool_input_that_is_no_json_object_is_a_call_of_unknown_arguments(
    tmp_path: Path,
) -> None:
    # input.value is any text unless declared JSON: a Python repr is not refused.
    path = tmp_path / "repr.jsonl"
    provider, tracer = _tracer(path)
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("input.value", "Weather in Oslo?")
        root.set_attribute("expected_tool_calls", json.dumps([{"name": "get_weather"}]))
        for text in ("{'city': 'Oslo'}", '{"city": "Oslo"}'):
            with tracer.start_as_current_span("get_weather") as tool:
                tool.set_attribute("openinference.span.kind", "TOOL")
                tool.set_attribute("input.value", text)
                tool.set_attribute("output.value", "sunny")
        root.set_attribute("output.value", "It is sunny in Oslo.")
    provider.shutdown()
    assert _made(path) == [("get_weather", None, None), ("get_weather", {"city": "Oslo"}, None)]


def test_a_session_scores_every_call_asked_for_against_its_reference(tmp_path: Path) -> None:
    # Two traces of one session; the second's root carries the reference, and its LLM span
    # asks for a call no tool span ran: that call was still made.
    path = tmp_path / "session.jsonl"
    provider, tracer = _tracer(path)
    for turn, tool in enumerate(("get_order", "cancel_order")):
        with tracer.start_as_current_span("agent") as root:
            root.set_attribute("openinference.span.kind", "AGENT")
            root.set_attribute("session.id", "s-1")
            root.set_attribute("input.value", f"question {turn}")
            if turn == 1:
                reference = ["get_order", "refund_order"]
                root.set_attribute("reference_trajectory", json.dumps(reference))
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
                prefix = "llm.output_messages.0.message.tool_calls.0.tool_call"
                llm.set_attribute(f"{prefix}.function.name", tool)
                llm.set_attribute(f"{prefix}.function.arguments", '{"order_id": "A-1"}')
            root.set_attribute("output.value", f"answer {turn}")
    provider.shutdown()
    assert _made(path) == [
        ("get_order", {"order_id": "A-1"}, None),
        ("cancel_order", {"order_id": "A-1"}, None),
    ]
    # trajectory_match (strict): step 2 made cancel_order where refund_order was expected, 0.
    assert _scores(path)["trajectory_match"] == 0.0


def _openllmetry_trace(path: Path, second_arguments: str) -> None:
    """A chat span as OpenLLMetry writes it: flattened `gen_ai.completion.N.tool_calls.M.*`."""
    provider, tracer = _tracer(path)
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("input.value", "Weather in Oslo and Bergen?")
        with tracer.start_as_current_span("openai.chat") as chat:
            for n, (city, arguments) in enumerate(
                [("Oslo", '{"city": "Oslo"}'), ("Bergen", second_arguments)]
            ):
                chat.set_attribute(f"gen_ai.completion.0.tool_calls.{n}.id", f"call_{city}")
                chat.set_attribute(f"gen_ai.completion.0.tool_calls.{n}.name", "get_weather")
                chat.set_attribute(f"gen_ai.completion.0.tool_calls.{n}.arguments", arguments)
        root.set_attribute("output.value", "Both are rainy.")
    provider.shutdown()


def test_openllmetry_flattened_completion_tool_calls_are_calls_made(tmp_path: Path) -> None:
    path = tmp_path / "openllmetry.jsonl"
    _openllmetry_trace(path, '{"city": "Bergen"}')
    assert _made(path) == [
        ("get_weather", {"city": "Oslo"}, "call_Oslo"),
        ("get_weather", {"city": "Bergen"}, "call_Bergen"),
    ]
    bad = tmp_path / "bad.jsonl"
    _openllmetry_trace(bad, "city=Bergen")
    with pytest.raises(DatasetRowError) as caught:
        read_conversations(bad)
    assert caught.value.field == "gen_ai.completion.0.tool_calls.1.arguments"
    assert "span 'openai.chat': arguments that are not JSON" in caught.value.problem


def test_an_agent_that_called_no_tool_where_one_was_expected_scores_0(tmp_path: Path) -> None:
    # No tool span, no session, no chat span: the reference alone makes it an agent trace.
    path = tmp_path / "idle.jsonl"
    provider, tracer = _tracer(path)
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("input.value", "Weather in Oslo?")
        root.set_attribute("expected_tool_calls", json.dumps([{"name": "get_weather"}]))
        root.set_attribute("output.value", "It is sunny in Oslo.")
    provider.shutdown()
    assert _made(path) == []
    # tool_call_accuracy: 0 of 1 expected call made, 0 / max(1, 0) = 0.
    assert _scores(path)["tool_call_accuracy"] == 0.0


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"flight_id": "BA117",', "arguments that are not JSON"),
        ('["BA117"]', "expected a JSON object, got list"),
    ],
)
def test_malformed_arguments_name_the_line_the_span_and_the_attribute(
    tmp_path: Path, arguments: str, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    _genai_trace(path, arguments)
    with pytest.raises(DatasetRowError) as caught:
        vera.evaluate(str(path), metrics=METRICS)
    error = caught.value
    assert error.path == str(path)
    assert error.location.startswith("line ") and "(trace " in error.location
    assert error.field == "gen_ai.tool.call.arguments"
    assert "span 'execute_tool book_flight'" in error.problem and problem in error.problem


def test_the_agents_page_example_scores_its_trace(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
    done = run_example("agents.md", tmp_path)
    assert done.returncode == 0, done.stderr
    # The one call made is the one expected, arguments and all: 1/1, and the same trajectory.
    assert "{'tool_call_accuracy': 1.0, 'trajectory_match': 1.0}" in done.stdout
