"""`vera view`: the run history in a browser, served on this machine, read-only.

    from vera._viewer import create_app, serve
    serve(".vera/runs.sqlite")                   # http://127.0.0.1:8765/, opened in a browser
    app = create_app(".vera/runs.sqlite")        # the Starlette app, to test or mount

Three pages: `/`, the stored runs, 50 a page (`?page=N`), with their metric means and a trend
per dataset; `/runs/ID`,
one run's HTML report (the one `vera report` writes); `/compare?a=A&b=B`, run B against run A
with the samples whose verdicts changed; `/review/ID`, the run's review queues (`vera._review`);
`/runs/ID/conversations/CID`, one conversation of a run as a thread.
Only GET and HEAD are answered, the history is opened read-only (unless `review=True`: then
the review page's label form too, see `vera._viewer._writes`), and no page loads anything but
itself: each carries a content security policy that
allows only its own inline style (and the report's script) by hash. Off loopback every request
needs the access token (`vera._viewer._access`).

Starlette and uvicorn come with every install (the `view` extra is kept as an empty alias);
they are imported here only when an app is made, so `import vera` never needs them (and never
imports this package).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vera._types._errors import ConfigError
from vera._types._extras import install_hint

if TYPE_CHECKING:
    from starlette.applications import Starlette

from vera._viewer._pages import compare_url, conversation_url, run_url

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "INSTALL",
    "LIVE_SCRIPT",
    "check_token",
    "compare_url",
    "conversation_url",
    "create_app",
    "plan_access",
    "run_url",
    "serve",
    "url_for",
]

_LAZY = {
    "LIVE_SCRIPT": "vera._viewer._live",
    "check_token": "vera._viewer._access",
    "plan_access": "vera._viewer._server",
    "url_for": "vera._viewer._server",
}

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
INSTALL = install_hint("view")
"""What installs what `vera view` needs."""


def __getattr__(name: str) -> object:
    # These live beside the Starlette middleware and the uvicorn server; importing them on first
    # use keeps `import vera._viewer` free of both.
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _require(*modules: str) -> None:
    """Fail with the command that installs the view extra when one of `modules` is missing."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise ConfigError(
                f"vera view needs {module}, which is not installed: {INSTALL}"
            ) from None


def create_app(
    history: Path | str,
    *,
    allowed_hosts: Sequence[str] | None = None,
    token: str | None = None,
    review: bool = False,
) -> Starlette:
    """The web app over the run history at `history`, opened read-only now, so a missing
    file fails here (`MissingStoreError`, naming the path). `allowed_hosts` are the only Host
    headers answered (None: any), which keeps a web page that rebinds its domain to this
    machine's address from reading the history. With `token`, only requests that carry it
    are answered (`vera._viewer._access.TokenGuard`). With `review`, the review pages take
    labels (`vera._viewer._writes`: same origin and a CSRF token per session); without, nothing
    is written."""
    _require("starlette")
    from vera._viewer._app import build_app

    return build_app(history, allowed_hosts=allowed_hosts, token=token, review=review)


def serve(
    history: Path | str,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    open_browser: bool = True,
    on_ready: Callable[[str], None] | None = None,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    review: bool = False,
) -> None:
    """Serve the run history at `history` on `host`:`port` (0: any free port) until
    interrupted. Once listening, `on_ready` is called with the page's URL (by default it is
    printed) and, unless `open_browser` is False, the URL is opened in the browser.

    On a loopback `host` only loopback Host headers (and `allow_hosts`) are answered, and a
    `token` is asked for only when one is given. On any other host a warning says the history
    is reachable from the network; only the host itself and `allow_hosts` are answered (a
    wildcard host, 0.0.0.0 or ::, needs at least one), and every request must carry `token`,
    generated when not given and part of the URL `on_ready` gets (see `vera._viewer._access`)."""
    _require("starlette", "uvicorn")
    from vera._viewer._server import run_server

    run_server(
        history,
        host=host,
        port=port,
        open_browser=open_browser,
        on_ready=on_ready,
        token=token,
        allow_hosts=allow_hosts,
        review=review,
    )
