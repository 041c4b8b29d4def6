"""The Starlette app of `vera view`: read-only pages over the run history.

Only GET (and HEAD, which Starlette answers with every GET route) is routed; any other method
gets 405, except, with `review`, the label form's POST (`vera._viewer._writes`). Every
response carries a content security policy: an HTML page its own (see
`pages.content_security_policy`), anything else one that allows nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vera._review._review import ReviewError
from vera._sqlite_file import StoreError
from vera._store._history import RunStore
from vera._types._errors import VeraError
from vera._viewer._access import TokenGuard
from vera._viewer._live import live_routes
from vera._viewer._pages import PageError, Pages, content_security_policy
from vera._viewer._writes import LabelWriter, WriteRefused, new_csrf_token, reviewer_of

_STRICT = b"default-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
_STATUS_TITLES = {404: "Not found", 405: "Method not allowed", 400: "Bad request"}


class _Guard:
    """Refuses a Host header not in `hosts` (None: any), and gives every response the
    security headers, with a policy that allows nothing where the handler set none."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str] | None) -> None:
        self.app = app
        self.hosts = None if hosts is None else {h.lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None and _host(scope) not in self.hosts:
            refusal = Response("Invalid Host header", status_code=400, media_type="text/plain")
            await refusal(scope, receive, self._secured(send))
            return
        await self.app(scope, receive, self._secured(send))

    @staticmethod
    def _secured(send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", _STRICT))
                headers += [(n, v) for n, v in _HEADERS if n not in names]
                message = {**message, "headers": headers}
            await send(message)

        return wrapped


def _host(scope: Scope) -> str:
    """The Host header's name without its port ("[::1]:8765" -> "[::1]")."""
    for name, value in scope.get("headers", []):
        if name == b"host":
            host: str = value.decode("latin-1").lower()
            if host.startswith("["):
                return host.split("]", 1)[0] + "]"
            return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return ""


def _page(html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        html, status_code=status, headers={"Content-Security-Policy": content_security_policy(html)}
    )


class _Handlers:
    """The routes' handlers over one set of pages. The pages are plain functions, run in
    Starlette's thread pool, since reading SQLite and rendering a report block."""

    def __init__(self, pages: Pages) -> None:
        self.pages = pages

    def _answer(self, render: Callable[[], str]) -> Response:
        """The page `render` makes, or the message of the `PageError` it raised."""
        try:
            return _page(render())
        except PageError as error:
            return _page(self.pages.message(error), error.status)

    def runs(self, request: Request) -> Response:
        page = request.query_params.get("page", "1")
        if not page.isdigit() or int(page) < 1:
            error = PageError(
                400, "Bad request", f"?page= takes a page number from 1, not {page!r}."
            )
            return _page(self.pages.message(error), error.status)
        return self._answer(lambda: self.pages.runs(int(page)))

    def run(self, request: Request) -> Response:
        return self._answer(lambda: self.pages.run(request.path_params["run_id"]))

    def conversation(self, request: Request) -> Response:
        params = request.path_params
        return self._answer(
            lambda: self.pages.conversation(params["run_id"], params["conversation_id"])
        )

    def review(self, request: Request) -> Response:
        query = request.query_params
        response = self._answer(
            lambda: self.pages.review(
                request.path_params["run_id"],
                query.get("queue", "calibration"),
                reviewer=reviewer_of(request),
                saved=query.get("saved", ""),
            )
        )
        # With the view's usual no-referrer, a browser posts its forms with "Origin: null";
        # same-origin lets it name this page's origin, which the write checks.
        response.headers["Referrer-Policy"] = "same-origin"
        return response

    def writes(self, writer: LabelWriter) -> Callable[[Request], Awaitable[Response]]:
        """The label form's handler: `writer`, its refusals shown as the view's pages."""

        async def handle(request: Request) -> Response:
            try:
                return await writer(request)
            except WriteRefused as refused:
                error = PageError(refused.status, "Not written", refused.message)
            except ReviewError as exc:
                error = PageError(400, "Not written", str(exc))
            except StoreError as exc:  # the history failed the write: locked, full, damaged
                error = PageError(503, "Not written", str(exc))
            except VeraError as exc:  # an unknown or ambiguous run
                error = PageError(404, "Not written", str(exc))
            return _page(self.pages.message(error), error.status)

        return handle

    def read_only(self, request: Request) -> Response:
        """The label form's address in a view started without `--review`."""
        error = PageError(
            405,
            "Method not allowed",
            "This view only reads: it was started without --review. Restart it with "
            "`vera view --review` to store labels.",
        )
        response = _page(self.pages.message(error), error.status)
        response.headers["Allow"] = "GET, HEAD"
        return response

    def compare(self, request: Request) -> Response:
        query = request.query_params
        return self._answer(lambda: self.pages.compare(query.get("a"), query.get("b")))

    def no_icon(self, request: Request) -> Response:
        # Browsers may ask any site for one; an empty answer keeps a 404 out of their console.
        return Response(status_code=204)

    async def http_error(self, request: Request, exc: Exception) -> Response:
        """Starlette's 404 and 405 as pages of the view, with their headers (Allow)."""
        assert isinstance(exc, HTTPException)
        title = _STATUS_TITLES.get(exc.status_code, "Error")
        message = {
            404: f"Nothing is at {request.url.path}; the list of runs links every page.",
            405: f"{request.method} is not answered here: this view only reads (GET); "
            "labels are taken only by `vera view --review`, on its review pages.",
        }.get(exc.status_code, str(exc.detail))
        page = self.pages.message(PageError(exc.status_code, title, message))
        response = _page(page, exc.status_code)
        response.headers.update(exc.headers or {})
        return response

    async def store_error(self, request: Request, exc: Exception) -> Response:
        """The history locked too long by a writer, or a file that is not a history."""
        error = PageError(503, "The run history cannot be read", str(exc))
        return _page(self.pages.message(error), error.status)


def build_app(
    history: Path | str,
    *,
    allowed_hosts: Sequence[str] | None = None,
    token: str | None = None,
    review: bool = False,
) -> Starlette:
    """The app over `history` (see `vera._viewer.create_app`)."""
    # With review, the writer opens (and brings the file to the current layout) first, so the
    # read-only connection the pages use sees the labels table.
    writer = RunStore(history) if review else None
    store = RunStore(history, read_only=True)
    csrf = new_csrf_token() if review else None
    view = _Handlers(Pages(store, csrf=csrf))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        store.close()
        if writer is not None:
            writer.close()

    routes = [
        Route("/", view.runs, methods=["GET"]),
        # Before the run's own route, whose path parameter would take the rest.
        Route(
            "/runs/{run_id}/conversations/{conversation_id:path}",
            view.conversation,
            methods=["GET"],
        ),
        Route("/runs/{run_id:path}", view.run, methods=["GET"]),
        Route("/review/{run_id}", view.review, methods=["GET"]),
        Route("/compare", view.compare, methods=["GET"]),
        Route("/favicon.ico", view.no_icon, methods=["GET"]),
        *live_routes(store, writable=review),
    ]
    takes = (
        view.read_only if writer is None or csrf is None else view.writes(LabelWriter(writer, csrf))
    )
    routes.append(Route("/review/{run_id}/labels", takes, methods=["POST"]))
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: view.http_error, VeraError: view.store_error},
        lifespan=lifespan,
    )
    if token is not None:
        app.add_middleware(TokenGuard, token=token)
    # Added last, so outermost: a refused Host gets nothing, not even the token's answer,
    # and every answer (a 401 too) gets the security headers.
    app.add_middleware(_Guard, hosts=allowed_hosts)
    return app
