"""The monitor's parts on their own: options, sampling, filters, request bodies, the spool."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from tests.support.extras import without

from vera import ConfigError, MonitorConfig, parse_alert
from vera._monitor import (
    MAX_BODY_BYTES,
    Assembler,
    BadRequest,
    Spool,
    decode_body,
    inflate,
    is_sampled,
    matches,
    parse_filter,
    parse_window,
    window_bounds,
)
from vera.datasets._otlp import OtlpSpan, TraceParts, add_trace_span, request_spans

WHITEBOX = "the monitor's own parts"

TRACE = "0af7651916cd43dd8448eb211c80319c"


def test_alerts_parse_and_fire_on_the_side_they_name() -> None:
    rule = parse_alert(" faithfulness < 0.8 ")
    assert (rule.metric, rule.operator, rule.value, str(rule)) == (
        "faithfulness", "<", 0.8, "faithfulness<0.8",
    )  # fmt: skip
    assert rule.breached(0.79) and not rule.breached(0.8)
    assert parse_alert("hallucination_rate>=0.1").breached(0.1)
    for bad in ("faithfulness", "faithfulness=0.8", "<0.8", "faithfulness<high"):
        with pytest.raises(ConfigError, match="expected METRIC<VALUE"):
            parse_alert(bad)


def test_windows_are_named_or_divide_a_day() -> None:
    assert parse_window("hour") == 3600
    assert parse_window("DAY") == 86400
    assert parse_window("15m") == 900
    assert parse_window("2d") == 172800
    for bad in ("7m", "0s", "weekly", "1.5h"):
        with pytest.raises(ConfigError, match="--window"):
            parse_window(bad)
    assert window_bounds(3600 * 5 + 17, 3600) == (18000, 21600)


def test_options_out_of_range_are_refused_naming_the_flag() -> None:
    with pytest.raises(ConfigError, match="--sample-rate"):
        MonitorConfig(sample_rate=float("nan"))
    with pytest.raises(ConfigError, match="--queue 0"):
        MonitorConfig(queue_size=0)
    with pytest.raises(ConfigError, match="--budget -1"):
        MonitorConfig(budget_per_hour=-1)
    assert parse_filter("route = /ask") == ("route", "/ask")


def test_sampling_is_decided_by_the_trace_id_alone() -> None:
    draw = random.Random(7)  # ids as SDKs make them: random bits
    ids = [f"{draw.getrandbits(128):032x}" for _ in range(2000)]
    kept = [t for t in ids if is_sampled(t, 0.25)]
    assert 400 < len(kept) < 600  # about a quarter
    assert kept == [t for t in ids if is_sampled(t, 0.25)]  # the same every time
    assert all(is_sampled(t, 1.0) for t in ids) and not any(is_sampled(t, 0.0) for t in ids)
    assert set(kept) <= {t for t in ids if is_sampled(t, 0.5)}  # a higher rate keeps more


def _span(span_id: str, parent: str = "", **attributes: object) -> OtlpSpan:
    return OtlpSpan(TRACE, span_id, parent, "s", 1, 2, dict(attributes), "shop")


def _trace(*spans: OtlpSpan) -> TraceParts:
    traces: dict[str, TraceParts] = {}
    for span in spans:
        add_trace_span(traces, span)
    return traces[TRACE]


def test_filters_match_service_route_model_and_any_root_attribute() -> None:
    parts = _trace(
        _span("a" * 16, **{"http.route": "/ask", "deployment.environment": "prod"}),
        _span("b" * 16, "a" * 16, **{"llm.model_name": "gpt-4o"}),
    )
    assert matches(parts, (("service", "shop"), ("route", "/ask"), ("model", "gpt-4o")))
    assert matches(parts, (("model", "claude"), ("model", "gpt-4o")))  # any value of a key
    assert matches(parts, (("deployment.environment", "prod"),))
    assert not matches(parts, (("service", "shop"), ("route", "/chat")))  # every key
    assert not matches(_trace(_span("b" * 16, "a" * 16)), (("route", "/ask"),))  # no root


def test_a_trace_waits_for_its_root_and_late_spans_are_ignored() -> None:
    assembler = Assembler(MonitorConfig(settle_seconds=1, trace_timeout=10))
    child = _span("b" * 16, "a" * 16, **{"openinference.span.kind": "RETRIEVER"})
    assert assembler.add(child, now=0) == "added"
    assert list(assembler.ready(now=5)) == []  # no root yet: it waits
    root = _span("a" * 16, **{"input.value": "q", "output.value": "a"})
    assembler.add(root, now=5)
    assert list(assembler.ready(now=5.5)) == []  # settling
    [decision] = assembler.ready(now=6)
    assert decision.outcome == "invalid"  # the retriever had no documents
    assert "no contexts" in decision.reason
    assert assembler.add(child, now=7) == "late"
    assert len(assembler) == 0


def test_a_rootless_trace_is_given_up_as_incomplete() -> None:
    assembler = Assembler(MonitorConfig(settle_seconds=1, trace_timeout=10))
    assembler.add(_span("b" * 16, "a" * 16), now=0)
    assert list(assembler.ready(now=9)) == []
    [decision] = assembler.ready(now=10)
    assert decision.outcome == "incomplete"


def test_open_traces_are_bounded() -> None:
    assembler = Assembler(MonitorConfig(max_open_traces=1))
    assembler.add(_span("a" * 16), now=0)
    other = OtlpSpan("1" * 32, "c" * 16, "", "s", 1, 2, {}, None)
    assert assembler.add(other, now=0) == "full"
    assert assembler.add(_span("b" * 16, "a" * 16), now=0) == "added"  # its own trace goes on


def test_bodies_are_inflated_within_a_bound_and_read_by_content_type() -> None:
    request = {"resourceSpans": []}
    body = json.dumps(request).encode()
    assert decode_body(inflate(gzip.compress(body), "gzip"), "application/json") == request
    bomb = gzip.compress(b"\0" * (MAX_BODY_BYTES + 10))
    with pytest.raises(BadRequest, match="inflates to more than"):
        inflate(bomb, "gzip")
    with pytest.raises(BadRequest, match="not gzip"):
        inflate(body, "gzip")
    with pytest.raises(BadRequest, match="Content-Encoding 'br'"):
        inflate(body, "br")
    with pytest.raises(BadRequest, match="Content-Type 'text/plain'"):
        decode_body(body, "text/plain; charset=utf-8")
    with pytest.raises(BadRequest, match="not OTLP/JSON"):
        decode_body(b"{", "application/json")


def test_protobuf_spans_are_read_as_the_file_reader_reads_their_json() -> None:
    pytest.importorskip("opentelemetry.proto", reason=without("monitor"))
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from vera._monitor import request_spans_of

    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    service = resource.resource.attributes.add()
    service.key, service.value.string_value = "service.name", "shop"
    span = resource.scope_spans.add().spans.add()
    span.trace_id, span.span_id = bytes.fromhex(TRACE), bytes.fromhex("b" * 16)
    span.parent_span_id, span.name = bytes.fromhex("a" * 16), "retrieve"
    span.start_time_unix_nano, span.end_time_unix_nano = 10, 20
    for key, setter in (
        ("n", lambda v: setattr(v, "int_value", 3)),
        ("f", lambda v: setattr(v, "double_value", 0.5)),
        ("b", lambda v: setattr(v, "bool_value", True)),
        ("s", lambda v: setattr(v, "string_value", "x")),
        ("l", lambda v: v.array_value.values.add().__setattr__("string_value", "y")),
    ):
        attribute = span.attributes.add()
        attribute.key = key
        setter(attribute.value)
    decoded = decode_body(request.SerializeToString(), "application/x-protobuf")
    assert request_spans_of(decoded) == request_spans(MessageToDict(request))


def test_the_spool_keeps_a_file_until_each_of_its_traces_is_settled(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    first = spool.write(b"one", "application/x-protobuf")
    second = spool.write(b"{}", "application/json")
    spool.holds(first, {"t1", "t2"})
    spool.holds(second, {"t2"})
    spool.settle("t2")
    assert sorted(p.name for p in (tmp_path / "spool").iterdir()) == [f"{first:012d}.pb"]
    again = Spool(tmp_path / "spool")  # a restart reads what is left, oldest first
    assert list(again.left_over()) == [(first, b"one", "application/x-protobuf")]
    assert again.write(b"x", "application/json") == first + 1
    spool.settle("t1")
    assert not (tmp_path / "spool" / f"{first:012d}.pb").exists()


@pytest.mark.slow
def test_the_docs_example_sends_a_trace_and_reads_its_window(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason=without("otel"))
    pytest.importorskip("opentelemetry.proto", reason=without("monitor"))
    from tests.support.docs import run_example

    done = run_example("monitor.md", tmp_path)
    assert done.returncode == 0, done.stderr
    run_id, rest = done.stdout.strip().split(" ", 1)
    assert rest == "2 spans, 1 evaluated"
    assert run_id[:8].isdigit()
