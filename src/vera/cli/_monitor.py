"""`vera monitor`: receive an application's traces over OTLP/HTTP and evaluate them live."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from vera import ExitCode, VeraError, load_settings
from vera._text import printable
from vera.cli._app import app

if TYPE_CHECKING:
    from vera._monitor import Monitor
    from vera.integrations import PhoenixAnnotator

MONITOR_HELP = (
    "Receive traces from an application's OpenTelemetry exporter (OTLP/HTTP, protobuf or "
    "JSON) and evaluate a sample of them live, one stored run per window. Exit 1 when a "
    "window raised an --alert, 3 when evaluations stopped (a rejected key), 2 on bad options."
)


_HostFlag = Annotated[
    str, typer.Option("--host", help="The address to listen on (127.0.0.1: this machine).")
]

_PortFlag = Annotated[
    int, typer.Option("--port", min=0, max=65535, help="The port (4318 is OTLP/HTTP's).")
]

_HistoryFlag = Annotated[
    Path | None,
    typer.Option("--history", help="The run store (default .vera/runs.sqlite)."),
]

_NameFlag = Annotated[str, typer.Option("--name", help="The monitor's name: its windows' dataset.")]

_JudgeFlag = Annotated[
    str | None, typer.Option("--judge", help="The judge, as for vera eval (default offline).")
]

_MetricFlag = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", help="Metric (repeatable; default faithfulness)."),
]

_SampleRateFlag = Annotated[
    float, typer.Option("--sample-rate", help="Share of traces evaluated, 0 to 1.")
]

_FiltersFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        help="KEY=VALUE a trace must match to be evaluated (repeatable): service, route, "
        "model, or any root span attribute.",
    ),
]

_BudgetFlag = Annotated[
    int | None, typer.Option("--budget", help="At most this many evaluations an hour.")
]

_QueueFlag = Annotated[
    int,
    typer.Option("--queue", help="Traces waiting for the judge at most; more are dropped."),
]

_ConcurrencyFlag = Annotated[int, typer.Option("--concurrency", help="Traces evaluated at once.")]
_WorkersFlag = Annotated[
    int,
    typer.Option(
        "--workers",
        help="Processes the judge evaluates in, apart from the receiver (0: in the monitor's).",
    ),
]

_WindowFlag = Annotated[
    str, typer.Option("--window", help="hour, day, or a length dividing a day (15m, 6h).")
]

_AlertFlag = Annotated[
    list[str] | None,
    typer.Option("--alert", help='A window gate, e.g. "faithfulness<0.8" (repeatable).'),
]

_WebhookFlag = Annotated[
    str | None, typer.Option("--webhook", help="A URL each window's alerts are POSTed to.")
]

_TokenFlag = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="VERA_MONITOR_TOKEN",
        show_default=False,
        help="A token each request must carry (Authorization: Bearer TOKEN); needed off 127.0.0.1.",
    ),
]

_PhoenixFlag = Annotated[
    str | None,
    typer.Option(
        "--phoenix",
        metavar="URL",
        help="Each verdict onto its trace's span in the Phoenix at URL (the phoenix extra).",
    ),
]

_SpoolFlag = Annotated[
    Path | None,
    typer.Option("--spool", help="A folder keeping accepted traces until evaluated."),
]


def monitor_command(
    host: _HostFlag = "127.0.0.1",
    port: _PortFlag = 4318,
    history: _HistoryFlag = None,
    name: _NameFlag = "monitor",
    judge: _JudgeFlag = None,
    metric: _MetricFlag = None,
    sample_rate: _SampleRateFlag = 1.0,
    filters: _FiltersFlag = None,
    budget: _BudgetFlag = None,
    queue: _QueueFlag = 1000,
    concurrency: _ConcurrencyFlag = 4,
    workers: _WorkersFlag = 1,
    window: _WindowFlag = "hour",
    alert: _AlertFlag = None,
    webhook: _WebhookFlag = None,
    spool: _SpoolFlag = None,
    token: _TokenFlag = None,
    phoenix: _PhoenixFlag = None,
) -> None:
    """The command's shell: options in, `vera._monitor` called once, the exit code out."""
    from vera import MonitorConfig, create_monitor, parse_alert
    from vera._monitor import check_access, parse_filter, parse_window

    try:
        config = MonitorConfig(
            name=name,
            sample_rate=sample_rate,
            filters=tuple(parse_filter(f) for f in filters or ()),
            budget_per_hour=budget,
            queue_size=queue,
            concurrency=concurrency,
            workers=workers,
            window_seconds=parse_window(window),
            alerts=tuple(parse_alert(a) for a in alert or ()),
            webhook=webhook,
            spool=spool,
        )
        check_access(host, token)
        settings = load_settings({"judge": judge, "history_path": history})
        annotator = _phoenix(phoenix, judge or settings.judge)
        on_result = annotator.annotate_sample if annotator is not None else None
        monitor = create_monitor(
            config, history=history, metrics=metric, settings=settings, on_result=on_result
        )
    except VeraError as exc:
        typer.echo(printable(f"error: {exc}"), err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    _serve(monitor, annotator, host=host, port=port, token=token)


def _serve(
    monitor: Monitor, annotator: PhoenixAnnotator | None, *, host: str, port: int, token: str | None
) -> NoReturn:
    """Serve until stopped; then what went to Phoenix, and the monitor's exit code."""
    from vera import serve_monitor

    try:
        code = serve_monitor(monitor, host=host, port=port, token=token, on_ready=_ready)
    except VeraError as exc:  # before it received anything: a port in use, a read-only history
        typer.echo(printable(f"error: {exc}"), err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    if annotator is not None:
        typer.echo(printable(annotator.tally.summary(annotator.url)), err=True)
    raise typer.Exit(code)


def _phoenix(url: str | None, judge: str) -> PhoenixAnnotator | None:
    """The annotator `--phoenix` asks for, once Phoenix answers (a wrong URL is exit 2 now,
    not a failure at the first trace)."""
    if url is None:
        return None
    from vera.integrations import PhoenixAnnotator  # the client only when asked for

    annotator = PhoenixAnnotator(url, judge=judge)
    annotator.check()
    return annotator


def _ready(url: str) -> None:
    """What the monitor says once it listens: where, and what it cannot read."""
    from vera._monitor import protobuf_note

    typer.echo(f"Receiving OTLP/HTTP traces at {url} (Ctrl-C stops)", err=True)
    if (note := protobuf_note()) is not None:
        typer.echo(f"Note: {note}", err=True)


app.command("monitor", help=MONITOR_HELP)(monitor_command)
