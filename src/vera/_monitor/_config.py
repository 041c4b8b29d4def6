"""What `vera monitor` is told: sampling, filters, budget, queue, windows and alerts.

Every option is checked when the monitor starts, so a typo in `--alert` or `--window` is a
`ConfigError` (exit 2) that names the flag, never a monitor that runs and alerts on nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from vera._types._errors import ConfigError

_ALERT = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(<=|>=|<|>)\s*([-+]?\d+(?:\.\d+)?)\s*")
_WINDOW = re.compile(r"(\d+)\s*([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_NAMED_WINDOWS = {"hour": 3600, "day": 86400}


@dataclass(frozen=True)
class AlertRule:
    """`--alert "faithfulness<0.8"`: a window whose metric mean is on the wrong side of the
    value raises an alert when the window closes."""

    metric: str
    operator: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric}{self.operator}{self.value:g}"

    def breached(self, mean: float) -> bool:
        """Whether `mean` satisfies the rule's condition (the alert fires)."""
        return {
            "<": mean < self.value,
            "<=": mean <= self.value,
            ">": mean > self.value,
            ">=": mean >= self.value,
        }[self.operator]


def parse_alert(text: str) -> AlertRule:
    """`"faithfulness<0.8"` as a rule; anything else is a `ConfigError` showing the form."""
    found = _ALERT.fullmatch(text)
    if found is None:
        raise ConfigError(
            f"--alert {text!r}: expected METRIC<VALUE or METRIC>VALUE (also <=, >=), "
            'e.g. --alert "faithfulness<0.8"'
        )
    return AlertRule(found[1], found[2], float(found[3]))


def parse_window(text: str) -> int:
    """`hour`, `day`, or a length such as `15m`, `6h`, `30s`, in seconds."""
    spelled = text.strip().lower()
    if spelled in _NAMED_WINDOWS:
        return _NAMED_WINDOWS[spelled]
    found = _WINDOW.fullmatch(spelled)
    if found is None or int(found[1]) < 1:
        raise ConfigError(
            f"--window {text!r}: expected hour, day, or a length such as 15m, 6h or 30s"
        )
    seconds = int(found[1]) * _UNITS[found[2]]
    if 86400 % seconds and seconds % 86400:
        raise ConfigError(
            f"--window {text!r}: windows are aligned to the day, so the length must divide a "
            "day (e.g. 10m, 15m, 1h, 6h) or be whole days"
        )
    return seconds


def parse_filter(text: str) -> tuple[str, str]:
    """`--filter KEY=VALUE` as its key and value."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise ConfigError(
            f"--filter {text!r}: expected KEY=VALUE, e.g. --filter service=checkout, "
            "--filter route=/ask, --filter model=gpt-4o-mini"
        )
    return key.strip(), value.strip()


@dataclass(frozen=True)
class MonitorConfig:
    """How a monitor samples, bounds and records what it receives (see docs/monitor.md)."""

    name: str = "monitor"
    """The dataset name its windows are stored under (`vera runs list --dataset`)."""
    sample_rate: float = 1.0
    """The share of traces evaluated, decided by the trace id (the same id is always kept or
    always not, across restarts and replicas)."""
    filters: tuple[tuple[str, str], ...] = ()
    """Only traces matching every key (any of a key's values) are evaluated."""
    budget_per_hour: int | None = None
    """At most this many evaluations started in one clock hour; the rest are counted."""
    queue_size: int = 1000
    """Traces waiting for the judge; a kept trace that finds it full is dropped (counted)."""
    intake_size: int = 512
    """Requests waiting to be assembled into traces; beyond it requests are dropped."""
    max_open_traces: int = 100_000
    """Traces being assembled at once; a new trace beyond it is dropped (counted)."""
    max_open_bytes: int = 64 * 1024 * 1024
    """Bytes of span text in the traces being assembled; a span beyond it is dropped (its
    trace counted as dropped), so a few huge traces without a root cannot fill the memory."""
    window_seconds: int = 3600
    alerts: tuple[AlertRule, ...] = ()
    webhook: str | None = None
    spool: Path | None = None
    settle_seconds: float = 1.0
    """A trace is complete this long after its last span once its root span is in."""
    trace_timeout: float = 60.0
    """A trace whose root span never comes is given up this long after its last span."""
    concurrency: int = 4
    workers: int = 1
    """Processes the judge evaluates in, apart from the receiver's (0: on the monitor's own
    thread, where a judge that spends CPU slows the receiver's answers)."""
    flush_seconds: float = 1.0
    """How often the window's counts are written to the history."""

    def __post_init__(self) -> None:
        if not (0.0 <= self.sample_rate <= 1.0) or math.isnan(self.sample_rate):
            raise ConfigError(
                f"--sample-rate {self.sample_rate}: give a share from 0 to 1 (0.1 keeps 10 %)"
            )
        if self.budget_per_hour is not None and self.budget_per_hour < 0:
            raise ConfigError(f"--budget {self.budget_per_hour}: give 0 or more evaluations")
        if self.workers < 0:
            raise ConfigError(f"--workers {self.workers}: give 0 (the monitor's own) or more")
        for name, value in (
            ("--queue", self.queue_size),
            ("--concurrency", self.concurrency),
            ("intake_size", self.intake_size),
            ("max_open_traces", self.max_open_traces),
            ("max_open_bytes", self.max_open_bytes),
        ):
            if value < 1:
                raise ConfigError(f"{name} {value}: give 1 or more")
        if self.webhook is not None:
            _check_webhook(self.webhook)


def _check_webhook(url: str) -> None:
    """An http(s) URL without `user:pass@`: urllib never sends those as credentials, so such
    a webhook would fail at every alert (and the message would have to hide the URL)."""
    if not url.startswith(("http://", "https://")):
        raise ConfigError("--webhook: give an http:// or https:// URL")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here, at start
    except ValueError as exc:
        raise ConfigError(f"--webhook: the URL is not valid ({exc})") from None
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            "--webhook: the URL holds a user name or password (user:pass@host), which is not "
            "sent as credentials; use a URL whose path or query carries the hook's secret, as "
            "Slack's and most hooks' URLs do"
        )
    if not parts.hostname:
        raise ConfigError("--webhook: the URL names no host")
