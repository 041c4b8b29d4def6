"""`vera view`'s review page and its one write, through Starlette's test client over a real
SQLite history: read-only without `--review`, and with it a label is taken only from the
view's own page (same origin) with the session's CSRF token; a refused write stores nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.support.view_history import stored_run

from vera import RunStore, create_app
from vera._review._labels import stored_labels

WHITEBOX = "the labels as stored rows (every label kept, not only the newest)"

ORIGIN = "http://127.0.0.1"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("review") / "runs.sqlite"
    return path, stored_run(path, "example", "offline:learned")


@pytest.fixture
def history(made: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    copy = tmp_path / "runs.sqlite"
    copy.write_bytes(made[0].read_bytes())
    return copy, made[1]


def _client(path: Path, *, review: bool) -> TestClient:
    app = create_app(path, allowed_hosts=["127.0.0.1"], review=review)
    return TestClient(app, base_url=ORIGIN)


def _labels(path: Path, run_id: str) -> int:
    store = RunStore(path, read_only=True)
    try:
        return len(stored_labels(store, run_id))
    finally:
        store.close()


def _form(page: str) -> dict[str, str]:
    """The first queue item's form fields, as the page wrote them."""
    first = page.split("</form>")[0]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', first))
    assert {"csrf", "queue", "sample"} <= set(fields)
    return fields


def test_without_review_the_page_shows_the_queue_and_takes_nothing(
    history: tuple[Path, str],
) -> None:
    path, run_id = history
    client = _client(path, review=False)
    page = client.get(f"/review/{run_id}")
    assert page.status_code == 200
    assert 'id="read-only"' in page.text and "Save label" not in page.text
    assert 'name="csrf"' not in page.text  # no session token to post with
    posted = client.post(
        f"/review/{run_id}/labels",
        data={"sample": "ex-01", "label": "faithful", "reviewer": "ana", "queue": "triage"},
        headers={"Origin": ORIGIN},
    )
    assert posted.status_code == 405 and "started without --review" in posted.text
    assert _labels(path, run_id) == 0


def test_with_review_a_label_from_the_page_is_stored_and_shown(history: tuple[Path, str]) -> None:
    path, run_id = history
    with _client(path, review=True) as client:
        page = client.get(f"/review/{run_id}?queue=calibration").text
        fields = _form(page)
        posted = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "label": "unfaithful", "reviewer": "ana", "note": "cap is wrong"},
            headers={"Origin": ORIGIN},
            follow_redirects=False,
        )
        assert posted.status_code == 303, posted.text
        assert posted.headers["location"].startswith(f"/review/{run_id}?queue=calibration")
        shown = client.get(posted.headers["location"]).text
    assert _labels(path, run_id) == 1
    assert "Calibration against 1 human labels" in shown
    assert f'<tr data-sample="{fields["sample"]}">' in shown and "cap is wrong" in shown
    assert 'value="ana"' in shown  # the reviewer's name is filled in for the next one


@pytest.mark.slow
@pytest.mark.parametrize(
    ("headers", "token", "status", "says"),
    [
        ({"Origin": "http://evil.example"}, None, 403, "not from this view"),
        ({}, None, 403, "no Origin header"),
        ({"Origin": ORIGIN}, "forged-token", 403, "CSRF token"),
        ({"Origin": ORIGIN}, "", 403, "CSRF token"),
        ({"Origin": ORIGIN, "Content-Type": "application/json"}, None, 415, "form"),
    ],
)
def test_a_write_from_elsewhere_or_without_the_token_is_refused_and_stores_nothing(
    history: tuple[Path, str], headers: dict[str, str], token: str | None, status: int, says: str
) -> None:
    path, run_id = history
    with _client(path, review=True) as client:
        fields = _form(client.get(f"/review/{run_id}").text)
        if token is not None:
            fields["csrf"] = token
        data = {**fields, "label": "faithful", "reviewer": "mallory"}
        if headers.get("Content-Type") == "application/json":
            posted = client.post(f"/review/{run_id}/labels", json=data, headers=headers)
        else:
            posted = client.post(f"/review/{run_id}/labels", data=data, headers=headers)
    assert posted.status_code == status, posted.text
    assert says in posted.text
    assert _labels(path, run_id) == 0


def test_another_session_token_is_refused(history: tuple[Path, str]) -> None:
    """The token is per session: a page of an earlier `vera view --review` cannot post."""
    path, run_id = history
    with _client(path, review=True) as first:
        old = _form(first.get(f"/review/{run_id}").text)
    with _client(path, review=True) as second:
        posted = second.post(
            f"/review/{run_id}/labels",
            data={**old, "label": "faithful", "reviewer": "ana"},
            headers={"Origin": ORIGIN},
        )
    assert posted.status_code == 403 and _labels(path, run_id) == 0


def test_a_label_that_names_nothing_valid_is_refused_with_what_to_fix(
    history: tuple[Path, str],
) -> None:
    path, run_id = history
    with _client(path, review=True) as client:
        fields = _form(client.get(f"/review/{run_id}").text)
        bad_label = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "label": "maybe", "reviewer": "ana"},
            headers={"Origin": ORIGIN},
        )
        no_claim = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "claim-999": "CONTRADICTED", "reviewer": "ana"},
            headers={"Origin": ORIGIN},
        )
        too_big = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "label": "faithful", "reviewer": "ana", "note": "x" * 70000},
            headers={"Origin": ORIGIN},
        )
    assert bad_label.status_code == 400 and "faithful or unfaithful" in bad_label.text
    assert no_claim.status_code == 400 and "which the sample lacks" in no_claim.text
    assert too_big.status_code == 413
    assert _labels(path, run_id) == 0


def test_the_run_page_shows_the_calibration_block_from_stored_labels(
    history: tuple[Path, str],
) -> None:
    path, run_id = history
    with _client(path, review=True) as client:
        for _ in range(2):
            fields = _form(client.get(f"/review/{run_id}").text)
            client.post(
                f"/review/{run_id}/labels",
                data={**fields, "label": "faithful", "reviewer": "ana"},
                headers={"Origin": ORIGIN},
            )
        report = client.get(f"/runs/{run_id}").text
    assert "Calibration against 2 human labels" in report
    assert f'href="/review/{run_id}?queue=calibration"' in report


def test_with_an_access_token_a_write_without_it_is_refused(history: tuple[Path, str]) -> None:
    """Off loopback the view asks for its token (`vera view --host`): a write is no exception,
    even one with the right origin and CSRF token."""
    path, run_id = history
    token = "t" * 24
    app = create_app(path, allowed_hosts=["127.0.0.1"], review=True, token=token)
    with TestClient(app, base_url=ORIGIN) as client:
        fields = _form(client.get(f"/review/{run_id}?token={token}").text)  # sets the cookie
        client.cookies.clear()
        posted = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "label": "faithful", "reviewer": "ana"},
            headers={"Origin": ORIGIN},
        )
        assert posted.status_code == 401 and _labels(path, run_id) == 0
        allowed = client.post(
            f"/review/{run_id}/labels",
            data={**fields, "label": "faithful", "reviewer": "ana"},
            headers={"Origin": ORIGIN, "Authorization": f"Bearer {token}"},
        )
    assert allowed.status_code == 200, allowed.text  # the redirect, followed, with the token
    assert _labels(path, run_id) == 1


def test_a_label_for_an_unknown_run_is_refused(history: tuple[Path, str]) -> None:
    path, run_id = history
    with _client(path, review=True) as client:
        fields = _form(client.get(f"/review/{run_id}").text)
        posted = client.post(
            "/review/no-such-run/labels",
            data={**fields, "label": "faithful", "reviewer": "ana"},
            headers={"Origin": ORIGIN},
        )
    assert posted.status_code == 404 and "no run &#39;no-such-run&#39;" in posted.text
    assert _labels(path, run_id) == 0
