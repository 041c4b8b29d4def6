"""`Monitor`: the receiver, the assembling thread and the evaluating thread of `vera monitor`.

The receiver never waits on the judge or the disk's history: it decodes the body (native
code), hands it to a bounded intake and answers. A request that finds the intake full is not
kept: its spans are answered as rejected (OTLP's partial success, which the exporter logs) and
counted as dropped in the window. One thread assembles traces and decides which to evaluate; a
kept trace that finds the evaluation queue full is dropped and counted. One thread evaluates
(with its own event loop, `concurrency` samples at a time, the judge's work itself done in a
worker process: `_worker`), stores each result at once in its window's run, writes the counts,
and closes windows when their time is over.

One bad trace never stops the monitor: whatever its reading, deciding or evaluation raises
is counted as *failed* in its window, said once per kind (`Failures`), and the monitor goes
on; a spooled request that cannot be read is set aside in the spool's quarantine folder. Only
what stops every evaluation (a rejected key, a dead worker, a history that cannot be written)
stops the monitor (exit 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from vera._monitor._assembly import Assembler, Decision
from vera._monitor._config import MonitorConfig
from vera._monitor._counts import WindowCounts
from vera._monitor._decode import (
    BadRequest,
    decode_body,
    inflate,
    request_spans_of,
    span_count,
    trace_ids,
)
from vera._monitor._spool import Spool
from vera._monitor._store import MonitorHistory
from vera._monitor._windows import post_webhook, window_alerts, window_bounds, window_report
from vera._monitor._worker import EvaluationProcesses, NotMovable, WorkerGone
from vera._plan import RunPlan
from vera._run._runner import evaluate_sample
from vera._text import printable
from vera._types import Sample
from vera._types._errors import RunStopError
from vera._types._report import SampleResult, SampleStatus
from vera.datasets._otlp import OtlpRequestError
from vera.judges._base import Judge
from vera.metrics._base import Metric

_INTAKE_BYTES = 128 * 1024 * 1024
"""Bytes of accepted requests waiting to be assembled, at most, as `decoded_size` counts them
(one request is taken when none waits, however large)."""
JSON_EXPANSION = 4
"""What decoded OTLP/JSON holds in memory, per byte of its text (3.2 measured on small
spans: a dict, a list and strings each)."""


def decoded_size(size: int, content_type: str) -> int:
    """What a body of `size` bytes holds in memory once decoded: JSON's objects weigh
    several times its text; protobuf's message about its size."""
    return size * JSON_EXPANSION if "json" in content_type.lower() else size


_POLL = 0.05
_ANSWER_TIMES_KEPT = 10_000
_BACKGROUND_NICE = 10
_WORKER_DEATHS = 3
"""Judge workers that may die in a row (each started again) before the monitor stops."""
_SAID_LENGTH = 300
"""Characters of an exception's message said in the log (a value may be megabytes)."""


@dataclass(frozen=True)
class Receipt:
    """The receiver's answer to one request: `status` 200 with `rejected` spans (dropped,
    over capacity) or 400 with `message`."""

    status: int
    rejected: int = 0
    message: str = ""


def _stderr(line: str) -> None:
    # A span's text quoted in a message (an alert, an error) is shown, never obeyed.
    print(printable(line), file=sys.stderr, flush=True)


def _said(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= _SAID_LENGTH else text[:_SAID_LENGTH] + "..."


class Failures:
    """Failures of single traces or requests, by kind ("reading: AttributeError"): each kind
    is said once, the rest only counted (in `status()` and the window's *failed* count), so a
    flood of one bad value cannot flood the log."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self._echo = echo
        self._lock = threading.Lock()
        self.kinds: Counter[str] = Counter()

    def add(self, stage: str, what: str, exc: BaseException) -> None:
        kind = f"{stage}: {type(exc).__name__}"
        with self._lock:
            self.kinds[kind] += 1
            first = self.kinds[kind] == 1
        if first:
            self._echo(
                f"vera monitor: {stage} {what} failed ({_said(exc)}); counted as failed and "
                "the monitor goes on (more failures of this kind are counted, not said)"
            )


class Monitor:
    """A live monitor over one history; `start` it, feed it `receive`, `stop` it."""

    def __init__(
        self,
        config: MonitorConfig,
        history: MonitorHistory,
        *,
        judge: Judge,
        metrics: Sequence[Metric],
        plan: RunPlan,
        echo: Callable[[str], None] = _stderr,
        on_result: Callable[[Sample, SampleResult], None] | None = None,
    ) -> None:
        self.config = config
        self.history = history
        self.judge = judge
        self.metrics = list(metrics)
        self.plan = plan
        self.echo = echo
        self.on_result = on_result
        """Called with each stored result and its sample, in a worker thread (`vera monitor
        --phoenix` annotates the trace's span); what it raises is said once a kind and
        counted in `status()`, and the monitor goes on."""
        self.counts = WindowCounts(config.window_seconds, clock=lambda: self.clock())
        self.clock: Callable[[], float] = time.time
        """What the windows, their counts and the hourly budget are timed by (a test's own
        clock makes a window close when the test says)."""
        self.failures = Failures(lambda line: self.echo(line))
        self.spool = Spool(config.spool) if config.spool is not None else None
        self.fatal: Exception | None = None
        """What stopped the evaluations (a rejected key, a quota, a full disk, or a failure of
        the monitor's own threads): the monitor exits 3."""
        self.alerted = False
        """An alert was raised on a window this monitor closed (the monitor exits 1)."""
        self.on_fatal: Callable[[], None] | None = None
        self._intake: queue.Queue[tuple[int | None, Any, int]] = queue.Queue()
        self._intake_bytes = 0
        self._intake_lock = threading.Lock()
        self._evaluations: queue.Queue[Sample] = queue.Queue(maxsize=config.queue_size)
        self._assembler = Assembler(config)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._windows: dict[float, str] = {}
        self._positions: dict[str, int] = {}
        self._in_flight: set[str] = set()
        self._budget: tuple[float, int] = (0.0, 0)
        self._description = judge.describe().to_details()
        self._answer_times: deque[float] = deque(maxlen=_ANSWER_TIMES_KEPT)
        self._processes: EvaluationProcesses | None = None
        self._deaths = 0

    # The receiver (called on the server's event loop: nothing here may wait).

    def receive(self, body: bytes, content_type: str, encoding: str = "") -> Receipt:
        """Take one OTLP/HTTP request body: queue it, or drop it and count it."""
        try:
            raw = inflate(body, encoding)
            request = decode_body(raw, content_type)
        except BadRequest as exc:
            return Receipt(400, message=str(exc))
        spans = span_count(request)
        self.counts.add("spans", spans)
        held = decoded_size(len(raw), content_type)
        with self._intake_lock:
            full = self._intake.qsize() >= self.config.intake_size or (
                self._intake_bytes > 0 and self._intake_bytes + held > _INTAKE_BYTES
            )
            if not full:
                self._intake_bytes += held
        if full:
            self.counts.add("dropped", len(trace_ids(request)))
            return Receipt(200, rejected=spans, message="vera monitor is over capacity")
        try:
            number = self.spool.write(raw, content_type) if self.spool is not None else None
        except OSError as exc:
            # Not accepted, so its bytes are not waiting either: release them at once.
            with self._intake_lock:
                self._intake_bytes -= held
            self.failures.add("spooling", "a request", exc)
            why = exc.strerror or type(exc).__name__
            return Receipt(
                503, message=f"vera monitor cannot keep the request in its spool ({why}); retry"
            )
        self._intake.put((number, request, held))
        return Receipt(200)

    # Starting and stopping.

    def start(self) -> None:
        """Close the windows whose time is over, start the judge's worker, then start
        assembling (what a spool holds first, one file at a time) and evaluating. A history
        that cannot be written raises here (`StoreWriteError`), before anything is received."""
        self.history.check_writable()
        self._close_past_windows(self.clock())
        # Last before the threads: nothing that can fail after it leaves a worker behind.
        self._processes = self._worker_processes()
        for target, name in ((self._assemble, "assemble"), (self._evaluate, "evaluate")):
            thread = threading.Thread(
                target=self._guarded, args=(target,), name=f"vera-monitor-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking work; finish the evaluations in flight and write the counts."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []
        try:  # what the threads counted after the evaluator's last write
            self._write_counts()
        except Exception as exc:  # stopping must not fail: say it and go on
            self.echo(f"vera monitor: the last counts could not be written: {exc}")
        waiting = self._evaluations.qsize() + len(self._assembler) + self._intake.qsize()
        if waiting:
            where = (
                f"kept in {self.config.spool} and evaluated on the next start"
                if self.spool is not None
                else "lost (start with --spool DIR to keep them)"
            )
            self.echo(f"vera monitor: {waiting} traces or requests not evaluated yet: {where}")

    def answered(self, seconds: float) -> None:
        """Note how long the receiver took over one request (the newest are kept)."""
        self._answer_times.append(seconds)

    def status(self) -> dict[str, Any]:
        """What the monitor counted since it started, what waits, and the receiver's own
        time per request over the newest ones (p50, p99, max, in ms)."""
        times = sorted(self._answer_times)
        return {
            "answer_ms": {
                "requests": len(times),
                "p50": round(1000 * times[len(times) // 2], 3) if times else None,
                "p99": round(1000 * times[int(0.99 * len(times))], 3) if times else None,
                "max": round(1000 * times[-1], 3) if times else None,
            },
            "counts": self.counts.snapshot(),
            "open_traces": len(self._assembler),
            "open_bytes": self._assembler.open_bytes,
            "queued": self._evaluations.qsize(),
            "intake": self._intake.qsize(),
            "spooled": self.spool.pending() if self.spool is not None else None,
            "quarantined": self.spool.quarantined() if self.spool is not None else None,
            "failures": dict(self.failures.kinds),
            "stopped": str(self.fatal) if self.fatal is not None else None,
        }

    def _guarded(self, work: Callable[[], None]) -> None:
        """A thread's work; its failure stops the monitor (exit 3) rather than leave a receiver
        that answers while nothing is assembled or evaluated behind it."""
        try:
            work()
        except Exception as exc:
            self._fail(exc)

    # The assembling thread.

    def _assemble(self) -> None:
        _lower_priority()
        if self.spool is not None:
            self._replay(self.spool)
        while not self._stop.is_set() and self.fatal is None:
            try:
                number, request, size = self._intake.get(timeout=_POLL)
            except queue.Empty:
                pass
            else:
                with self._intake_lock:
                    self._intake_bytes -= size
                self._take(number, request)
            for decision in self._assembler.ready(time.time()):
                self._route(decision)

    def _replay(self, spool: Spool) -> None:
        """Assemble the requests a previous monitor left in the spool, oldest first, one at a
        time (a large spool is never read into memory at once)."""
        for number, body, kind in spool.left_over():
            if self._stop.is_set() or self.fatal is not None:
                return
            try:
                request = decode_body(body, kind)
            except BadRequest as exc:
                self._set_aside(number, exc)
                continue
            # Its traces are as complete as they will get from this file: seen "settle
            # seconds ago", a trace with its root is decided at once.
            self._take(number, request, seen=time.time() - self.config.settle_seconds)
            for decision in self._assembler.ready(time.time()):
                self._route(decision, wait=True)

    def _set_aside(self, number: int | None, exc: Exception) -> None:
        """A request whose reading failed: counted, said once per kind, and its spool file
        (if any) moved to the quarantine folder, so no restart reads it again."""
        self.counts.add("failed")
        where = "a request"
        if number is not None and self.spool is not None:
            kept = self.spool.quarantine(number, _said(exc))
            where = f"spooled request {number}" + (f" (kept in {kept})" if kept else "")
        self.failures.add("reading", where, exc)

    def _take(self, number: int | None, request: Any, seen: float | None = None) -> None:
        try:
            spans = request_spans_of(request)
        except OtlpRequestError as exc:
            self.echo(f"vera monitor: a request is not OTLP ({exc}); its spans are ignored")
            self.counts.add("invalid")
            if number is not None and self.spool is not None:
                self.spool.holds(number, ())
            return
        except Exception as exc:  # a value the reader did not expect: this request only
            self._set_aside(number, exc)
            return
        now = time.time() if seen is None else seen
        kept: set[str] = set()
        dropped: set[str] = set()
        for span in spans:
            try:
                added = self._assembler.add(span, now)
            except Exception as exc:  # this span's trace only; the request's others go on
                self.counts.add("failed")
                self.failures.add("assembling", f"trace {span.trace_id}", exc)
                continue
            if added == "added":
                kept.add(span.trace_id)
            elif added in ("full", "dropped") and span.trace_id not in dropped:
                dropped.add(span.trace_id)
                kept.discard(span.trace_id)
                self.counts.add("dropped")
                if added == "dropped":  # opened by an earlier request: its files wait on it
                    self._settled(span.trace_id)
        if number is not None and self.spool is not None:
            self.spool.holds(number, kept)

    def _route(self, decision: Decision, *, wait: bool = False) -> None:
        """Queue a kept trace for the judge, or count what became of it. With `wait` (a
        trace read back from the spool, accepted already) it waits for room instead of being
        dropped."""
        self.counts.add("traces")
        if decision.error is not None:
            self.failures.add("deciding", f"trace {decision.trace_id}", decision.error)
        if decision.sample is None:
            self.counts.add(decision.outcome)
            self._settled(decision.trace_id)
            return
        while True:
            try:
                if wait:
                    self._evaluations.put(decision.sample, timeout=_POLL)
                else:
                    self._evaluations.put_nowait(decision.sample)
                break
            except queue.Full:
                if wait and not self._stop.is_set() and self.fatal is None:
                    continue
                if wait:
                    return  # stopping: it stays in the spool for the next start
                self.counts.add("dropped")
                self._settled(decision.trace_id)
                return
        self.counts.add("kept")

    def _settled(self, trace_id: str) -> None:
        if self.spool is not None:
            self.spool.settle(trace_id)

    # The evaluating thread.

    def _evaluate(self) -> None:
        _lower_priority()
        try:
            asyncio.run(self._evaluations_loop())
        finally:
            if self._processes is not None:
                self._processes.close()

    def _worker_processes(self) -> EvaluationProcesses | None:
        """The judge's own processes (`workers`), started and ready, or None to evaluate on
        the evaluating thread: when asked (`workers=0`) or when the judge cannot be copied
        (said once)."""
        if self.config.workers == 0:
            return None
        try:
            return EvaluationProcesses(self.judge, self.metrics, self.config.workers)
        except NotMovable as exc:
            self.echo(
                "vera monitor: the judge cannot run in its own process "
                f"({exc}); it evaluates beside the receiver, which may answer slower"
            )
            return None

    async def _judge(self, sample: Sample) -> SampleResult:
        if self._processes is not None:
            return await self._processes.evaluate(sample)
        return await evaluate_sample(sample, self.metrics, self.judge)

    async def _judged(self, sample: Sample) -> SampleResult | None:
        """The sample's result, or None when its evaluation failed on its own (counted as
        failed, said once per kind, settled). A judge's worker that dies is started again,
        the traces it held counted as failed: a trace that kills it cannot stop the monitor
        at every restart. What would stop every evaluation is raised (exit 3): a rejected
        key, or workers dying `_WORKER_DEATHS` times without an evaluation between."""
        try:
            result = await self._judge(sample)
        except RunStopError:
            raise
        except WorkerGone as exc:
            self._deaths += 1
            if self._deaths > _WORKER_DEATHS or self._processes is None:
                raise
            self._processes.replace_ended()
            self._trace_failed(sample.id, exc)
            return None
        except Exception as exc:  # this trace's own: the judge's errors are results
            self._trace_failed(sample.id, exc)
            return None
        self._deaths = 0
        return result

    def _trace_failed(self, trace_id: str, exc: Exception) -> None:
        self.counts.add("failed")
        self.failures.add("evaluating", f"trace {trace_id}", exc)
        self._settled(trace_id)

    async def _evaluations_loop(self) -> None:
        slots = asyncio.Semaphore(self.config.concurrency)
        tasks: set[asyncio.Task[None]] = set()
        last_tick = 0.0
        while not self._stop.is_set() and self.fatal is None:
            if time.monotonic() - last_tick >= self.config.flush_seconds:
                self._tick(self.clock())
                last_tick = time.monotonic()
            # A sample is taken only when a slot is free, so the queue's bound is the whole
            # backlog: none waits outside it.
            if slots.locked():
                await asyncio.sleep(_POLL)
                continue
            try:
                sample = self._evaluations.get_nowait()
            except queue.Empty:
                await asyncio.sleep(_POLL)
                continue
            await slots.acquire()
            task = asyncio.create_task(self._evaluate_one(sample, slots))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)
        self._tick(self.clock())

    def _over_budget(self, now: float) -> bool:
        limit = self.config.budget_per_hour
        if limit is None:
            return False
        hour = now - now % 3600
        started, used = self._budget
        if started != hour:
            started, used = hour, 0
        if used >= limit:
            return True
        self._budget = (started, used + 1)
        return False

    async def _evaluate_one(self, sample: Sample, slots: asyncio.Semaphore) -> None:
        trace_id = sample.id
        try:
            if trace_id in self._in_flight or self.history.evaluated(self.config.name, trace_id):
                self.counts.add("duplicates")
                self._settled(trace_id)
                return
            if self._over_budget(self.clock()):
                self.counts.add("over_budget")
                self._settled(trace_id)
                return
            self._in_flight.add(trace_id)
            result = await self._judged(sample)
            if result is None:
                return
            run_id = self._window_run(self.clock())
            position = self._positions.get(run_id)
            if position is None:
                position = self.history.next_position(run_id)
            self._positions[run_id] = position + 1
            self.history.runs.add_result(run_id, position, result)
            if result.status is SampleStatus.ERROR:
                self.counts.add("errors")
            self._settled(trace_id)
            await self._hand_on(sample, result)
        except Exception as exc:  # the judge's own failures are ERROR results already
            # The trace is not settled: with a spool it is evaluated after a restart.
            self._fail(exc)
        finally:
            self._in_flight.discard(trace_id)
            slots.release()

    async def _hand_on(self, sample: Sample, result: SampleResult) -> None:
        """The stored result to `on_result`, off the event loop (it may wait on a server)."""
        if self.on_result is None:
            return
        try:
            await asyncio.to_thread(self.on_result, sample, result)
        except Exception as exc:
            # The result is stored and the evaluation counted: only the hand-on failed, so it
            # is counted by kind in `status()`, not as a failed evaluation of the window.
            self.failures.add("handing on", f"trace {sample.id}", exc)

    def _fail(self, exc: Exception) -> None:
        if self.fatal is None:
            self.fatal = exc
            what = str(exc) if isinstance(exc, RunStopError) else f"{type(exc).__name__}: {exc}"
            self.echo(f"vera monitor: evaluations stopped: {what}")
            if self.on_fatal is not None:
                self.on_fatal()

    def _window_run(self, moment: float) -> str:
        start, end = window_bounds(moment, self.config.window_seconds)
        run_id = self._windows.get(start)
        if run_id is None:
            run_id = self.history.window(self.config.name, start, end, self.plan)
            self._windows[start] = run_id
        return run_id

    def _tick(self, now: float) -> None:
        """Write the counts, open the current window, close those whose time is over."""
        self._write_counts()
        self._window_run(now)
        self._close_past_windows(now)

    def _write_counts(self) -> None:
        for start, counts in self.counts.take().items():
            self.history.add_counts(self._window_run(start), counts)

    def _close_past_windows(self, now: float) -> None:
        for run_id, start, end in self.history.open_windows(self.config.name):
            if end <= now:
                self._close(run_id, start, end)
                self._windows.pop(start, None)
                self._positions.pop(run_id, None)

    def _close(self, run_id: str, start: float, end: float) -> None:
        report = window_report(self.history.runs, run_id, self._description)
        self.history.runs.finish(run_id, report)
        self.history.mark_closed(run_id)
        label = f"window {_when(start)} to {_when(end)} (run {run_id})"
        alerts = window_alerts(report, self.config.alerts, label)
        if not alerts:
            return
        self.alerted = True
        stored = []
        for alert in alerts:
            self.echo(f"ALERT {alert.message}")
            stored.append(
                self.history.add_alert(
                    run_id, str(alert.rule), alert.rule.metric, alert.mean, alert.message
                )
            )
        if self.config.webhook is not None:
            answer = post_webhook(self.config.webhook, self._payload(run_id, start, end, alerts))
            self.echo(f"vera monitor: webhook {answer}")
            for alert_id in stored:
                self.history.webhook_answer(alert_id, answer)

    def _payload(self, run_id: str, start: float, end: float, alerts: list[Any]) -> dict[str, Any]:
        return {
            "monitor": self.config.name,
            "run_id": run_id,
            "window_start": _when(start),
            "window_end": _when(end),
            "alerts": [
                {"rule": str(a.rule), "metric": a.rule.metric, "mean": a.mean, "message": a.message}
                for a in alerts
            ],
        }


def _lower_priority() -> None:
    """Let the CPU go to the receiver first when the machine is busy: on Linux a thread has
    its own nice value (on other systems this does nothing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _BACKGROUND_NICE)


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
