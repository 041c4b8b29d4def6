"""What `vera eval --phoenix` adds to a run: the same trace dataset evaluated with and without
it, against a Phoenix already running (`phoenix serve`).

Sends `--traces` traces of a small RAG application (a root CHAIN span, a RETRIEVER, an LLM
span, OpenInference attributes; one answer in three contradicts its document) to Phoenix over
OTLP/HTTP and writes the same spans to a trace file, then times the real `vera eval` (offline
judge, no history) in a subprocess, alternating without and with `--phoenix`, `--runs` times
each, and prints each time and the medians.

    python benchmarks/phoenix_cost.py --phoenix http://127.0.0.1:6006 --traces 100
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

DOCUMENT = "Paris is the capital of France."
QUESTION = "Which city is the capital of France?"


class _FileExporter(SpanExporter):
    """OTLP/JSON lines (ids in hex), as `vera eval --dataset` reads a trace file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        request = MessageToDict(encode_spans(spans))
        for resource in request.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = _hex(span[key])
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(request) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _hex(b64: str) -> str:
    return base64.b64decode(b64).hex()


def _send(phoenix: str, traces: int, path: Path) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(f"{phoenix}/v1/traces")))
    provider.add_span_processor(SimpleSpanProcessor(_FileExporter(path)))
    tracer = provider.get_tracer("shop")
    for n in range(traces):
        answer = "Paris is the capital of Germany." if n % 3 == 0 else DOCUMENT
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", QUESTION)
            with tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                retriever.set_attribute("retrieval.documents.0.document.content", DOCUMENT)
            with tracer.start_as_current_span("generate") as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
            root.set_attribute("output.value", answer)
    provider.shutdown()


def _timed(path: Path, traces: int, extra: list[str]) -> tuple[float, str]:
    command = [sys.executable, "-m", "vera", "eval", "-d", str(path), "--no-history"]
    command += ["--max-unfaithful", str(traces), *extra]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=path.parent, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"vera eval exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phoenix", required=True, help="the running Phoenix's URL")
    parser.add_argument("--traces", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        _send(args.phoenix.rstrip("/"), args.traces, path)
        time.sleep(3)  # Phoenix stores what it received before the first run reads it
        times: dict[str, list[float]] = {"without --phoenix": [], "with --phoenix": []}
        for _ in range(args.runs):
            times["without --phoenix"].append(_timed(path, args.traces, [])[0])
            elapsed, said = _timed(path, args.traces, ["--phoenix", args.phoenix])
            times["with --phoenix"].append(elapsed)
        print(next(line for line in said.splitlines() if "in Phoenix at" in line))
    for name, seconds in times.items():
        runs = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{name}: median {statistics.median(seconds):.2f} s ({runs})")


if __name__ == "__main__":
    main()
