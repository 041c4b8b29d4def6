"""Traces put together from the spans of many requests, and the choice of which to evaluate.

OTLP has no end-of-trace marker. A trace is taken as complete `settle_seconds` after its last
span once its root span (the one without a parent) is in; one whose root never comes is given
up `trace_timeout` after its last span, and counted as incomplete. The spans are read by the
OTLP file reader's own functions (`vera.datasets._otlp`), so a live trace becomes the same
sample as the same trace in a file.

Open traces are bounded by count (`max_open_traces`) and by bytes (`max_open_bytes`, the text
their spans carry, as `span_bytes` estimates it): a few huge spans without a root span must
not hold the memory that thousands of ordinary traces would.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vera._monitor._config import MonitorConfig
from vera._types import Sample
from vera._types._errors import DatasetRowError
from vera.datasets._otlp import OtlpSpan, TraceParts, add_trace_span, trace_row
from vera.datasets._readers import RawRow
from vera.datasets._validate import RowRules, validate_row

_RULES = RowRules(label="vera monitor")
_ROUTE_KEYS = ("http.route", "url.path", "http.target")
_SPAN_OVERHEAD = 768
"""Bytes a span costs beyond its text (its objects, ids and times): about 880 in all were
measured for a span with 100 characters of text."""
_SETTLED_KEPT = 20_000
"""Trace ids remembered after they are settled, so a late span does not open them again (a
span later than that opens a trace that ends as incomplete, or as a duplicate)."""


def _value_bytes(value: Any, budget: int) -> int:
    """The text in a decoded attribute value, counted until `budget` is passed."""
    if isinstance(value, str | bytes):
        return len(value)
    total = 16
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        for item in value:
            total += _value_bytes(item, budget - total)
            if total > budget:
                break
    return total


def span_bytes(span: OtlpSpan, budget: int = 1 << 62) -> int:
    """What a span holds in memory, roughly: its text and a fixed overhead."""
    total = _SPAN_OVERHEAD + len(span.name)
    for name, attributes in ((span.name, span.attributes), *span.events):
        total += len(name) + _value_bytes(attributes, budget - total)
    return total


def is_sampled(trace_id: str, rate: float) -> bool:
    """Whether the trace is in a `rate` sample: decided by the id's random low 56 bits (as
    W3C trace context makes them), so the decision is the same everywhere, every time."""
    if rate >= 1.0:
        return True
    return int(trace_id[-14:], 16) < rate * (1 << 56)


def _values(parts: TraceParts, key: str) -> set[str]:
    """What trace `parts` says for a filter key (aliases: service, route, model)."""
    root = parts.root
    if key in ("service", "service.name"):
        return {root.service} if root is not None and root.service else set()
    if key == "model":
        return set(parts.models)
    if root is None:
        return set()
    keys = _ROUTE_KEYS if key == "route" else (key,)
    return {str(root.attributes[k]) for k in keys if root.attributes.get(k) is not None}


def matches(parts: TraceParts, filters: tuple[tuple[str, str], ...]) -> bool:
    """Every filter key has one of its values in the trace (values of one key: any)."""
    wanted: dict[str, set[str]] = {}
    for key, value in filters:
        wanted.setdefault(key, set()).add(value)
    return all(_values(parts, key) & values for key, values in wanted.items())


@dataclass(frozen=True)
class Decision:
    """What became of one settled trace: `outcome` is "kept" (with its sample) or the
    counter it adds to ("filtered", "not_sampled", "invalid", "incomplete", or "failed" with
    the `error` its deciding raised)."""

    trace_id: str
    outcome: str
    sample: Sample | None = None
    reason: str = ""
    error: Exception | None = None


class Assembler:
    """Open traces, oldest activity first; not thread-safe (the monitor's one assembling
    thread owns it)."""

    def __init__(self, config: MonitorConfig) -> None:
        self.config = config
        self._open: OrderedDict[str, tuple[TraceParts, float]] = OrderedDict()
        self._settled: OrderedDict[str, None] = OrderedDict()
        self._bytes_of: dict[str, int] = {}
        self.open_bytes = 0
        """What the open traces' spans hold, as `span_bytes` counts it."""

    def __len__(self) -> int:
        return len(self._open)

    def add(self, span: OtlpSpan, now: float) -> str:
        """Gather a span: "added", "late" (its trace was settled), "full" (too many open
        traces, or bytes in them: a new trace is not opened) or "dropped" (its open trace
        would pass the bytes: the trace is given up, and settled)."""
        trace_id = span.trace_id
        if trace_id in self._settled:
            return "late"
        found = self._open.get(trace_id)
        if found is None and len(self._open) >= self.config.max_open_traces:
            return "full"
        room = self.config.max_open_bytes - self.open_bytes
        size = span_bytes(span, room)
        if size > room:
            if found is None:
                return "full"
            self.settle(trace_id)
            return "dropped"
        traces: dict[str, TraceParts] = {trace_id: found[0]} if found else {}
        add_trace_span(traces, span)
        self._open[trace_id] = (traces[trace_id], now)
        self._open.move_to_end(trace_id)
        self._bytes_of[trace_id] = self._bytes_of.get(trace_id, 0) + size
        self.open_bytes += size
        return "added"

    def settle(self, trace_id: str) -> None:
        """Forget a trace; its late spans are ignored."""
        self._open.pop(trace_id, None)
        self.open_bytes -= self._bytes_of.pop(trace_id, 0)
        self._settled[trace_id] = None
        if len(self._settled) > _SETTLED_KEPT:
            self._settled.popitem(last=False)

    def ready(self, now: float) -> Iterator[Decision]:
        """The traces complete (or given up) by `now`, each decided and settled."""
        due = []
        for trace_id, (parts, seen) in self._open.items():
            waited = now - seen
            if waited < self.config.settle_seconds:
                break  # oldest activity first: the rest are more recent
            if parts.root is None and waited < self.config.trace_timeout:
                continue
            due.append((trace_id, parts))
        for trace_id, parts in due:
            if parts.root is None:
                decision = Decision(trace_id, "incomplete", reason="no root span came")
            else:
                try:
                    decision = self._decide(trace_id, parts)
                except Exception as exc:  # a value no reader expected: this trace only
                    decision = Decision(trace_id, "failed", reason=str(exc), error=exc)
            self.settle(trace_id)
            yield decision

    def _decide(self, trace_id: str, parts: TraceParts) -> Decision:
        if not matches(parts, self.config.filters):
            return Decision(trace_id, "filtered")
        if not is_sampled(trace_id, self.config.sample_rate):
            return Decision(trace_id, "not_sampled")
        row = trace_row(trace_id, parts)
        try:
            sample = validate_row(RawRow(f"trace {trace_id}", row), 1, _RULES)
        except DatasetRowError as exc:
            return Decision(trace_id, "invalid", reason=str(exc))
        return Decision(trace_id, "kept", sample)
