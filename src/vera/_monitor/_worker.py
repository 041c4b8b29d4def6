"""The judge in its own process, so the receiver never waits behind an evaluation.

An offline judge spends CPU in Python: run on one of the monitor's own threads it holds the
interpreter lock the receiver needs to answer, and the exporter's answer time grows with the
judge's work. Here the judge and the metrics are copied (pickled) into worker processes
(`vera._monitor._worker.serve` in a fresh interpreter: no lock held by another thread is
inherited, and the caller's script is not run again as `multiprocessing` would), each with
its own event loop, at a lower CPU priority than the receiver. Samples go in and results come
back as length-prefixed pickles over the worker's stdin and stdout. The monitor's evaluating
thread still decides everything else (at most once, budget, windows, storing): only the pure
work moves. A worker reads its stdin to the end, so it leaves with its monitor, `kill -9`
included.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from vera._run._runner import evaluate_sample
from vera._types import Sample
from vera._types._report import SampleResult
from vera.judges._base import Judge
from vera.metrics._base import Metric

_WORKER_NICE = 10
_HEADER = struct.Struct(">I")
_STOP_SECONDS = 10.0


class NotMovable(Exception):
    """The judge or a metric cannot be copied into another process (it holds a client, a
    lock or a local class); the monitor then evaluates on its own thread and says so."""


class WorkerGone(RuntimeError):
    """A judge's worker process ended while evaluations were asked of it."""


def _write(stream: IO[bytes], message: object) -> None:
    body = pickle.dumps(message)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def _read(stream: IO[bytes]) -> Any | None:
    """The next message, or None at the end of the stream. The bytes come from this
    monitor's own worker (or the monitor itself), never from disk or the network."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    body = stream.read(_HEADER.unpack(header)[0])
    return pickle.loads(body)


class _Worker:
    """One worker process and the evaluations waiting for its answers."""

    def __init__(self, payload: bytes) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from vera._monitor._worker import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin, self._stdout = self._process.stdin, self._process.stdout
        self._stdin.write(_HEADER.pack(len(payload)) + payload)
        self._stdin.flush()
        if _read(self._stdout) != ("ready",):
            raise WorkerGone(f"the judge's worker process did not start ({self._ended()})")
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._gone: str | None = None
        self._reader = threading.Thread(target=self._answers, daemon=True)
        self._reader.start()

    def load(self) -> int:
        return len(self._pending)

    @property
    def ended(self) -> bool:
        return self._gone is not None

    async def evaluate(self, sample: Sample) -> SampleResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._gone is not None:
                raise WorkerGone(self._gone)
            number = next(self._ids)
            self._pending[number] = (loop, future)
            _write(self._stdin, (number, sample))
        result: SampleResult = await future
        return result

    def _answers(self) -> None:
        while (message := _read(self._stdout)) is not None:
            number, ok, value = message
            loop, future = self._pending.pop(number)
            if ok:
                loop.call_soon_threadsafe(_settle, future, value, None)
            else:
                loop.call_soon_threadsafe(_settle, future, None, value)
        with self._lock:
            self._gone = f"the judge's worker process ended ({self._ended()})"
            pending, self._pending = self._pending, {}
        for loop, future in pending.values():
            loop.call_soon_threadsafe(_settle, future, None, WorkerGone(self._gone))

    def _ended(self) -> str:
        code = self._process.poll()
        return "still running" if code is None else f"exit code {code}"

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(_STOP_SECONDS)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class EvaluationProcesses:
    """`workers` processes evaluating samples with copies of `judge` and `metrics`."""

    def __init__(self, judge: Judge, metrics: Sequence[Metric], workers: int) -> None:
        try:
            # The import path first: the judge's class may live where only it leads.
            payload = pickle.dumps((list(sys.path), pickle.dumps((judge, list(metrics)))))
        except Exception as exc:  # pickle raises many types for what it cannot copy
            raise NotMovable(f"{type(exc).__name__}: {exc}") from exc
        self._payload = payload
        self._workers: list[_Worker] = []
        try:
            for _ in range(workers):
                self._workers.append(_Worker(payload))
        except BaseException:
            self.close()
            raise

    async def evaluate(self, sample: Sample) -> SampleResult:
        """The sample's result, computed by the least busy worker (its exceptions are
        raised here)."""
        return await min(self._workers, key=_Worker.load).evaluate(sample)

    def replace_ended(self) -> int:
        """Start a fresh worker for each one that ended (a sample killed it); how many."""
        replaced = 0
        for index, worker in enumerate(self._workers):
            if worker.ended:
                worker.close()
                self._workers[index] = _Worker(self._payload)
                replaced += 1
        return replaced

    def close(self) -> None:
        """Stop the workers (the monitor waits for its evaluations in flight first)."""
        for worker in self._workers:
            worker.close()
        self._workers = []


def _portable(exc: Exception) -> Exception:
    """The exception itself when it survives pickling, else one that says what it was."""
    try:
        copy = pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return copy if isinstance(copy, Exception) else RuntimeError(str(exc))


def serve() -> None:
    """The worker: evaluate what stdin asks, answer on stdout, leave at stdin's end."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, _WORKER_NICE)
    source, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # what a judge prints must not corrupt the answers
    started = _read(source)
    if started is None:
        return
    path, objects = started
    sys.path[:0] = [entry for entry in path if entry not in sys.path]
    judge, metrics = pickle.loads(objects)
    loop = asyncio.new_event_loop()
    lock = threading.Lock()
    tasks: set[asyncio.Task[None]] = set()

    async def one(number: int, sample: Sample) -> None:
        try:
            message: tuple[int, bool, object] = (
                number,
                True,
                await evaluate_sample(sample, metrics, judge),
            )
        except Exception as exc:
            message = (number, False, _portable(exc))
        with lock:
            _write(answers, message)

    def start(number: int, sample: Sample) -> None:
        task = loop.create_task(one(number, sample))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def read() -> None:
        while (message := _read(source)) is not None:
            loop.call_soon_threadsafe(start, *message)
        loop.call_soon_threadsafe(loop.stop)

    with lock:
        _write(answers, ("ready",))
    threading.Thread(target=read, daemon=True).start()
    loop.run_forever()
