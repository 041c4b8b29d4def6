"""Agent traces from OTLP/JSON: tool spans become tool results with their name and call id, a
session becomes one conversation, GenAI chat spans give the query and answer."""

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without

import vera
from vera import DatasetRowError, load_dataset


def _write(path: Path, spans: list[Any]) -> Path:
    encoder = pytest.importorskip(
        "opentelemetry.exporter.otlp.proto.common.trace_encoder", reason=without("otel")
    )
    json_format = pytest.importorskip("google.protobuf.json_format", reason=without("otel"))
    lines = [json_format.MessageToJson(encoder.encode_spans([s]), indent=None) for s in spans]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _provider() -> tuple[Any, Any]:
    pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _genai_turn(tracer: Any, question: str, tool_result: dict[str, Any], answer: str) -> None:
    """One agent turn as OpenTelemetry's GenAI semantic conventions describe it."""
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "session-7")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            user = {"role": "user", "parts": [{"type": "text", "content": question}]}
            chat.set_attribute("gen_ai.input.messages", json.dumps([user]))
        with tracer.start_as_current_span("execute_tool get_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_order")
            tool.set_attribute("gen_ai.tool.call.id", f"call-{question[:3]}")
            tool.set_attribute("gen_ai.tool.call.result", json.dumps(tool_result))
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            reply = {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
            chat.set_attribute("gen_ai.output.messages", json.dumps([reply]))


def test_a_genai_session_written_by_the_sdk_is_one_conversation(tmp_path: Path) -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    _genai_turn(
        tracer,
        "Where is order 42?",
        {"order": 42, "status": "shipped May 3"},
        "Order 42 shipped on May 3.",
    )
    _genai_turn(
        tracer, "And order 43?", {"order": 43, "status": "packed"}, "Order 43 shipped on May 3."
    )
    provider.shutdown()
    path = _write(tmp_path / "agent.jsonl", list(exporter.get_finished_spans()))
    first, second = list(load_dataset(path))
    assert first.metadata["session_id"] == "session-7"
    assert (first.query, first.response) == ("Where is order 42?", "Order 42 shipped on May 3.")
    tool = first.contexts[0]
    assert tool.metadata["source_kind"] == "tool"
    assert (tool.metadata["tool_name"], tool.metadata["call_id"]) == ("get_order", "call-Whe")
    assert second.query == "And order 43?"
    assert [c.metadata["source_kind"] for c in second.contexts] == [
        "tool",
        "earlier-turn",
        "user",
        "user",
    ]
    report = vera.evaluate(path)
    verdicts = {r.id: [c.verdict for c in r.claims] for r in report.samples}
    # The second answer says 43 shipped; its tool said it is only packed.
    assert verdicts[second.id] != [vera.Verdict.FULLY_SUPPORTED]


def test_an_openinference_tool_trace_without_a_session(tmp_path: Path) -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("openinference.span.kind", "AGENT")
        root.set_attribute("input.value", "How many seats do we have?")
        with tracer.start_as_current_span("get_account") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "get_account")
            tool.set_attribute("output.value", "Account ACME: 12 seats, 9 in use.")
        with tracer.start_as_current_span("docs") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            retriever.set_attribute("retrieval.documents.0.document.content", "Seats renew yearly.")
        root.set_attribute("output.value", "You have 12 seats, 9 of them in use.")
    provider.shutdown()
    spans = list(exporter.get_finished_spans())
    [sample] = list(load_dataset(_write(tmp_path / "oi.jsonl", spans)))
    trace_id = format(spans[0].context.trace_id, "032x")
    assert sample.id == f"{trace_id}/turn-4"  # user, the call, its result, the answer
    assert sample.metadata["trace_id"] == trace_id
    assert [(c.metadata["source_kind"], c.text) for c in sample.contexts] == [
        ("retrieved", "Seats renew yearly."),
        ("tool", "Account ACME: 12 seats, 9 in use."),
        ("user", "How many seats do we have?"),
    ]


def test_an_agent_trace_without_an_answer_is_an_invalid_row(tmp_path: Path) -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("session.id", "s1")
        with tracer.start_as_current_span("t") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("output.value", "x")
    provider.shutdown()
    path = _write(tmp_path / "bad.jsonl", list(exporter.get_finished_spans()))
    with pytest.raises(DatasetRowError, match="no response"):
        list(load_dataset(path))


def test_vera_conversations_reads_an_agent_trace_file(tmp_path: Path) -> None:
    from vera import evaluate_conversations

    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    _genai_turn(
        tracer,
        "Where is order 42?",
        {"order": 42, "status": "shipped May 3"},
        "Order 42 shipped on May 3.",
    )
    provider.shutdown()
    path = _write(tmp_path / "agent.jsonl", list(exporter.get_finished_spans()))
    [score] = evaluate_conversations(path).conversations
    assert score.id == "session-7"
    [turn] = score.turns
    assert turn.claims[0].tool_name == "get_order"


def test_flattened_gen_ai_prompt_and_completion_attributes(tmp_path: Path) -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("session.id", "s-9")
        with tracer.start_as_current_span("search") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "search")
            tool.set_attribute("output.value", "The museum opens at 9 am.")
        with tracer.start_as_current_span("openai.chat") as chat:
            chat.set_attribute("gen_ai.prompt.0.role", "system")
            chat.set_attribute("gen_ai.prompt.0.content", "Be brief.")
            chat.set_attribute("gen_ai.prompt.1.role", "user")
            chat.set_attribute("gen_ai.prompt.1.content", "When does the museum open?")
            chat.set_attribute("gen_ai.completion.0.content", "The museum opens at 9 am.")
    provider.shutdown()
    path = _write(tmp_path / "flat.jsonl", list(exporter.get_finished_spans()))
    [sample] = list(load_dataset(path))
    assert (sample.query, sample.response) == (
        "When does the museum open?",
        "The museum opens at 9 am.",
    )
    assert sample.contexts[0].source == "tool search, turn 3"  # after the message calling it


def _event_turn(tracer: Any, question: str, answer: str, *, details: bool) -> None:
    """One agent turn whose chat span carries its messages as GenAI events, not attributes:
    the current conventions' operation-details event, or one event a message."""
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "session-9")
        with tracer.start_as_current_span("execute_tool get_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_order")
            tool.set_attribute("gen_ai.tool.call.result", "Order 42 shipped on May 3 via DHL.")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            if details:
                user = {"role": "user", "parts": [{"type": "text", "content": question}]}
                reply = {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
                chat.add_event(
                    "gen_ai.client.inference.operation.details",
                    {
                        "gen_ai.input.messages": json.dumps([user]),
                        "gen_ai.output.messages": json.dumps([reply]),
                    },
                )
            else:
                chat.add_event("gen_ai.system.message", {"content": "You are a support agent."})
                chat.add_event("gen_ai.user.message", {"content": question})
                message = json.dumps({"role": "assistant", "content": answer})
                chat.add_event("gen_ai.choice", {"index": 0, "message": message})


def test_genai_events_give_the_query_and_the_answer(tmp_path: Path) -> None:
    provider, exporter = _provider()
    tracer = provider.get_tracer("agent")
    _event_turn(tracer, "Where is order 42?", "Order 42 shipped on May 3.", details=True)
    _event_turn(tracer, "Via which carrier?", "It shipped via UPS.", details=False)
    provider.shutdown()
    path = _write(tmp_path / "events.jsonl", list(exporter.get_finished_spans()))
    first, second = list(load_dataset(path))
    assert (first.query, first.response) == ("Where is order 42?", "Order 42 shipped on May 3.")
    assert (second.query, second.response) == ("Via which carrier?", "It shipped via UPS.")
    assert first.metadata["session_id"] == "session-9"
    verdicts = {r.id: [c.verdict for c in r.claims] for r in vera.evaluate(path).samples}
    # The tool said DHL: the second answer's UPS is not supported.
    assert verdicts[second.id] != [vera.Verdict.FULLY_SUPPORTED]


def _stepwise_trace(tracer: Any) -> None:
    """An agent that says something between two tool calls, then answers."""
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.conversation.id", "session-3")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            user = {"role": "user", "content": "Where is order 42, and when does it arrive?"}
            chat.set_attribute("gen_ai.input.messages", json.dumps([user]))
        with tracer.start_as_current_span("execute_tool get_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_order")
            tool.set_attribute("gen_ai.tool.call.result", "Order 42 shipped on May 3 via DHL.")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            step = {"role": "assistant", "content": "Order 42 shipped via UPS."}
            chat.set_attribute("gen_ai.output.messages", json.dumps([step]))
        with tracer.start_as_current_span("execute_tool get_eta") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "get_eta")
            tool.set_attribute("gen_ai.tool.call.result", "DHL delivers order 42 on May 5.")
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            reply = {"role": "assistant", "content": "Order 42 arrives on May 5 via DHL."}
            chat.set_attribute("gen_ai.output.messages", json.dumps([reply]))


def test_intermediate_messages_are_verified_by_a_setting(tmp_path: Path) -> None:
    provider, exporter = _provider()
    _stepwise_trace(provider.get_tracer("agent"))
    provider.shutdown()
    path = _write(tmp_path / "steps.jsonl", list(exporter.get_finished_spans()))
    # By default only the final answer, which saw both tool results.
    [answer] = vera.evaluate(path).samples
    assert answer.id == "session-3/turn-7"  # each tool result follows the message calling it
    assert [c.verdict for c in answer.claims] == [vera.Verdict.FULLY_SUPPORTED]
    # With agent_steps the message between the tool calls is verified against the first tool
    # result alone, and its UPS is caught.
    report = vera.evaluate(path, agent_steps=True)
    step, final = report.samples
    assert (step.id, final.id) == ("session-3/turn-4", "session-3/turn-7")
    assert [c.verdict for c in step.claims] != [vera.Verdict.FULLY_SUPPORTED]
    assert [c.verdict for c in final.claims] == [vera.Verdict.FULLY_SUPPORTED]
    [stepped] = [s for s in load_dataset(path) if s.id == "session-3/turn-7"]
    assert {c.metadata.get("tool_name") for c in stepped.contexts} >= {"get_order", "get_eta"}
