"""`vera monitor`: evaluate live traces as an application's OpenTelemetry exporter sends them.

    config = MonitorConfig(sample_rate=0.1, alerts=(parse_alert("faithfulness<0.8"),))
    monitor = create_monitor(config, history=".vera/runs.sqlite", judge="offline")
    with running_monitor(monitor) as url:   # http://127.0.0.1:PORT/v1/traces
        ...

Each window (an hour, a day, or `--window`) is a run of the history, so `vera runs`, `vera
compare` and `vera view` read it as any run. See docs/monitor.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from vera._http_server import ServerLimits
from vera._monitor._assembly import Assembler, is_sampled, matches
from vera._monitor._config import (
    AlertRule,
    MonitorConfig,
    parse_alert,
    parse_filter,
    parse_window,
)
from vera._monitor._decode import (
    MAX_BODY_BYTES,
    BadRequest,
    decode_body,
    inflate,
    protobuf_note,
    request_spans_of,
)
from vera._monitor._server import check_access, receiver_app, running_monitor, serve_monitor
from vera._monitor._service import Monitor, Receipt
from vera._monitor._spool import QUARANTINE_KEPT, Spool
from vera._monitor._store import MonitorHistory, StoredAlert, StoredWindow, read_windows
from vera._monitor._windows import post_webhook, window_bounds
from vera._plan import DatasetRef, build_plan
from vera._plan._settings import Settings
from vera._store._history import DEFAULT_HISTORY_PATH
from vera._types import Sample, SampleResult
from vera._types._errors import ConfigError
from vera.datasets._otlp import OtlpRequestError
from vera.judges._base import Judge, as_judge, check_capabilities
from vera.judges._registry import create_judge
from vera.metrics._registry import create_metric

__all__ = [
    "MAX_BODY_BYTES",
    "QUARANTINE_KEPT",
    "AlertRule",
    "Assembler",
    "BadRequest",
    "Monitor",
    "MonitorConfig",
    "MonitorHistory",
    "OtlpRequestError",
    "Receipt",
    "ServerLimits",
    "Spool",
    "StoredAlert",
    "StoredWindow",
    "check_access",
    "create_monitor",
    "decode_body",
    "inflate",
    "is_sampled",
    "matches",
    "parse_alert",
    "parse_filter",
    "parse_window",
    "post_webhook",
    "protobuf_note",
    "read_windows",
    "receiver_app",
    "request_spans_of",
    "running_monitor",
    "serve_monitor",
    "window_bounds",
]


def create_monitor(
    config: MonitorConfig,
    *,
    history: Path | str | None = None,
    metrics: Sequence[str] | None = None,
    judge: Judge | str | None = None,
    settings: Settings | None = None,
    on_result: Callable[[Sample, SampleResult], None] | None = None,
) -> Monitor:
    """A monitor writing to `history` (default `.vera/runs.sqlite`) that evaluates with
    `judge` (a name or object; default the settings' judge) and `metrics` (default
    faithfulness). Every name and every alert's metric is checked here (`ConfigError`).
    Without opentelemetry-proto it reads OTLP/JSON and refuses protobuf requests, naming the
    extra (`protobuf_note`). `on_result` gets each stored result with its sample (as
    `vera monitor --phoenix` annotates its span: `PhoenixAnnotator.annotate_sample`)."""
    settings = settings or Settings()
    plan = build_plan(
        dataset=DatasetRef(name=f"monitor:{config.name}"),
        metrics=metrics,
        settings=settings,
        overrides={"judge": judge} if isinstance(judge, str) else None,
    )
    measured = {spec.name for spec in plan.metrics}
    for rule in config.alerts:
        if rule.metric not in measured:
            raise ConfigError(
                f"--alert {rule}: the monitor does not measure {rule.metric!r} (it measures "
                f"{', '.join(sorted(measured))}); add --metric {rule.metric} or fix the name"
            )
    given = judge if isinstance(judge, Judge) else None
    active = as_judge(given or create_judge(plan.settings.judge, plan.settings))
    scorers = [create_metric(spec.name, **spec.options) for spec in plan.metrics]
    check_capabilities(active, {m.name: m.needs for m in scorers})
    store = MonitorHistory(
        history or settings.history_path or DEFAULT_HISTORY_PATH,
        lock_timeout=settings.lock_timeout,
    )
    return Monitor(config, store, judge=active, metrics=scorers, plan=plan, on_result=on_result)
