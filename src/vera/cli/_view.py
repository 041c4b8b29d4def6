"""`vera view`: the run history in a browser."""

from __future__ import annotations

from typing import Annotated

import typer

from vera import RunStore, VeraError
from vera.cli._app import _fail, app
from vera.cli._runs import HistoryOption

_VIEW_HELP = (
    "Browse the run history in a web browser: its runs 50 a page, newest first, with a trend "
    "per dataset, one run's report (claims, verdicts, evidence), and two runs compared. "
    "Read-only unless --review, which lets its review pages store labels; Ctrl-C stops it.\n\n"
    "Example: vera view --port 8765; off this machine: vera view --host 0.0.0.0 "
    "--allow-host myhost.example"
)


_TokenFlag = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="VERA_VIEW_TOKEN",
        show_default=False,
        help="The access token every request must carry; off loopback one is generated "
        "when not given, and printed in the address.",
    ),
]
_ReviewFlag = Annotated[
    bool,
    typer.Option(
        "--review",
        help="Let the review pages (/review/RUN) store people's labels in the history; "
        "without it the view only reads.",
    ),
]


@app.command("view", help=_VIEW_HELP)
def view_command(
    history: HistoryOption = None,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The port to serve on (0: any free).")
    ] = 8765,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="The address to listen on; 127.0.0.1 keeps it to this machine."
        ),
    ] = "127.0.0.1",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the address; do not open a browser.")
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="A Host name the view answers besides the address it listens on "
            "(repeatable); needed with --host 0.0.0.0 or ::.",
        ),
    ] = None,
    token: _TokenFlag = None,
    review: _ReviewFlag = False,
) -> None:
    """Browse the run history in a web browser (the help is `_VIEW_HELP`)."""
    from vera import serve

    def ready(url: str) -> None:
        # Not through `out`, which masks every token in a URL: this address's token is the
        # one the user must see to open it.
        typer.echo(f"Serving the run history at {url} (Ctrl-C stops)")

    try:
        serve(
            history or RunStore.DEFAULT_PATH,
            host=host,
            port=port,
            open_browser=not no_browser,
            on_ready=ready,
            token=token,
            allow_hosts=allow_host or (),
            review=review,
        )
    except VeraError as exc:
        _fail(exc)
