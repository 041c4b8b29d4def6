"""How far a run has got, on stderr: a live bar in a terminal, plain lines in a CI log.

A live bar rewrites one line with carriage returns and escape codes, which a CI log keeps as
noise (or drops, leaving a long run silent). When the console is not a terminal the progress
is a plain line at most every `PLAIN_INTERVAL` seconds, and one line as each pass finishes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from vera._text import printable
from vera._types._report import SampleResult, SampleStatus

PLAIN_INTERVAL = 10.0
"""Seconds between two plain progress lines: often enough that a log shows the run is alive,
seldom enough that a long run's log stays readable."""


def format_duration(seconds: float) -> str:
    """A duration as a person says it: "4.2 s", "41 s", "2 min 41 s", "1 h 05 min"."""
    if seconds < 10:
        return f"{max(0.0, seconds):.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _remaining(seconds: float) -> str:
    """Time left, no more precise than an estimate from a rate can be."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min left"
    return f"about {format_duration(seconds)} left"


class _RateColumn(ProgressColumn):
    """Samples per second over rich's recent window, blank until there is one."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f} samples/s", style="progress.data.speed")


_NOT_EVALUATED = {
    SampleStatus.ERROR: "errored",
    SampleStatus.SKIPPED: "not evaluated: the run stopped",
    SampleStatus.NEEDS_PIPELINE: "without a response",
}
"""Statuses of samples that finished without being evaluated, as the summary line says them."""


class _Pass:
    """One pass over the samples, as the plain lines count it."""

    def __init__(self, label: str, total: int | None, done: int, now: float) -> None:
        self.label = label
        self.total = total
        self.count = done
        self.done_before = done
        self.started = now
        self.last_line = now
        self.unevaluated = dict.fromkeys(_NOT_EVALUATED, 0)

    def finished(self, result: SampleResult) -> None:
        self.count += 1
        if result.status in self.unevaluated:
            self.unevaluated[result.status] += 1

    def rate(self, now: float, *, evaluated_only: bool = False) -> float | None:
        """Samples per second in this pass (those an earlier run finished left out); with
        `evaluated_only`, only the samples that were evaluated (an error is not a result)."""
        new = self.count - self.done_before
        if evaluated_only:
            new -= sum(self.unevaluated.values())
        elapsed = now - self.started
        return new / elapsed if new > 0 and elapsed > 0 else None

    def counted(self) -> str:
        if self.total is None:
            return f"{self.count} samples"
        share = f" ({self.count * 100 // self.total}%)" if self.total else ""
        return f"{self.count}/{self.total} samples{share}"

    def line(self, now: float) -> str:
        parts = [f"{self.label}: {self.counted()}"]
        if self.unevaluated[SampleStatus.ERROR]:
            parts.append(f"{self.unevaluated[SampleStatus.ERROR]} errored")
        rate = self.rate(now)
        if rate is not None:
            parts.append(f"{rate:.1f} samples/s")
            if self.total is not None and self.total > self.count:
                parts.append(_remaining((self.total - self.count) / rate))
        return " · ".join(parts)

    def summary(self, now: float) -> str:
        """What the pass measured: the samples evaluated (errored, skipped and unanswered
        ones are counted apart, never as evaluated) and the rate at which they were."""
        evaluated = self.count - sum(self.unevaluated.values())
        counted = f"{evaluated}" if self.total is None else f"{evaluated}/{self.total}"
        line = f"Evaluated {counted} samples in {format_duration(now - self.started)}"
        apart = [f"{n} {_NOT_EVALUATED[s]}" for s, n in self.unevaluated.items() if n]
        if apart:
            line += f" ({', '.join(apart)})"
        rate = self.rate(now, evaluated_only=True)
        return line if rate is None else f"{line} · {rate:.1f} samples/s"


class RunProgress:
    """Progress of each pass on `console`: count, rate, time left and elapsed. It has the
    hooks of `vera._run.RunObserver` without importing it: renderers stay clear of what
    `vera._run._engine` imports (judges, providers), so the CLI mixes the two.

    `run_id` and `finished` say, after Ctrl-C, which run holds how many finished samples.
    `clock` is injectable so that tests can drive the plain lines' timing; `heartbeat` False
    prints plain lines only as samples finish (and on `tick`), with no thread of its own.
    """

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = PLAIN_INTERVAL,
        heartbeat: bool = True,
    ) -> None:
        self.console = console
        self.clock = clock
        self.interval = interval
        self.heartbeat = heartbeat
        self.run_id: str | None = None
        self.finished = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._pass: _Pass | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.pass_finished()

    @property
    def live(self) -> bool:
        """Whether to draw a live bar: only a terminal that can redraw a line shows one."""
        return self.console.is_terminal and not self.console.is_dumb_terminal

    def run_started(self, run_id: str) -> None:
        self.run_id = run_id
        self.console.print(f"Run {run_id}", highlight=False, markup=False)

    def pass_started(self, pipeline: str | None, total: int | None, done: int) -> None:
        self.pass_finished()
        self.finished = done
        label = "Evaluating" if pipeline is None else f"Evaluating {pipeline}"
        with self._lock:
            self._pass = _Pass(label, total, done, self.clock())
        if self.live:
            self._start_bar(label, total, done)
        else:
            self._say(self._pass.line(self._pass.started))
            if self.heartbeat:
                self._start_ticker()

    def sample_finished(self, result: SampleResult) -> None:
        self.finished += 1
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task)
        with self._lock:
            if self._pass is not None:
                self._pass.finished(result)
        self.tick()

    def tick(self) -> None:
        """Print a plain progress line if one is due: `interval` seconds since the last."""
        with self._lock:
            current, now = self._pass, self.clock()
            if current is None or self._bar is not None or now - current.last_line < self.interval:
                return
            current.last_line = now
            line = current.line(now)
        self._say(line)

    def pass_finished(self) -> None:
        """End the current pass, if any, with a line saying how long it took."""
        self._stop_ticker()
        if self._bar is not None:
            self._bar.stop()
        self._bar = self._task = None
        with self._lock:
            current, self._pass = self._pass, None
        if current is not None:
            self._say(current.summary(self.clock()))

    def _say(self, line: str) -> None:
        # Not wrapped, never read as markup, no escape sequence obeyed: a pipeline's name is
        # the user's text.
        self.console.print(printable(line), highlight=False, markup=False, soft_wrap=True)

    def _start_bar(self, label: str, total: int | None, done: int) -> None:
        self._bar = Progress(
            TextColumn(f"[bold]{escape(printable(label))}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            get_time=self.clock,
        )
        self._task = self._bar.add_task("eval", total=total, completed=done)
        self._bar.start()

    def _start_ticker(self) -> None:
        """Lines also while no sample finishes (a slow judge), so a log never goes quiet."""
        self._stop = threading.Event()
        self._ticker = threading.Thread(
            target=self._tick_until_stopped, args=(self._stop,), daemon=True
        )
        self._ticker.start()

    def _tick_until_stopped(self, stop: threading.Event) -> None:
        while not stop.wait(self._until_due()):
            self.tick()

    def _until_due(self) -> float:
        with self._lock:
            current = self._pass
            if current is None:
                return self.interval
            # A floor, so that a clock running ahead of the wait cannot make the loop spin.
            return max(0.05, current.last_line + self.interval - self.clock())

    def _stop_ticker(self) -> None:
        self._stop.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join()
        self._ticker = None
