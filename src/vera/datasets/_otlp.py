"""OpenTelemetry traces (OTLP/JSON, OpenInference attributes) as a dataset: one sample a trace.

The file holds ExportTraceServiceRequest objects in OTLP's JSON encoding, one a line as
OpenTelemetry's file exporter writes them, or a single (possibly pretty-printed) object. The
root span gives the query (`input.value`), the response (`output.value`) and the latency; the
trace's RETRIEVER spans, in start order, give the contexts (`retrieval.documents.N.document.*`).

OTLP has no end-of-trace marker and a trace's spans may come in any request of the file, so
samples are built after the whole file is read. Memory grows with the traces in the file, not
with their spans: of each trace only its root span and its retrieved documents are kept.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vera._json import (
    MAX_LINE_BYTES,
    JsonRefused,
    bounded_lines,
    first_line,
    loads_bounded,
)
from vera.datasets._formats import DatasetFormat
from vera.datasets._otlp_agents import AgentSpans
from vera.datasets._otlp_tools import trace_references
from vera.datasets._readers import (
    RawRow,
    invalid_data,
    is_invalid_json,
    read_json_document,
    unwrap_json,
)

SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
SERVICE_NAME = "service.name"
MODEL_KEYS = ("llm.model_name", "gen_ai.request.model", "gen_ai.response.model")
_DOCUMENT_KEY = re.compile(r"retrieval\.documents\.(\d+)\.document\.(content|id|score|metadata)")
# Fields of a JSON `input.value` / `output.value` that hold the text itself, most likely first.
QUERY_KEYS = ("query", "question", "input", "user_input")
RESPONSE_KEYS = ("response", "answer", "output", "result")
# Enough of a file's head to hold its first key; OTLP requests have `resourceSpans` first.
_SNIFF_BYTES = 65536
_OTLP_START = re.compile(r'\s*\{\s*"resourceSpans"\s*:')


def looks_like_otlp(path: Path) -> bool:
    """Whether a .json / .jsonl file holds OTLP trace requests rather than sample rows."""
    with path.open("rb") as fh:
        head = fh.read(_SNIFF_BYTES).decode("utf-8", errors="ignore").removeprefix("\ufeff")
    if _OTLP_START.match(head):
        return True
    if '"resourceSpans"' not in head or not head.lstrip().startswith("{"):
        return False
    # A key other than `resourceSpans` came first: parse the first line to be sure.
    with path.open("rb") as fh:
        first = first_line(fh)
    if not first:
        return False  # over the bound a line is read to: read as rows, it is one invalid row
    try:
        request = loads_bounded(first.decode("utf-8").removeprefix("\ufeff"))
    except (json.JSONDecodeError, UnicodeDecodeError, JsonRefused):
        # Not a request; read as rows, a refused line is one invalid row that says so.
        return False
    return isinstance(request, dict) and "resourceSpans" in request


class _SpanProblem(Exception):
    """Part of a request is not OTLP; `where` is its path in the request."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class _Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    service: str | None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """The span's events, name and attributes (GenAI conventions put messages there)."""


@dataclass
class _Trace:
    """What a sample needs of one trace, gathered as its spans are read."""

    line: int
    root: _Span | None = None
    retrievals: list[tuple[int, str, list[dict[str, Any]]]] = field(default_factory=list)
    agent: AgentSpans = field(default_factory=AgentSpans)
    models: set[str] = field(default_factory=set)
    """The models its LLM spans name (OpenInference and GenAI conventions): what a live
    monitor filters on."""


def read_otlp_rows(path: Path) -> Iterator[RawRow]:
    """One `RawRow` a trace, located "line N (trace <id>)" at its root span's line.

    A line that is not JSON or not OTLP is an invalid row of its own; a trace without a root
    span, a response or contexts is an invalid row saying which it lacks.
    """
    traces: dict[str, _Trace] = {}
    for line, request in _requests(path):
        problem = _request_problem(request)
        if problem is None:
            try:
                spans = list(_spans(request))
            except _SpanProblem as exc:
                problem = f"not an OTLP trace request ({exc})"
        if problem is not None:
            yield RawRow(f"line {line}", invalid_data(problem))
            continue
        for span in spans:
            _add_span(traces, span, line)
    for trace_id, trace in traces.items():
        if not _is_agent(trace):
            yield RawRow(f"line {trace.line} (trace {trace_id})", _sample_row(trace_id, trace))
    yield from _agent_rows({i: t for i, t in traces.items() if _is_agent(t)})


def _is_agent(trace: _Trace) -> bool:
    """An agent trace: tools, a session or chat spans, or a root naming the calls expected
    (an agent that made none of them is scored 0, not read as a RAG sample)."""
    root = trace.root
    return trace.agent.is_agent or (root is not None and bool(trace_references(root.attributes)))


def _request_problem(request: Any) -> str | None:
    if isinstance(request, _Unreadable):
        return request.problem
    unreadable = is_invalid_json(request)  # an element of a JSON array the reader refused
    if unreadable is not None:
        return unreadable
    if not isinstance(request, dict) or "resourceSpans" not in request:
        return "expected an OTLP trace request (an object with 'resourceSpans')"
    return None


class _Unreadable:
    def __init__(self, problem: str) -> None:
        self.problem = problem


def _requests(path: Path) -> Iterator[tuple[int, Any]]:
    """Each request with its line. A file whose first line is not JSON by itself is one JSON
    document: a pretty-printed request (or an array of them), located at line 1."""
    if not _first_line_is_json(path):
        document = unwrap_json(read_json_document(path))
        for request in document if isinstance(document, list) else [document]:
            yield 1, request
        return
    with path.open("rb") as fh:
        for number, raw in bounded_lines(fh):
            if raw is None:
                yield number, _Unreadable(f"a line of more than {MAX_LINE_BYTES // 2**20} MiB")
                continue
            try:
                text = raw.decode("utf-8").removeprefix("\ufeff")
            except UnicodeDecodeError as exc:
                yield number, _Unreadable(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")
                continue
            if not text.strip():
                continue
            try:
                yield number, loads_bounded(text)
            except JsonRefused as exc:
                yield number, _Unreadable(str(exc))
            except json.JSONDecodeError as exc:
                yield number, _Unreadable(f"invalid JSON ({exc.msg} at column {exc.colno})")


def _first_line_is_json(path: Path) -> bool:
    with path.open("rb") as fh:
        first = first_line(fh)
    if first is None or first == b"":
        return True  # too long to read (one invalid row of a line-by-line read), or empty
    try:
        loads_bounded(first.decode("utf-8").removeprefix("\ufeff"))
    except JsonRefused:
        return True  # JSON by itself, refused: one invalid row of a line-by-line read
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return True


def _objects(parent: Any, keys: tuple[str, ...], where: str) -> Iterator[tuple[str, Any]]:
    """The objects of `parent`'s list under the first of `keys` present, with their paths."""
    if not isinstance(parent, dict):
        raise _SpanProblem(where, f"expected an object, got {type(parent).__name__}")
    key = next((k for k in keys if k in parent), keys[0])
    items = parent.get(key) or []
    if not isinstance(items, list):
        raise _SpanProblem(f"{where}.{key}", f"expected a list, got {type(items).__name__}")
    for index, item in enumerate(items):
        yield f"{where}.{key}[{index}]", item


def _spans(request: Any) -> Iterator[_Span]:
    # `instrumentationLibrarySpans` is the name OTLP used before 0.15 for `scopeSpans`.
    for where, resource_spans in _objects(request, ("resourceSpans",), "request"):
        resource = resource_spans.get("resource") if isinstance(resource_spans, dict) else None
        resource_attributes = _attributes(resource, f"{where}.resource")
        service = resource_attributes.get(SERVICE_NAME)
        scopes = ("scopeSpans", "instrumentationLibrarySpans")
        for scope_where, scope_spans in _objects(resource_spans, scopes, where):
            for span_where, span in _objects(scope_spans, ("spans",), scope_where):
                yield _span(span, span_where, service if isinstance(service, str) else None)


def _span(span: Any, where: str, service: str | None) -> _Span:
    if not isinstance(span, dict):
        raise _SpanProblem(where, f"expected a span object, got {type(span).__name__}")
    parent = span.get("parentSpanId") or ""
    return _Span(
        trace_id=_hex_id(span.get("traceId"), 16, f"{where}.traceId"),
        span_id=_hex_id(span.get("spanId"), 8, f"{where}.spanId"),
        parent_id=_hex_id(parent, 8, f"{where}.parentSpanId") if parent else "",
        name=str(span.get("name", "")),
        start=_nanos(span.get("startTimeUnixNano"), f"{where}.startTimeUnixNano"),
        end=_nanos(span.get("endTimeUnixNano"), f"{where}.endTimeUnixNano"),
        attributes=_attributes(span, where),
        service=service,
        events=_events(span, where),
    )


def _events(span: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(event.get("name", "")), _attributes(event, event_where))
        for event_where, event in _objects(span, ("events",), where)
        if isinstance(event, dict)
    ]


def _hex_id(value: Any, size: int, where: str) -> str:
    """An id as lowercase hex. OTLP/JSON writes hex; protobuf's generic JSON mapping (what
    `MessageToJson` gives) writes the same bytes as base64, so both are read."""
    if isinstance(value, str) and value:
        if len(value) == 2 * size and all(c in "0123456789abcdefABCDEF" for c in value):
            return value.lower()
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            return raw.hex()
    raise _SpanProblem(where, f"expected {2 * size} hex digits, got {value!r}")


def _nanos(value: Any, where: str) -> int:
    if value is None:
        return 0
    try:
        return int(value)  # a JSON string: 64-bit integers do not fit every JSON reader
    except (TypeError, ValueError):
        raise _SpanProblem(where, f"expected unix nanoseconds, got {value!r}") from None


def _attributes(owner: Any, where: str) -> dict[str, Any]:
    if not isinstance(owner, dict):
        return {}
    result: dict[str, Any] = {}
    for item_where, item in _objects(owner, ("attributes",), where):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise _SpanProblem(item_where, "expected an attribute {'key': ..., 'value': ...}")
        result[item["key"]] = _any_value(item.get("value"), f"{item_where}.value")
    return result


def _any_value(value: Any, where: str) -> Any:
    """An OTLP AnyValue as plain Python; a value of the wrong shape is a `_SpanProblem`
    naming its path (one bad attribute refuses its request, never stops the reader)."""
    if not isinstance(value, dict) or not value:
        return None
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    try:
        if "intValue" in value:
            return int(value["intValue"])  # a JSON string by OTLP/JSON, or a number
        if "doubleValue" in value:
            return _double(value["doubleValue"])
    except (TypeError, ValueError, OverflowError):
        raise _SpanProblem(where, f"expected a number, got {value!r:.60}") from None
    if "arrayValue" in value:
        items = _values(value["arrayValue"], f"{where}.arrayValue")
        return [_any_value(v, f"{where}.arrayValue.values[{i}]") for i, v in enumerate(items)]
    if "kvlistValue" in value:
        pairs = _values(value["kvlistValue"], f"{where}.kvlistValue")
        return dict(_pair(p, f"{where}.kvlistValue.values[{i}]") for i, p in enumerate(pairs))
    return value.get("bytesValue")


def _double(value: Any) -> float:
    # OTLP/JSON writes NaN and Infinity as the strings "NaN" and "Infinity"; VERA's figures
    # read finite numbers only.
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(value)
    return number


def _values(holder: Any, where: str) -> list[Any]:
    """The `values` list of an ArrayValue or KeyValueList (empty when absent)."""
    if holder is None:
        return []
    if not isinstance(holder, dict):
        raise _SpanProblem(where, f"expected an object with 'values', got {_kind(holder)}")
    values = holder.get("values")
    if values is None:
        return []
    if not isinstance(values, list):
        raise _SpanProblem(f"{where}.values", f"expected a list, got {_kind(values)}")
    return values


def _pair(item: Any, where: str) -> tuple[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("key"), str):
        raise _SpanProblem(where, "expected a pair {'key': ..., 'value': ...}")
    return item["key"], _any_value(item.get("value"), f"{where}.value")


def _kind(value: Any) -> str:
    return type(value).__name__


def _add_span(traces: dict[str, _Trace], span: _Span, line: int) -> None:
    trace = traces.get(span.trace_id)
    if trace is None:
        trace = traces[span.trace_id] = _Trace(line=line)
    if not span.parent_id and (trace.root is None or span.start < trace.root.start):
        trace.root = span
        trace.line = line
    if span.attributes.get(SPAN_KIND) == "RETRIEVER":
        trace.retrievals.append((span.start, span.span_id, _documents(span.attributes)))
    trace.agent.add(span.name, span.start, span.attributes, span.events)
    for key in MODEL_KEYS:
        model = span.attributes.get(key)
        if isinstance(model, str):
            trace.models.add(model)


def _documents(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """A retriever span's flattened `retrieval.documents.N.document.*` attributes, in N order."""
    documents: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _DOCUMENT_KEY.fullmatch(key)
        if match:
            documents.setdefault(int(match[1]), {})[match[2]] = value
    return [documents[n] for n in sorted(documents)]


def _sample_row(trace_id: str, trace: _Trace) -> Any:
    root = trace.root
    if root is None:
        return invalid_data("no root span (a span without parentSpanId) in this file")
    response = _text(root.attributes.get(OUTPUT_VALUE), RESPONSE_KEYS)
    if response is None:
        return invalid_data(f"no response: the root span {root.name!r} has no {OUTPUT_VALUE}")
    retrieved = [
        (span_id, document)
        for _, span_id, documents in sorted(trace.retrievals, key=lambda r: r[0])
        for document in documents
    ]
    if not retrieved:
        return invalid_data("no contexts: the trace has no RETRIEVER span with retrieval.documents")
    metadata: dict[str, Any] = {
        "trace_id": trace_id,
        "root_span_id": root.span_id,
        "root_span_name": root.name,
    }
    if root.service is not None:
        metadata["service_name"] = root.service
    row: dict[str, Any] = {
        "id": trace_id,
        "query": _text(root.attributes.get(INPUT_VALUE), QUERY_KEYS),
        "response": response,
        "contexts": [_context(span_id, document) for span_id, document in retrieved],
        "metadata": metadata,
    }
    if root.start and root.end >= root.start:
        row["latency_ms"] = (root.end - root.start) / 1e6
    return row


def _context(span_id: str, document: dict[str, Any]) -> dict[str, Any]:
    # No `text` key when the content is missing, so validation names `contexts[N].text`.
    context: dict[str, Any] = {"metadata": _retrieved(span_id, document)}
    if document.get("content") is not None:
        context["text"] = document["content"]
    if document.get("id") is not None:
        context["id"] = str(document["id"])
    source = _metadata(document).get("source") or _metadata(document).get("url")
    if isinstance(source, str):
        context["source"] = source
    return context


def _retrieved(span_id: str, document: dict[str, Any]) -> dict[str, Any]:
    """A context's metadata: the retriever span that found it, its score and its document's
    metadata."""
    entry: dict[str, Any] = {"retriever_span_id": span_id}
    if document.get("id") is not None:
        entry["id"] = str(document["id"])
    if document.get("score") is not None:
        entry["score"] = document["score"]
    if document.get("metadata") is not None:
        entry["metadata"] = _metadata(document) or document["metadata"]
    return entry


def _metadata(document: dict[str, Any]) -> dict[str, Any]:
    """`document.metadata`, a JSON string by the conventions, as an object (empty if not)."""
    value = document.get("metadata")
    if isinstance(value, str):
        try:
            value = loads_bounded(value)
        except ValueError:  # not JSON, or nested too deep: no metadata
            return {}
    return value if isinstance(value, dict) else {}


def _text(value: Any, keys: tuple[str, ...]) -> str | None:
    """`input.value` / `output.value` as text: a JSON string or an object's text field is
    unwrapped (`{"query": "..."}`), anything else is taken as written."""
    if value is None:
        return None
    if not isinstance(value, str):
        return json.dumps(value)
    if value.lstrip()[:1] in ("{", '"'):
        try:
            parsed = loads_bounded(value)
        except ValueError:  # not JSON, or nested too deep: the text as written
            return value
        if isinstance(parsed, str):
            return parsed
        if isinstance(parsed, dict):
            found = next((parsed[k] for k in keys if isinstance(parsed.get(k), str)), None)
            if found is not None:
                return str(found)
    return value


def _agent_rows(traces: dict[str, _Trace]) -> Iterator[RawRow]:
    """Agent traces as conversation rows: one a session (its traces in start order), or one
    a trace without a session. Each trace is a user turn, its tool results, and the answer
    with the trace's retrieved contexts (see `vera.datasets._otlp_agents`)."""
    sessions: dict[str, list[tuple[str, _Trace]]] = {}
    for trace_id, trace in traces.items():
        sessions.setdefault(trace.agent.session or trace_id, []).append((trace_id, trace))
    for key, members in sessions.items():
        members.sort(key=lambda m: m[1].root.start if m[1].root else 0)
        line = min(t.line for _, t in members)
        kind = "session" if members[0][1].agent.session else "trace"
        messages: list[dict[str, Any]] = []
        references: dict[str, Any] = {}
        for trace_id, trace in members:
            if trace.root is not None:
                references = references or trace_references(trace.root.attributes)
            turn = _agent_turn(trace_id, trace)
            if isinstance(turn, list):
                messages += turn
            else:  # one trace without a root or an answer spoils its conversation
                yield RawRow(f"line {trace.line} (trace {trace_id})", turn)
                break
        else:
            row = {"id": key, "messages": messages, "metadata": {f"{kind}_id": key}}
            row.update(references)
            yield RawRow(f"line {line} ({kind} {key})", row)


def _agent_turn(trace_id: str, trace: _Trace) -> list[dict[str, Any]] | Any:
    root = trace.root
    if root is None:
        return invalid_data("no root span (a span without parentSpanId) in this file")
    agent = trace.agent
    if agent.tools.problem is not None:
        return invalid_data(agent.tools.problem[1], agent.tools.problem[0])
    answer = _text(root.attributes.get(OUTPUT_VALUE), RESPONSE_KEYS) or agent.answer()
    if answer is None:
        return invalid_data(
            f"no response: the root span {root.name!r} has no {OUTPUT_VALUE} and no GenAI chat "
            "span has gen_ai.output.messages"
        )
    query = _text(root.attributes.get(INPUT_VALUE), QUERY_KEYS) or agent.query() or ""
    retrieved = [
        _context(span_id, document)
        for _, span_id, documents in sorted(trace.retrievals, key=lambda r: r[0])
        for document in documents
    ]
    metadata = {"trace_id": trace_id, "root_span_name": root.name}
    assistant: dict[str, Any] = {"role": "assistant", "content": answer, "metadata": metadata}
    if retrieved:
        assistant["contexts"] = retrieved
    return [{"role": "user", "content": query}, *agent.steps(answer), assistant]


OTLP = DatasetFormat(
    read_otlp_rows,
    summary="OpenTelemetry traces; found by content in .json/.jsonl files",
    detects=looks_like_otlp,
    within=("json", "jsonl"),
)

# What a live receiver (`vera._monitor`) shares with this reader: a request's spans, and a
# trace's sample row once its spans are in, by the same rules as a file.
OtlpSpan = _Span
TraceParts = _Trace


class OtlpRequestError(ValueError):
    """A decoded request that is not an OTLP trace request; the message says where."""


def request_spans(request: Any) -> list[_Span]:
    """The spans of one decoded ExportTraceServiceRequest (OTLP/JSON, or protobuf's JSON
    mapping), or `OtlpRequestError` naming the part that is not OTLP."""
    problem = _request_problem(request)
    if problem is None:
        try:
            return list(_spans(request))
        except _SpanProblem as exc:
            problem = f"not an OTLP trace request ({exc})"
    raise OtlpRequestError(problem)


def add_trace_span(traces: dict[str, _Trace], span: _Span, line: int = 0) -> None:
    """Gather `span` into its trace's parts (created on its first span)."""
    _add_span(traces, span, line)


def trace_row(trace_id: str, trace: _Trace) -> Any:
    """The sample row of a trace whose spans are in: a dict, or an invalid-data marker
    (`vera.datasets._readers.invalid_data`) saying what the trace lacks."""
    return _sample_row(trace_id, trace)
