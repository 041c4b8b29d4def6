"""The access token of `vera view`: a Starlette middleware any of VERA's web pages can reuse.

    app.add_middleware(TokenGuard, token=new_token())

A request is answered when it carries the token in one of three ways: a cookie this middleware
set, an `Authorization: Bearer TOKEN` header (scripts), or `?token=TOKEN` in the address (the
link `vera view` prints). That last one is accepted once: the answer is a redirect to the same
address without the token, setting the cookie, so the token leaves the address bar and the
browser's history at once. The cookie holds a random session id made when the view started,
never the token itself: a cookie read off a disk gives no token, and stops working when the
view restarts. Anything else gets 401 and no page. Tokens are compared in constant
time (`hmac.compare_digest`) and never written to a log or a page.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from vera._types._errors import ConfigError

TOKEN_PARAMETER = "token"
"""The query parameter that carries the token in the printed address."""
MIN_TOKEN_LENGTH = 16
"""The shortest token accepted: a short one could be guessed by anyone who can reach the port."""

_REFUSED = (
    "This page needs its access token: open the address `vera view` printed (it ends in "
    f"?{TOKEN_PARAMETER}=...), or send the header `Authorization: Bearer TOKEN`.\n"
)


def new_token() -> str:
    """A fresh token: 32 URL-safe characters from `secrets` (192 bits)."""
    return secrets.token_urlsafe(24)


def check_token(token: str) -> str:
    """`token` if it is usable as an access token, else a `ConfigError` saying what is wrong
    (never the token itself)."""
    if len(token) < MIN_TOKEN_LENGTH or not token.isprintable() or token != token.strip():
        raise ConfigError(
            f"--token must be at least {MIN_TOKEN_LENGTH} printable characters without spaces "
            "around them; leave it out to have one generated"
        )
    return token


class TokenGuard:
    """Answers only requests that carry `token` (see the module's docstring)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = check_token(token).encode()
        # Named after the token, so two views on one machine (cookies ignore the port) each
        # keep their own cookie; eight hex digits of a hash say nothing about the token.
        self.cookie = "vera_view_" + hashlib.sha256(self._token).hexdigest()[:8]
        self._session = secrets.token_urlsafe(32).encode()

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self._token)

    def _in_session(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self._session)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        bearer = request.headers.get("authorization", "")
        scheme, _, credentials = bearer.partition(" ")
        if self._in_session(request.cookies.get(self.cookie)) or (
            scheme.lower() == "bearer" and self._matches(credentials.strip())
        ):
            await self.app(scope, receive, send)
            return
        answer = self._from_address(request)
        await answer(scope, receive, send)

    def _from_address(self, request: Request) -> Response:
        """The redirect that trades a token in the address for the cookie, or the refusal."""
        if request.method not in {"GET", "HEAD"} or not self._matches(
            request.query_params.get(TOKEN_PARAMETER)
        ):
            return PlainTextResponse(
                _REFUSED, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAMETER]
        raw: bytes = request.scope.get("raw_path") or request.url.path.encode()
        # Always a path on this site: "//host/..." would send the browser elsewhere.
        target = "/" + raw.decode("latin-1").lstrip("/") + ("?" + urlencode(rest) if rest else "")
        redirect = RedirectResponse(target, status_code=303)
        redirect.set_cookie(
            self.cookie, self._session.decode(), path="/", httponly=True, samesite="strict"
        )
        return redirect
