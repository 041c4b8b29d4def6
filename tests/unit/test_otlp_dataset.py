"""OpenTelemetry traces (OTLP/JSON with OpenInference attributes) read as samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.docs import run_example
from tests.support.extras import without
from typer.testing import CliRunner

import vera
from vera import DatasetError, DatasetRowError, load_dataset
from vera.cli import app

TRACE_A = "5b8efff798038103d269b633813fc60c"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"
TRACE_C = "4bf92f3577b34da6a3ce929d0e0e4736"
SECOND = 1_000_000_000


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # OTLP/JSON writes 64-bit integers as strings
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v}


def span(
    trace: str, span_id: str, parent: str, name: str, start: int, end: int, **attrs: Any
) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        "status": {},
    }


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "rag-app"}}]}
    scope = {"scope": {"name": "openinference.instrumentation.test"}, "spans": list(spans)}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def kind(name: str) -> dict[str, Any]:
    return {"openinference.span.kind": name}


def documents(*docs: tuple[str, str, float]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for n, (doc_id, content, score) in enumerate(docs):
        prefix = f"retrieval.documents.{n}.document"
        attrs |= {f"{prefix}.id": doc_id, f"{prefix}.content": content, f"{prefix}.score": score}
        attrs[f"{prefix}.metadata"] = json.dumps({"source": f"{doc_id}.md"})
    return attrs


T0 = 1_700_000_000 * SECOND

# A RAG trace: CHAIN root (JSON input), a RETRIEVER with two documents, an LLM call.
RAG = request(
    span(
        TRACE_A, "a000000000000001", "", "rag", T0, T0 + SECOND // 4,
        **kind("CHAIN"),
        **{
            "input.value": json.dumps({"question": "What colour is the sky?"}),
            "input.mime_type": "application/json",
            "output.value": "The sky is blue.",
        },
    ),
    span(
        TRACE_A, "a000000000000002", "a000000000000001", "retrieve", T0 + 1, T0 + 100,
        **kind("RETRIEVER"),
        **{"input.value": "What colour is the sky?"},
        **documents(("sky", "The sky is blue.", 0.92), ("sea", "The sea is green.", 0.41)),
    ),
    span(
        TRACE_A, "a000000000000003", "a000000000000001", "llm", T0 + 200, T0 + 900,
        **kind("LLM"),
        **{"output.value": "The sky is blue."},
    ),
)  # fmt: skip
# A trace whose spans come in two requests (lines): retrievers first, the root later. The
# second retriever in the file started first, so its document comes first.
SPLIT_1 = request(
    span(
        TRACE_B, "b000000000000003", "b000000000000001", "rerank-retrieve", T0 + 50, T0 + 60,
        **kind("RETRIEVER"), **documents(("late", "Grass is green.", 0.5)),
    ),
    span(
        TRACE_B, "b000000000000002", "b000000000000001", "retrieve", T0 + 10, T0 + 20,
        **kind("RETRIEVER"), **documents(("early", "Snow is white.", 0.7)),
    ),
)  # fmt: skip
SPLIT_2 = request(
    span(
        TRACE_B, "b000000000000001", "", "rag", T0, T0 + 2 * SECOND,
        **kind("CHAIN"),
        **{"input.value": "What colour is snow?", "output.value": json.dumps({"answer": "White."})},
    ),
)  # fmt: skip
# No retriever: this trace cannot be judged for faithfulness.
NO_RETRIEVER = request(
    span(
        TRACE_C, "c000000000000001", "", "chat", T0, T0 + SECOND,
        **kind("LLM"), **{"input.value": "Hi", "output.value": "Hello!"},
    ),
)  # fmt: skip


def write_lines(path: Path, *requests: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return path


def traces_file(tmp_path: Path, name: str = "traces.jsonl") -> Path:
    return write_lines(tmp_path / name, RAG, SPLIT_1, SPLIT_2, NO_RETRIEVER)


def test_one_sample_per_trace(tmp_path: Path) -> None:
    dataset = load_dataset(traces_file(tmp_path), skip_invalid=True)
    assert dataset.format == "otlp"
    rag, _ = list(dataset)
    assert rag.id == TRACE_A
    assert (rag.query, rag.response) == ("What colour is the sky?", "The sky is blue.")
    assert [(c.id, c.text, c.source) for c in rag.contexts] == [
        ("sky", "The sky is blue.", "sky.md"),
        ("sea", "The sea is green.", "sea.md"),
    ]
    assert rag.latency_ms == pytest.approx(250.0)
    assert rag.metadata["trace_id"] == TRACE_A
    assert rag.metadata["root_span_id"] == "a000000000000001"
    assert rag.metadata["service_name"] == "rag-app"
    assert [(c.metadata["id"], c.metadata["score"]) for c in rag.contexts] == [
        ("sky", 0.92),
        ("sea", 0.41),
    ]
    assert rag.contexts[0].metadata["retriever_span_id"] == "a000000000000002"


def test_a_trace_spread_over_two_lines_is_one_sample(tmp_path: Path) -> None:
    _, split = list(load_dataset(traces_file(tmp_path), skip_invalid=True))
    assert (split.id, split.query, split.response) == (TRACE_B, "What colour is snow?", "White.")
    assert split.context_texts == ["Snow is white.", "Grass is green."]  # by start time
    assert split.latency_ms == pytest.approx(2000.0)


def test_a_trace_without_retriever_is_an_invalid_row(tmp_path: Path) -> None:
    path = traces_file(tmp_path)
    with pytest.raises(DatasetRowError) as info:
        list(load_dataset(path))
    message = str(info.value)
    assert message.startswith(f"{path}: line 4 (trace {TRACE_C}): no contexts")
    assert "RETRIEVER" in message

    dataset = load_dataset(path, skip_invalid=True)
    assert len(list(dataset)) == 2
    [skipped] = dataset.invalid_rows
    assert skipped.location == f"line 4 (trace {TRACE_C})"


def test_a_trace_without_a_response_is_an_invalid_row(tmp_path: Path) -> None:
    root = span(TRACE_C, "c000000000000001", "", "rag", T0, T0 + 5, **kind("CHAIN"))
    child = span(
        TRACE_C, "c000000000000002", "c000000000000001", "r", T0, T0 + 1,
        **kind("RETRIEVER"), **documents(("d", "text", 1.0)),
    )  # fmt: skip
    path = write_lines(tmp_path / "t.jsonl", request(child, root))
    with pytest.raises(DatasetRowError, match=r"line 1 \(trace 4bf9.*no response.*output\.value"):
        list(load_dataset(path))


def test_detection_by_content_and_by_format(tmp_path: Path) -> None:
    pretty = tmp_path / "one.json"
    pretty.write_text(json.dumps(RAG, indent=2))  # one request, pretty-printed
    assert load_dataset(pretty).format == "otlp"
    assert [s.id for s in load_dataset(pretty)] == [TRACE_A]

    other = write_lines(tmp_path / "export.txt", RAG)
    with pytest.raises(DatasetError, match="unknown dataset format"):
        load_dataset(other)
    assert [s.id for s in load_dataset(other, format="otlp")] == [TRACE_A]

    rows = write_lines(tmp_path / "rows.jsonl", {"query": "q", "response": "resourceSpans"})
    assert load_dataset(rows).format == "jsonl"


def test_bad_lines_name_the_line_and_the_place_in_the_request(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(RAG))
    broken["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "xyz"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(RAG) + "\n{not json\n" + json.dumps(broken) + "\n")
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == [TRACE_A]
    first, second = dataset.invalid_rows
    assert first.location == "line 2" and "invalid JSON" in first.problem
    assert second.location == "line 3"
    assert "resourceSpans[0].scopeSpans[0].spans[1].traceId" in second.problem
    assert "expected 32 hex digits" in second.problem


def test_evaluate_traces_end_to_end(tmp_path: Path) -> None:
    report = vera.evaluate(traces_file(tmp_path), skip_invalid=True)
    # A report's sample is named by its trace id, so each verdict leads back to its trace.
    assert [s.id for s in report.samples] == [TRACE_A, TRACE_B]
    assert report.samples[0].response == "The sky is blue."
    assert [r.location for r in report.invalid_rows] == [f"line 4 (trace {TRACE_C})"]


def test_cli_eval_on_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    traces_file(tmp_path)
    args = ["eval", "-d", "traces.jsonl", "--skip-invalid", "--no-history", "-o", "r.json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["samples"]] == [TRACE_A, TRACE_B]
    assert [r["location"] for r in report["invalid_rows"]] == [f"line 4 (trace {TRACE_C})"]


def sdk_trace_file(path: Path) -> tuple[Path, str]:
    """Spans made by the real OpenTelemetry SDK, written as OTLP/JSON by its own encoder."""
    encoder = pytest.importorskip(
        "opentelemetry.exporter.otlp.proto.common.trace_encoder", reason=without("otel")
    )
    json_format = pytest.importorskip("google.protobuf.json_format", reason=without("otel"))
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-app"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag")
    with tracer.start_as_current_span("rag") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", json.dumps({"query": "Where is Paris?"}))
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            for n, text in enumerate(["Paris is in France.", "Lyon is in France."]):
                retriever.set_attribute(f"retrieval.documents.{n}.document.content", text)
                retriever.set_attribute(f"retrieval.documents.{n}.document.id", f"doc-{n}")
                retriever.set_attribute(f"retrieval.documents.{n}.document.score", 0.5 + n)
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("output.value", "Paris is in France.")
        root.set_attribute("output.value", "Paris is in France.")
    provider.shutdown()
    spans = exporter.get_finished_spans()
    # One request a span, one a line, as a batching exporter may split a trace.
    lines = [
        json_format.MessageToJson(encoder.encode_spans([s]), indent=None) + "\n" for s in spans
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path, format(spans[0].context.trace_id, "032x")


def test_a_trace_written_by_the_opentelemetry_sdk(tmp_path: Path) -> None:
    path, trace_id = sdk_trace_file(tmp_path / "sdk.jsonl")
    [sample] = load_dataset(path)
    # protobuf's JSON writes ids as base64; they come back as the hex the SDK shows.
    assert sample.id == trace_id == sample.metadata["trace_id"]
    assert (sample.query, sample.response) == ("Where is Paris?", "Paris is in France.")
    assert sample.context_texts == ["Paris is in France.", "Lyon is in France."]
    assert [c.metadata["score"] for c in sample.contexts] == [0.5, 1.5]
    assert sample.metadata["service_name"] == "sdk-app"
    assert sample.latency_ms is not None and sample.latency_ms >= 0
    report = vera.evaluate(path)
    assert report.samples[0].id == trace_id


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
    done = run_example("otel.md", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "'faithfulness':" in done.stdout
    ids = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)
