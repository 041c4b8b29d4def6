"""The one write `vera view --review` answers: `POST /review/RUN/labels`, a person's labels of
one sample.

A write is answered only when all of these hold, else 403 (or 413/415) and nothing is written:
- it comes from the view's own page: the browser says so (`Sec-Fetch-Site: same-origin`, a
  header no page can set), or its `Origin` header is this view's own address (what a script
  sends), so another site open in the same browser cannot post;
- it carries the session's CSRF token, a secret made when the view starts and written only into
  its own forms (compared in constant time);
- off loopback, the access token too (`vera._viewer._access.TokenGuard`, outside this handler);
- it is a small url-encoded form (at most `MAX_FORM_BYTES`).
Then `vera._review._review.add_label` checks what the labels say and stores them as one INSERT, so a
refused or failed write leaves the history as it was.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from vera._review._review import add_label
from vera._store._history import RunStore
from vera._viewer._review import review_url

MAX_FORM_BYTES = 64 * 1024
"""The largest form taken: a sample's labels and a note are a few kilobytes."""
REVIEWER_COOKIE = "vera_reviewer"
"""Remembers the reviewer's name between forms (it is not a secret)."""
_FORM = "application/x-www-form-urlencoded"


def new_csrf_token() -> str:
    """A fresh session's CSRF token: 256 bits from `secrets`."""
    return secrets.token_urlsafe(32)


class WriteRefused(Exception):
    """A write that is not answered: the status, and what to tell the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def reviewer_of(request: Request) -> str:
    """The reviewer's name the last form of this browser gave, to fill in the next."""
    return unquote(request.cookies.get(REVIEWER_COOKIE, ""))[:80]


def _origin(request: Request) -> str:
    host = request.headers.get("host", "")
    return f"{request.url.scheme}://{host}".lower()


def check_same_origin(request: Request) -> None:
    """`WriteRefused` unless the request comes from a page of this view."""
    origin = request.headers.get("origin")
    if request.headers.get("sec-fetch-site") == "same-origin":
        return  # set by the browser itself, which no page can forge
    if origin is not None:
        if origin.lower() != _origin(request):
            raise WriteRefused(
                403,
                f"This write came from {origin[:100]}, not from this view's own page "
                f"({_origin(request)}): labels are taken only from the review page itself.",
            )
        return
    if request.headers.get("sec-fetch-site") != "same-origin":
        raise WriteRefused(
            403,
            "This write carries no Origin header: labels are taken only from the review page "
            "itself (a script must send Origin: the view's address).",
        )


async def _form(request: Request) -> dict[str, str]:
    """The url-encoded body, read up to `MAX_FORM_BYTES`: the last value of each field."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != _FORM:
        raise WriteRefused(415, f"A label is sent as a form ({_FORM}).")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise WriteRefused(413, f"A label's form is at most {MAX_FORM_BYTES} bytes.")
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=500)
    except (UnicodeDecodeError, ValueError):
        why = "The form could not be read (not UTF-8, or too many fields)."
        raise WriteRefused(400, why) from None
    return dict(pairs)


def _claims(form: Mapping[str, str], texts: list[str]) -> dict[str, str]:
    """Claim index fields ("claim-3": "CONTRADICTED") as claim text -> verdict; blanks skipped."""
    found = {}
    for key, value in form.items():
        if not key.startswith("claim-") or not value:
            continue
        index = key.removeprefix("claim-")
        if not index.isdigit() or int(index) >= len(texts):
            raise WriteRefused(400, f"The form names claim {index[:10]!r}, which the sample lacks.")
        found[texts[int(index)]] = value
    return found


class LabelWriter:
    """Answers the label form over the writable history `store`, for one view session."""

    def __init__(self, store: RunStore, csrf: str) -> None:
        self.store = store
        self._csrf = csrf.encode()

    def _check_token(self, form: Mapping[str, str]) -> None:
        given = form.get("csrf", "").encode()
        if not hmac.compare_digest(given, self._csrf):
            raise WriteRefused(
                403,
                "This form's CSRF token is missing or not this session's (the view was "
                "restarted?): reload the review page and label again.",
            )

    async def __call__(self, request: Request) -> Response:
        """`WriteRefused` (and `vera._review._review.ReviewError`) are the app's to show."""
        check_same_origin(request)
        form = await _form(request)
        self._check_token(form)
        run_id = request.path_params["run_id"]
        sample_id = form.get("sample", "")
        queue = form.get("queue", "")
        reviewer = form.get("reviewer", "")
        stored = await run_in_threadpool(self._store, run_id, sample_id, form)
        target = review_url(stored, queue, saved=sample_id) + "#saved"
        redirect = RedirectResponse(target, status_code=303)
        redirect.set_cookie(
            REVIEWER_COOKIE, quote(reviewer.strip(), safe=""), httponly=True, samesite="strict"
        )
        return redirect

    def _store(self, run_id: str, sample_id: str, form: Mapping[str, str]) -> str:
        """Check and store the form's labels; the run's full id."""
        record = self.store.get(run_id)
        result = self.store.result(record.id, sample_id)
        texts = [claim.text for claim in result.claims] if result is not None else []
        add_label(
            self.store,
            record.id,
            sample_id,
            form.get("label") or None,
            reviewer=form.get("reviewer", ""),
            queue=form.get("queue", ""),
            claims=_claims(form, texts),
            note=form.get("note", ""),
        )
        return record.id
