"""Phoenix span annotations without a Phoenix: the annotations one answer makes, answers that
cannot be placed, and Phoenix's refusals, against an explicit fake on 127.0.0.1 that speaks
the REST endpoints the official client calls (`POST /v1/span_annotations`, `GET
/v1/projects`). The real Phoenix is in tests/integration/test_phoenix.py."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.support.extras import without
from typer.testing import CliRunner

import vera
from vera import ConfigError, Sample
from vera.cli import app
from vera.integrations import PhoenixAnnotator, annotate_phoenix
from vera.integrations._phoenix import span_ids

WHITEBOX = "the span ids the annotator reads"

pytest.importorskip("phoenix.client", reason=without("phoenix"))


class FakePhoenix:
    """Not Phoenix: records what the client posts; answers `status` with `body`, or, for
    annotations, 404 naming the spans it does not hold (Phoenix's own answer)."""

    def __init__(self, spans: set[str]) -> None:
        self.spans = spans
        self.posted: list[list[dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.headers.append(dict(self.headers))
                if fake.status != 200:
                    self._answer(fake.status, {"detail": "Invalid token"})
                    return
                self._answer(200, {"data": [{"name": "default", "id": "UHJvamVjdDox"}]})

            def do_POST(self) -> None:
                fake.headers.append(dict(self.headers))
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if fake.status != 200:
                    self._answer(fake.status, {"detail": "Invalid token"})
                    return
                fake.posted.append(body["data"])
                missing = sorted({a["span_id"] for a in body["data"]} - fake.spans)
                if missing:
                    self._answer(
                        404, {"detail": f"Spans with IDs {', '.join(missing)} do not exist."}
                    )
                    return
                self._answer(200, {"data": [{"id": str(n)} for n, _ in enumerate(body["data"])]})

            def _answer(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def fake() -> Iterator[FakePhoenix]:
    running = FakePhoenix({"a" * 16, "b" * 16})
    thread = threading.Thread(target=running.server.serve_forever, daemon=True)
    thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


def _rows(path: Path) -> Path:
    rows = [
        {"id": "s1", "query": "q", "response": "Snow is white.", "contexts": ["Snow is white."]},
        {"id": "s2", "query": "q", "response": "Snow is green.", "contexts": ["Snow is white."]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_each_answer_is_its_verdict_and_its_scores(tmp_path: Path, fake: FakePhoenix) -> None:
    report = vera.evaluate(_rows(tmp_path / "d.jsonl"), max_unfaithful=1)
    by_id = {"s1": "a" * 16, "s2": "b" * 16}
    tally = annotate_phoenix(report.samples, by_id, fake.url, judge=report.judge)
    assert (tally.annotated, tally.without_span, tally.unknown_span) == (2, [], [])
    [posted] = fake.posted  # one request for the run
    for sample in report.samples:
        mine = {a["name"]: a for a in posted if a["span_id"] == by_id[sample.id]}
        assert set(mine) == {"vera.verdict", *(f"vera.{m}" for m in sample.scores)}
        assert sample.verdict is not None
        verdict = mine["vera.verdict"]
        assert verdict["result"]["label"] == sample.verdict.status.value
        assert verdict["result"]["score"] == float(bool(sample.verdict.passed))
        assert verdict["metadata"]["sample_id"] == sample.id
        assert [c["text"] for c in verdict["metadata"]["claims"]] == [c.text for c in sample.claims]
        assert mine["vera.faithfulness"]["result"]["score"] == sample.scores["faithfulness"]
    assert tally.annotations == len(posted)


def test_answers_without_a_span_id_are_counted_and_named(
    tmp_path: Path, fake: FakePhoenix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _rows(tmp_path / "d.jsonl")
    args = ["eval", "-d", "d.jsonl", "--no-history", "--max-unfaithful", "1"]
    result = CliRunner().invoke(app, [*args, "--phoenix", fake.url])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "0 answers annotated" in said
    assert "2 without a span id, not annotated (s1, s2)" in said
    assert fake.posted == []


def test_python_warns_of_answers_it_could_not_place(tmp_path: Path, fake: FakePhoenix) -> None:
    with pytest.warns(UserWarning, match=r"2 without a span id, not annotated \(s1, s2\)"):
        vera.evaluate(_rows(tmp_path / "d.jsonl"), max_unfaithful=1, phoenix=fake.url)


def test_a_span_phoenix_lacks_costs_only_its_answer(tmp_path: Path, fake: FakePhoenix) -> None:
    report = vera.evaluate(_rows(tmp_path / "d.jsonl"), max_unfaithful=1)
    by_id = {"s1": "a" * 16, "s2": "c" * 16}  # Phoenix holds no span cccc...
    tally = annotate_phoenix(report.samples, by_id, fake.url)
    assert (tally.annotated, tally.unknown_span) == (1, ["s2"])
    # The batch was refused whole, then each answer went on its own.
    assert [len({a["span_id"] for a in batch}) for batch in fake.posted] == [2, 1, 1]
    assert "1 whose span Phoenix does not hold (s2)" in tally.summary(fake.url)


def test_a_refused_key_names_the_status_and_the_setting(
    tmp_path: Path, fake: FakePhoenix, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOENIX_API_KEY", "k-123")
    fake.status = 401
    annotator = PhoenixAnnotator(fake.url)
    with pytest.raises(ConfigError, match=r"HTTP 401 \(set PHOENIX_API_KEY\): .*Invalid token"):
        annotator.check()
    assert fake.headers[-1]["Authorization"] == "Bearer k-123"  # the client sent the key


def test_span_ids_come_from_the_trace_reader_metadata() -> None:
    traced = Sample(id="t1", query="q", response="r", metadata={"root_span_id": "a" * 16})
    rows = Sample(id="r1", query="q", response="r", metadata={"root_span_id": ""})
    assert span_ids([traced, rows]) == {"t1": "a" * 16}


def test_a_bad_url_and_a_missing_client_are_config_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="expected Phoenix's http"):
        PhoenixAnnotator("localhost:6006")
    monkeypatch.setitem(sys.modules, "phoenix.client", None)
    with pytest.raises(ConfigError, match=r"pip install 'vera-eval\[phoenix\]'"):
        PhoenixAnnotator("http://127.0.0.1:9").check()


def test_monitor_asks_phoenix_before_it_listens(tmp_path: Path, fake: FakePhoenix) -> None:
    fake.server.shutdown()
    fake.server.server_close()  # nothing answers at the URL any more
    args = ["monitor", "--history", str(tmp_path / "runs.sqlite"), "--port", "0"]
    result = CliRunner().invoke(app, [*args, "--phoenix", fake.url])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"--phoenix {fake.url}: Phoenix could not be reached" in said
    assert "Receiving OTLP/HTTP traces" not in said  # it never listened


def test_a_url_where_phoenix_is_not_is_an_error_not_unknown_spans(tmp_path: Path) -> None:
    report = vera.evaluate(_rows(tmp_path / "d.jsonl"), max_unfaithful=1)
    elsewhere = FakePhoenix(set())
    elsewhere.status = 404  # another server: no /v1/projects, no /v1/span_annotations
    thread = threading.Thread(target=elsewhere.server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(ConfigError, match=r"refused VERA's request with HTTP 404"):
            annotate_phoenix(report.samples, {"s1": "a" * 16}, elsewhere.url)
    finally:
        elsewhere.server.shutdown()
        elsewhere.server.server_close()
    assert elsewhere.posted == []
