"""Thread-safe counters of what the monitor received, kept and dropped, by window."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable


class WindowCounts:
    """Counts added from any thread, by the window of the moment they happen; `take` hands
    over what was added since the last call (to be written to the history)."""

    def __init__(self, window_seconds: int, clock: Callable[[], float] = time.time) -> None:
        self.window_seconds = window_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[float, Counter[str]] = {}
        self.totals: Counter[str] = Counter()
        """Everything counted since the monitor started."""

    def add(self, name: str, amount: int = 1, moment: float | None = None) -> None:
        if amount <= 0:
            return
        moment = self._clock() if moment is None else moment
        start = moment - moment % self.window_seconds
        with self._lock:
            self._pending.setdefault(start, Counter())[name] += amount
            self.totals[name] += amount

    def take(self) -> dict[float, Counter[str]]:
        with self._lock:
            pending, self._pending = self._pending, {}
        return pending

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.totals)
