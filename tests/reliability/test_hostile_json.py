"""Every entry point that reads JSON is fed the same hostile set: nesting without end, NaN and
Infinity, numbers beyond a float's range, a key given twice, wrong types, non-object lines, a
byte order mark and bytes that are not UTF-8. Each answers with its own clear error (an
invalid row naming its line and field, a 400 or an ignored request, a damaged stored run, a
malformed reply), never a traceback.

Before, `"latency_ms": Infinity` stopped `vera eval` with a traceback (exit 1, the run left
`running`), `{"kvlistValue": [1]}` or a number `Infinity` in an OTLP/JSON body stopped `vera
monitor` ("evaluations stopped: AttributeError", exit 3), the same values in an OTLP trace
file were a traceback with `--skip-invalid` too, a JSONL file whose first row nests 200,000
deep was a RecursionError (the size hint parsed it unguarded), a key given twice silently
kept its last value, and a tool result answering a call never made was evidence.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import vera
from tests.support.cli import run_vera
from tests.support.extras import without
from tests.support.loopback import LoopbackServer, malformed
from tests.unit.test_otlp_dataset import RAG
from vera import DamagedRunError, DatasetError, DatasetRowError, RunStore, load_dataset
from vera._monitor import BadRequest, OtlpRequestError, decode_body, request_spans_of
from vera.datasets._conversations import read_conversations
from vera.pipelines import UserPipelineError
from vera.pipelines._user import load_user_pipeline
from vera.providers._jsonparse import MalformedJSONError, parse_json_object

WHITEBOX = "the monitor's own parts"

SOURCE = str(Path(vera.__file__).parent.parent)
GOOD = {
    "id": "a",
    "query": "q",
    "response": "Paris is in France.",
    "contexts": ["Paris is in France."],
}

# A value as JSON text, and what the reader's message says of it.
HOSTILE_VALUES = {
    "deep": ("[" * 100_000 + "]" * 100_000, "nested more than 256 levels deep"),
    "nan": ("NaN", "NaN is out of range"),
    "infinity": ("Infinity", "Infinity is out of range"),
    "minus-infinity": ("-Infinity", "-Infinity is out of range"),
    "huge-float": ("1e999", "1e999 is out of range"),
    "huge-int": ("9" * 5000, "(5000 characters) is out of range"),
}
VALUE_IDS = list(HOSTILE_VALUES)


def row_with(field: str, value: str) -> str:
    """A sample row whose `field` holds the JSON text `value` (a key given twice when
    `field` is one the row has already)."""
    head = '{"id": "h", "query": "q", "response": "x", "contexts": ["x"]'
    return f'{head}, "{field}": {value}}}'


def otlp_with(value: str) -> str:
    """The RAG request of the OTLP tests with one more root-span attribute holding `value`."""
    text = json.dumps(RAG)
    at = text.index('"attributes": [', text.index('"spans"')) + len('"attributes": [')
    return text[:at] + '{"key": "hostile", "value": ' + value + "}, " + text[at:]


def conversation_with(value: str) -> str:
    return (
        '{"id": "c", "messages": [{"role": "user", "content": "Where is order 42?"}, '
        '{"role": "assistant", "content": "It shipped.", "metadata": {"x": ' + value + "}}]}"
    )


def write(path: Path, *lines: str | bytes) -> Path:
    data = b"".join((ln if isinstance(ln, bytes) else ln.encode()) + b"\n" for ln in lines)
    path.write_bytes(data)
    return path


def row_error(path: Path, **options: Any) -> DatasetRowError:
    with pytest.raises(DatasetRowError) as refused:
        list(load_dataset(path, **options))
    return refused.value


# ---- dataset files -----------------------------------------------------------------------


@pytest.mark.parametrize("case", VALUE_IDS)
def test_a_hostile_value_in_a_jsonl_row_is_one_invalid_row(tmp_path: Path, case: str) -> None:
    value, said = HOSTILE_VALUES[case]
    path = write(tmp_path / "d.jsonl", json.dumps(GOOD), row_with("latency_ms", value))
    error = row_error(path)
    assert (error.location, error.field) == ("line 2", "latency_ms")
    assert said in error.problem
    skipping = load_dataset(path, skip_invalid=True)
    assert [s.id for s in skipping] == ["a"]
    assert [r.location for r in skipping.invalid_rows] == ["line 2"]


@pytest.mark.parametrize("case", VALUE_IDS)
def test_a_hostile_value_in_a_json_array_is_one_invalid_row(tmp_path: Path, case: str) -> None:
    value, said = HOSTILE_VALUES[case]
    path = tmp_path / "d.json"
    path.write_text("[" + json.dumps(GOOD) + ",\n" + row_with("metadata", value) + "]")
    error = row_error(path)
    assert (error.location, error.field) == ("row 2 (line 2)", "metadata")
    assert said in error.problem
    assert [s.id for s in load_dataset(path, skip_invalid=True)] == ["a"]


@pytest.mark.parametrize("case", VALUE_IDS)
def test_the_size_hint_reads_a_hostile_first_row_through_the_guard(
    tmp_path: Path, case: str
) -> None:
    value, _ = HOSTILE_VALUES[case]
    path = write(tmp_path / "d.jsonl", row_with("metadata", value), json.dumps(GOOD))
    dataset = load_dataset(path, skip_invalid=True)
    assert dataset.size_hint() == 2  # a count of rows, not a RecursionError or a ValueError
    assert [s.id for s in dataset] == ["a"]


def test_a_key_given_twice_is_refused_naming_it(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", json.dumps(GOOD), row_with("response", '"other"'))
    error = row_error(path)
    assert error.field == "response"
    assert "the key 'response' is given twice in one object" in error.problem
    nested = write(tmp_path / "n.jsonl", row_with("metadata", '{"k": [{"a": 1, "a": 2}]}'))
    error = row_error(nested)
    assert error.field == "metadata"
    assert error.problem.startswith("at metadata.k[0].a: the key 'a' is given twice")


WRONG_TYPES = [
    ("id", "{}"),
    ("query", "[1]"),
    ("response", "{}"),
    ("contexts", "7"),
    ("contexts", '[{"text": 5}]'),
    ("reference", "[]"),
    ("citations", "3"),
    ("category", "{}"),
    ("latency_ms", '"fast"'),
    ("latency_ms", "-1"),
    ("metadata", "[]"),
    ("answerable", '"maybe"'),
    ("human_faithful", "[]"),
    ("human_claims", "5"),
]


@pytest.mark.parametrize(("field", "value"), WRONG_TYPES)
def test_a_wrong_type_in_each_field_is_an_invalid_row_naming_it(
    tmp_path: Path, field: str, value: str
) -> None:
    text = row_with(field, value)
    if field in ("id", "query", "response", "contexts"):  # replace the row's own value
        row = {**json.loads(row_with("metadata", "{}")), field: json.loads(value)}
        text = json.dumps(row)
    error = row_error(write(tmp_path / "d.jsonl", json.dumps(GOOD), text))
    assert error.location == "line 2"
    assert error.field is not None and error.field.startswith(field)


@pytest.mark.parametrize("line", ["[1, 2]", '"text"', "5", "null", "{", '{"a": 1} x'])
def test_a_line_that_is_no_row_object_is_an_invalid_row(tmp_path: Path, line: str) -> None:
    error = row_error(write(tmp_path / "d.jsonl", json.dumps(GOOD), line))
    assert error.location == "line 2"
    assert "expected an object with sample fields" in error.problem or "invalid JSON" in (
        error.problem
    )


def test_a_byte_order_mark_is_read_past_and_bad_bytes_are_one_invalid_row(
    tmp_path: Path,
) -> None:
    bom = write(tmp_path / "bom.jsonl", "\ufeff" + json.dumps(GOOD))
    assert [s.id for s in load_dataset(bom)] == ["a"]
    assert load_dataset(bom).size_hint() == 1
    bad = write(tmp_path / "bad.jsonl", json.dumps(GOOD), b'{"id": "b", "query": "\xff"}')
    error = row_error(bad)
    assert (error.location, error.problem) == (
        "line 2",
        "not valid UTF-8 (byte 0xff at column 23); re-save the file as UTF-8",
    )
    mid_bom = write(tmp_path / "mid.jsonl", json.dumps(GOOD), "\ufeff" + row_with("x", "1"))
    assert row_error(mid_bom).location == "line 2"
    whole = tmp_path / "bad.json"
    whole.write_bytes(b'[{"id": "a", "query": "\xfe"}]')
    with pytest.raises(DatasetError, match=r"bad.json: line 1: not valid UTF-8 \(byte 0xfe\)"):
        load_dataset(whole)


def test_a_line_over_the_bound_is_read_past_as_one_invalid_row(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps(GOOD) + "\n")
        fh.write('{"id": "big", "query": "' + "x" * (64 * 2**20) + '"}\n')
        fh.write(json.dumps({**GOOD, "id": "c"}) + "\n")
    dataset = load_dataset(path, skip_invalid=True)
    assert dataset.size_hint() == 3
    assert [s.id for s in dataset] == ["a", "c"]
    [invalid] = dataset.invalid_rows
    assert invalid.location == "line 2"
    assert invalid.problem.startswith("a line of more than 64 MiB, more than VERA reads as one row")


def test_a_json_file_over_the_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    with path.open("wb") as fh:
        fh.truncate(513 * 2**20)  # sparse: the size is all the check reads
    with pytest.raises(DatasetError, match="513 MiB of JSON, more than the 512 MiB VERA parses"):
        load_dataset(path)


def test_a_hostile_csv_cell_is_an_invalid_row(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "id,query,response,contexts,latency_ms\n"
        "a,q,Paris.,Paris.,1\n"
        'b,q,x,"[""x"", NaN]",1\n'
        "c,q,x,x,inf\n"
    )
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == ["a"]
    assert [(r.location, r.field) for r in dataset.invalid_rows] == [
        ("line 3", "contexts"),
        ("line 4", "latency_ms"),
    ]


# ---- OTLP trace files and bodies ---------------------------------------------------------

OTLP_HOSTILE = {
    **{case: (value, said) for case, (value, said) in HOSTILE_VALUES.items()},
    "kvlist-of-numbers": ('{"kvlistValue": [1]}', "kvlistValue: expected an object"),
    "kvlist-values-not-a-list": ('{"kvlistValue": {"values": 5}}', "values: expected a list"),
    "kvlist-pair-not-an-object": ('{"kvlistValue": {"values": [1]}}', "expected a pair"),
    "array-of-a-string": ('{"arrayValue": "x"}', "arrayValue: expected an object"),
    "int-of-a-list": ('{"intValue": [1]}', "expected a number"),
    "infinite-double-string": ('{"doubleValue": "Infinity"}', "expected a number"),
    "double-beyond-range": ('{"doubleValue": 1e999}', "1e999 is out of range"),
    "key-twice": ('{"stringValue": "a", "stringValue": "b"}', "given twice"),
}


@pytest.mark.parametrize("case", list(OTLP_HOSTILE))
def test_a_hostile_otlp_request_in_a_trace_file_is_one_invalid_row(
    tmp_path: Path, case: str
) -> None:
    value, said = OTLP_HOSTILE[case]
    other = json.dumps(RAG).replace("5b8efff798038103d269b633813fc60c", "1" * 32)
    path = write(tmp_path / "t.jsonl", other, otlp_with(value))
    error = row_error(path)
    assert error.location == "line 2"
    assert said in error.problem
    assert "resourceSpans[0]" in str(error)  # the path to the value
    dataset = load_dataset(path, skip_invalid=True)
    assert [s.id for s in dataset] == ["1" * 32]


@pytest.mark.parametrize("case", list(OTLP_HOSTILE))
def test_a_hostile_otlp_json_body_is_refused_or_ignored(case: str) -> None:
    value, said = OTLP_HOSTILE[case]
    body = otlp_with(value).encode()
    try:
        request = request_spans_of(decode_body(body, "application/json"))
    except (BadRequest, OtlpRequestError) as exc:
        assert said in str(exc)
    else:
        raise AssertionError(f"read {len(request)} spans from a hostile body")


def test_protobuf_doubles_that_are_not_finite_refuse_their_request() -> None:
    pytest.importorskip("opentelemetry.proto", reason=without("monitor"))
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    request = trace_service_pb2.ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id = b"\x01" * 16, b"\x02" * 8
    attribute = span.attributes.add()
    attribute.key, attribute.value.double_value = "score", float("inf")
    decoded = decode_body(request.SerializeToString(), "application/x-protobuf")
    with pytest.raises(OtlpRequestError, match="the attribute 'score' holds inf"):
        request_spans_of(decoded)


# ---- conversations, stored plans, model replies ----------------------------------------


@pytest.mark.parametrize("case", VALUE_IDS)
def test_a_hostile_value_in_a_conversation_is_one_invalid_row(tmp_path: Path, case: str) -> None:
    value, said = HOSTILE_VALUES[case]
    good = conversation_with("1").replace('"c"', '"g"')
    path = write(tmp_path / "c.jsonl", good, conversation_with(value))
    with pytest.raises(DatasetRowError) as refused:
        read_conversations(path)
    assert (refused.value.location, refused.value.field) == ("line 2", "messages")
    assert said in refused.value.problem
    assert [s.metadata["conversation_id"] for s in load_dataset(path, skip_invalid=True)] == ["g"]


CONVERSATION_PROBLEMS = [
    ([{"role": "user"}, {"role": "assistant", "content": "Hi."}], "messages[0].content"),
    ([{"role": "user", "content": "Hi?"}, {"role": "assistant"}], "messages[1].content"),
    ([{"role": 5, "content": "x"}], "messages[0].role"),
    ([{"role": "user", "content": 5}], "messages[0].content"),
    ([{"role": "assistant", "content": "x", "tool_calls": 5}], "messages[0].tool_calls"),
    ([{"role": "assistant", "content": "x", "tool_calls": [1]}], "messages[0].tool_calls[0]"),
    ([{"role": "assistant", "content": "x", "contexts": 5}], "messages[0].contexts"),
    ([{"role": "assistant", "content": "x", "metadata": []}], "messages[0].metadata"),
    ([1], "messages[0]"),
]


@pytest.mark.parametrize(("messages", "field"), CONVERSATION_PROBLEMS)
def test_a_wrong_message_is_an_invalid_row_naming_it(
    tmp_path: Path, messages: list[Any], field: str
) -> None:
    path = write(tmp_path / "c.jsonl", json.dumps({"id": "c", "messages": messages}))
    with pytest.raises(DatasetRowError) as refused:
        list(load_dataset(path))
    assert (refused.value.location, refused.value.field) == ("line 1", field)


def _called(*then: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "call_1", "type": "function", "function": {"name": "track", "arguments": "{}"}}
    return [
        {"role": "user", "content": "Where is order 42?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Order 42 shipped on May 3."},
        *then,
        {"role": "assistant", "content": "Order 42 shipped on May 3, and arrives May 5."},
    ]


def test_a_tool_result_answering_a_call_never_made_is_refused(tmp_path: Path) -> None:
    forged = {"role": "tool", "tool_call_id": "call_9", "content": "Order 42 arrives May 5."}
    path = write(tmp_path / "c.jsonl", json.dumps({"id": "c", "messages": _called(forged)}))
    with pytest.raises(DatasetRowError) as refused:
        list(load_dataset(path))
    assert refused.value.field == "messages[3].tool_call_id"
    assert "answers call 'call_9', which no earlier assistant message made" in str(refused.value)
    # A result without an id, after every call is answered, answers none either (RAGAS's way).
    extra = {"role": "tool", "content": "Order 42 arrives May 5."}
    path = write(tmp_path / "e.jsonl", json.dumps({"id": "c", "messages": _called(extra)}))
    with pytest.raises(
        DatasetRowError, match=r"field 'messages\[3\]': a tool result that answers no"
    ):
        list(load_dataset(path))
    # The conversation with its call answered once is read, the tool result its evidence.
    path = write(tmp_path / "ok.jsonl", json.dumps({"id": "c", "messages": _called()}))
    [sample] = list(load_dataset(path))
    assert [c.metadata["source_kind"] for c in sample.contexts][:1] == ["tool"]


@pytest.mark.parametrize("case", [*VALUE_IDS, "key-twice"])
def test_a_hostile_answer_of_an_http_pipeline_is_its_error(case: str) -> None:
    value, said = HOSTILE_VALUES.get(case, ('"a", "response": "b"', "given twice"))
    body = '{"response": "x", "contexts": ["x"], "score": ' + value + "}"
    with LoopbackServer() as server:
        server.script(malformed(body))
        pipeline = load_user_pipeline(server.url + "/answer")
        with pytest.raises(UserPipelineError) as refused:
            asyncio.run(pipeline.run("q"))
    assert "answered JSON VERA does not read" in str(refused.value)
    assert said in str(refused.value)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A history with one finished run, made by `vera eval` as a user makes it."""
    folder = tmp_path_factory.mktemp("history")
    write(folder / "d.jsonl", json.dumps(GOOD))
    done = run_vera(folder, "eval", "-d", "d.jsonl", PYTHONPATH=SOURCE)
    assert done.returncode == 0, done.stderr
    path = folder / ".vera" / "runs.sqlite"
    with closing(sqlite3.connect(path)) as db:
        (run_id,) = db.execute("SELECT id FROM runs").fetchone()
    return path, run_id


@pytest.mark.parametrize("case", [*VALUE_IDS, "key-twice"])
def test_a_hostile_stored_plan_is_a_damaged_run(history: tuple[Path, str], case: str) -> None:
    path, run_id = history
    value, said = HOSTILE_VALUES.get(case, ('"a", "x": "b"', "the key 'x' is given twice"))
    with closing(sqlite3.connect(path)) as db, db:
        (options,) = db.execute("SELECT options FROM runs WHERE id = ?", (run_id,)).fetchone()
        hostile = options[:-1] + ', "x": ' + value + "}"
        db.execute("UPDATE runs SET options = ? WHERE id = ?", (hostile, run_id))
    try:
        store = RunStore(path, read_only=True)
        with pytest.raises(DamagedRunError) as damaged:
            store.get(run_id)
        store.close()
        assert f"run {run_id} in {path} is damaged (its stored options" in str(damaged.value)
        assert said in str(damaged.value)
    finally:
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("UPDATE runs SET options = ? WHERE id = ?", (options, run_id))


@pytest.mark.parametrize("case", [*VALUE_IDS, "key-twice"])
def test_a_hostile_model_reply_is_malformed(case: str) -> None:
    value, said = HOSTILE_VALUES.get(case, ('"a", "claims": []', "given twice"))
    reply = 'Here it is: {"claims": [], "x": ' + value + "} and a note {}"
    with pytest.raises(MalformedJSONError) as malformed:
        parse_json_object(reply)
    assert said in str(malformed.value)


# ---- the commands ------------------------------------------------------------------------

COMMANDS: list[tuple[str, Callable[[Path], str], str]] = [
    (
        "latency-infinity",
        lambda p: str(write(p / "d.jsonl", json.dumps(GOOD), row_with("latency_ms", "Infinity"))),
        "d.jsonl: line 2, field 'latency_ms': Infinity is out of range",
    ),
    (
        "otlp-kvlist",
        lambda p: str(
            write(
                p / "t.jsonl",
                json.dumps(RAG).replace("5b8efff798038103d269b633813fc60c", "1" * 32),
                otlp_with('{"kvlistValue": [1]}'),
            )
        ),
        "t.jsonl: line 2: not an OTLP trace request (request.resourceSpans[0]",
    ),
    (
        "deep-first-row",
        lambda p: str(
            write(
                p / "d.jsonl", row_with("metadata", "[" * 200_000 + "]" * 200_000), json.dumps(GOOD)
            )
        ),
        "d.jsonl: line 1, field 'metadata': arrays or objects nested more than 256 levels",
    ),
]


@pytest.mark.parametrize(("name", "make", "said"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_vera_eval_exits_2_naming_the_row_and_skips_it_with_skip_invalid(
    tmp_path: Path, name: str, make: Callable[[Path], str], said: str
) -> None:
    dataset = make(tmp_path)
    strict = run_vera(tmp_path, "eval", "-d", dataset, PYTHONPATH=SOURCE)
    assert strict.returncode == 2, strict.stderr
    assert said in strict.stderr
    assert "Traceback" not in strict.stdout + strict.stderr
    out = tmp_path / "r.json"
    skipping = run_vera(
        tmp_path, "eval", "-d", dataset, "--skip-invalid", "-o", str(out), PYTHONPATH=SOURCE
    )
    assert skipping.returncode == 0, skipping.stderr
    report = json.loads(out.read_text())
    assert report["counts"]["scored"] == 1
    [invalid] = report["invalid_rows"]
    assert said.split(": ", 1)[1] in invalid["message"]
    with closing(sqlite3.connect(tmp_path / ".vera" / "runs.sqlite")) as db:
        statuses = [s for (s,) in db.execute("SELECT status FROM runs")]
    assert "running" not in statuses  # no run is left looking as if it were still going


# ---- the live monitor: one bad request never stops it -------------------------------------

FUZZ_REQUESTS = 300
FUZZ_VALUES: list[Any] = [
    [1],
    {"values": 5},
    {"values": [1]},
    {"kvlistValue": [1]},
    {"kvlistValue": {"values": [{"key": 1}]}},
    {"arrayValue": "x"},
    {"intValue": [1]},
    {"intValue": "1e5"},
    {"doubleValue": "Infinity"},
    {"doubleValue": 10**30},
    {"stringValue": {"a": 1}},
    {},
    [],
    None,
    True,
    "x",
    -1,
    1.5,
]
FUZZ_RAW = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 500, "[" * 300 + "]" * 300]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        found += _paths(child, (*path, key))
    return found


def fuzzed_bodies(seed: int, count: int) -> list[bytes]:
    """`count` OTLP/JSON bodies: the RAG request with one to three of its values (any, at any
    depth) replaced by a wrong type or a number JSON has no place for; seeded, so a failure
    names the body that gave it."""
    rng = random.Random(seed)
    bodies = []
    for _ in range(count):
        request = json.loads(json.dumps(RAG))
        raw = None
        for _ in range(rng.randint(1, 3)):
            *parents, last = rng.choice(_paths(request))
            owner = request
            for key in parents:
                owner = owner[key]
            if rng.random() < 0.2:
                raw = rng.choice(FUZZ_RAW)
                owner[last] = "@hostile@"
            else:
                owner[last] = json.loads(json.dumps(rng.choice(FUZZ_VALUES)))
        text = json.dumps(request)
        if raw is not None and '"@hostile@"' in text:
            text = text.replace('"@hostile@"', raw, 1)
        bodies.append(text.encode())
    return bodies


def _post(url: str, body: bytes) -> int:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _evaluated(history: Path) -> set[str]:
    store = RunStore(history, read_only=True)
    try:
        return {r.id for run in store.list() for r in store.iter_results(run.id)}
    finally:
        store.close()


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


GOOD_TRACE = "2" * 32


def test_hostile_bodies_are_answered_and_the_monitor_goes_on(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn", reason=without("monitor"))
    pytest.importorskip("opentelemetry.proto", reason=without("monitor"))
    from vera import MonitorConfig, create_monitor, running_monitor

    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(settle_seconds=0.1, flush_seconds=0.1, spool=tmp_path / "spool")
    monitor = create_monitor(config, history=history)
    started = time.monotonic()
    with running_monitor(monitor) as url:
        assert _post(url, otlp_with("Infinity").encode()) == 400
        assert _post(url, otlp_with('{"kvlistValue": [1]}').encode()) == 200  # then ignored
        answers = [_post(url, body) for body in fuzzed_bodies(seed=39, count=FUZZ_REQUESTS)]
        good = json.dumps(RAG).replace("5b8efff798038103d269b633813fc60c", GOOD_TRACE)
        assert _post(url, good.encode()) == 200
        _wait_for(lambda: GOOD_TRACE in _evaluated(history), "the good trace's evaluation")
        status = monitor.status()
    assert time.monotonic() - started < 60
    assert status["stopped"] is None, status["stopped"]
    assert set(answers) <= {200, 400}  # never a 500
    assert 400 in answers and status["counts"]["invalid"] >= 1
    assert not list((tmp_path / "spool").iterdir())  # ignored requests leave the spool too


def test_a_spooled_hostile_request_does_not_stop_the_restart(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn", reason=without("monitor"))
    pytest.importorskip("opentelemetry.proto", reason=without("monitor"))
    from vera import MonitorConfig, create_monitor, running_monitor
    from vera._monitor import Spool

    spool = tmp_path / "spool"
    # What a monitor killed after answering 200 leaves behind it.
    Spool(spool).write(otlp_with('{"kvlistValue": [1]}').encode(), "application/json")
    history = tmp_path / "runs.sqlite"
    config = MonitorConfig(settle_seconds=0.1, flush_seconds=0.1, spool=spool)
    monitor = create_monitor(config, history=history)
    with running_monitor(monitor) as url:
        good = json.dumps(RAG).replace("5b8efff798038103d269b633813fc60c", GOOD_TRACE)
        assert _post(url, good.encode()) == 200
        _wait_for(lambda: GOOD_TRACE in _evaluated(history), "the good trace's evaluation")
        status = monitor.status()
    assert status["stopped"] is None, status["stopped"]
    assert status["counts"]["invalid"] == 1
    assert not list(spool.iterdir())
