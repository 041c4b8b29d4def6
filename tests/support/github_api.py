"""A fake of the GitHub REST endpoints VERA's comment step calls, on 127.0.0.1.

It keeps issue comments in memory and speaks as GitHub does: `GET
/repos/{o}/{r}/issues/{n}/comments` in pages (`per_page`, `page`, a `Link` header with
`rel="next"`), `POST` to that path to create, `PATCH /repos/{o}/{r}/issues/comments/{id}` to
update; every call needs `Authorization: Bearer TOKEN`, else 401 as GitHub answers. `fail_with`
makes every call answer a given status (and, to test masking, a message echoing the token).

    with FakeGitHub(token="ghs_x") as github:
        github.add_comment(7, "an earlier comment")
        ... GITHUB_API_URL=github.url ...
        assert len(github.comments(7)) == 1
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["Call", "FakeGitHub"]

_LIST = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
_ONE = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$")


@dataclass(frozen=True)
class Call:
    """One request as the fake saw it."""

    method: str
    path: str
    authorization: str | None
    body: dict[str, Any] | None


@dataclass
class _State:
    repository: str
    token: str
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    next_id: int = 1000
    fail_with: int | None = None
    next_host: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeGitHub:
    """The fake server; a context manager that starts and stops it."""

    def __init__(self, *, token: str, repository: str = "acme/rag") -> None:
        self.state = _State(repository=repository, token=token)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_comment(self, number: int, body: str) -> int:
        """A comment someone else wrote; its id."""
        with self.state.lock:
            return _create(self.state, number, body, "someone")["id"]

    def comments(self, number: int) -> list[dict[str, Any]]:
        with self.state.lock:
            return [dict(c) for c in self.state.comments.get(number, [])]

    @property
    def calls(self) -> list[Call]:
        with self.state.lock:
            return list(self.state.calls)

    def fail_with(self, status: int | None) -> None:
        self.state.fail_with = status

    def link_pages_to(self, host: str) -> None:
        """Name `host` in the `Link` header's next page, as a hostile server could."""
        self.state.next_host = host


def _create(state: _State, number: int, body: str, user: str) -> dict[str, Any]:
    state.next_id += 1
    comment = {
        "id": state.next_id,
        "body": body,
        "user": {"login": user},
        "html_url": f"https://github.example/{state.repository}/pull/{number}"
        f"#issuecomment-{state.next_id}",
    }
    state.comments.setdefault(number, []).append(comment)
    return comment


class _Handler(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        auth = self.headers.get("Authorization")
        with self.state.lock:
            self.state.calls.append(Call(method, self.path, auth, body))
            status, payload, headers = self._route(method, parts.path, parts.query, auth, body)
        self._reply(status, payload, headers)

    def _route(
        self, method: str, path: str, query: str, auth: str | None, body: dict[str, Any] | None
    ) -> tuple[int, Any, dict[str, str]]:
        state = self.state
        if state.fail_with is not None:
            # A server that echoes the credential it was given: the client must mask it.
            return state.fail_with, {"message": f"refused {auth}"}, {}
        if auth != f"Bearer {state.token}":
            return 401, {"message": "Bad credentials"}, {}
        listed, one = _LIST.match(path), _ONE.match(path)
        if listed and f"{listed[1]}/{listed[2]}" == state.repository:
            number = int(listed[3])
            if method == "GET":
                host = state.next_host or self.headers.get("Host", "")
                return _page(state, number, path, query, host)
            if method == "POST" and body and isinstance(body.get("body"), str):
                return 201, _create(state, number, body["body"], "github-actions[bot]"), {}
        if one and method == "PATCH" and body and isinstance(body.get("body"), str):
            for comments in state.comments.values():
                for comment in comments:
                    if comment["id"] == int(one[3]):
                        comment["body"] = body["body"]
                        return 200, comment, {}
        return 404, {"message": "Not Found"}, {}

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")


def _page(
    state: _State, number: int, path: str, query: str, host: str
) -> tuple[int, Any, dict[str, str]]:
    params = parse_qs(query)
    size = min(int(params.get("per_page", ["30"])[0]), 100)
    page = int(params.get("page", ["1"])[0])
    comments = state.comments.get(number, [])
    chunk = comments[(page - 1) * size : page * size]
    headers = {}
    if page * size < len(comments):
        headers["Link"] = f'<http://{host}{path}?per_page={size}&page={page + 1}>; rel="next"'
    return 200, chunk, headers
