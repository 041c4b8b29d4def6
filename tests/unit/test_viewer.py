"""`vera view`'s app over a real run history: its pages, statuses, policies, and that it never
changes the history file.

The history holds four runs made through the library, in this order: the bundled `technical`
dataset answered by the naive-rag baseline; `example` judged by `offline:learned` at min
support 0 (A), then by `offline` (B), whose verdicts differ; and a run of `example` left after
three samples, as a killed process leaves one: "running".
"""

from __future__ import annotations

import ast
import base64
import hashlib
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from markupsafe import escape
from starlette.testclient import TestClient
from tests.support.view_history import (
    METRICS,
    History,
    copy_runs,
    damage,
    make_history,
    stored_run,
)

from vera import (
    ConfigError,
    DamagedRunError,
    MissingStoreError,
    RunStore,
    StoreError,
    create_app,
    serve,
)
from vera._results import compare_reports, significant, verdict_changes
from vera._viewer import INSTALL, check_token, compare_url, plan_access, run_url, url_for
from vera._viewer import _pages as pages
from vera.render import write_stored_report
from vera.render._outputs import stored_report_html

WHITEBOX = "the page model behind the viewer's routes"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def client(history: History) -> TestClient:
    return TestClient(create_app(history.path))


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _policy(response: httpx.Response) -> dict[str, str]:
    header = response.headers["content-security-policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


def _inline(page: str, tag: str) -> list[str]:
    return re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.S)


def _cells(page: str, row_attribute: str) -> list[str]:
    """The text of each cell of the table row marked `row_attribute`."""
    found = re.search(rf"<tr {row_attribute}[^>]*>(.*?)</tr>", page, flags=re.S)
    assert found, row_attribute
    cells = re.findall(r"<td[^>]*>(.*?)</td>", found.group(1), flags=re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in cells]


def every_page(history: History) -> dict[str, int]:
    """Each address the view answers, with the status it must answer with."""
    return {
        "/": 200,
        run_url(history.a): 200,
        run_url(history.b): 200,
        run_url(history.technical): 200,
        run_url(history.running): 409,
        run_url("no-such-run"): 404,
        f"/compare?a={history.a}&b={history.b}": 200,
        f"/compare?a={history.technical}&b={history.b}": 200,
        f"/compare?a={history.a}&b={history.running}": 409,
        f"/compare?a={history.a}&b=no-such-run": 404,
        f"/compare?a={history.a}": 400,
        "/nothing/here": 404,
    }


def test_every_page_answers_with_its_status_and_a_policy_that_allows_only_itself(
    client: TestClient, history: History
) -> None:
    for url, status in every_page(history).items():
        response = client.get(url)
        assert response.status_code == status, url
        assert response.headers["content-type"].startswith("text/html"), url
        policy = _policy(response)
        assert policy["default-src"] == "'none'", url
        assert policy["form-action"] == "'self'" and policy["img-src"] == "'none'", url
        styles = _inline(response.text, "style")
        assert styles and {_hash(s) for s in styles} == set(policy["style-src"].split()), url
        scripts = _inline(response.text, "script")
        if url.startswith("/runs/") and status == 200:
            assert len(scripts) == 1 and policy["script-src"] == _hash(scripts[0]), url
        else:
            assert scripts == [] and policy["script-src"] == "'none'", url
        assert response.headers["x-content-type-options"] == "nosniff"


def test_only_get_and_head_are_answered(client: TestClient, history: History) -> None:
    head = client.head("/")
    assert head.status_code == 200 and head.content == b""
    assert "default-src 'none'" in head.headers["content-security-policy"]
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for url in ("/", run_url(history.a), f"/compare?a={history.a}&b={history.b}"):
            response = client.request(method, url)
            assert response.status_code == 405, (method, url)
            assert set(response.headers["allow"].split(", ")) == {"GET", "HEAD"}
            assert "default-src 'none'" in response.headers["content-security-policy"]
            assert "this view only reads" in response.text


@pytest.mark.slow
def test_using_every_page_leaves_the_history_file_as_it_was(
    history: History, tmp_path: Path
) -> None:
    # A copy in a folder of its own, which no other test's app has open.
    path = tmp_path / "runs.sqlite"
    shutil.copy2(history.path, path)
    before = path.read_bytes(), path.stat().st_mtime_ns
    client = TestClient(create_app(path))
    with client:  # the app's lifespan: its store is opened, used and closed
        for url in every_page(history):
            assert client.get(url).status_code < 500
            client.head(url)
            client.post(url)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    # SQLite gives a reader of a WAL file its shared-memory index and an empty log beside it;
    # nothing was written to the log.
    wal = tmp_path / "runs.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_missing_history_fails_at_create_app_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "runs.sqlite"
    with pytest.raises(MissingStoreError, match=re.escape(str(missing))):
        create_app(missing)
    assert not missing.parent.exists()


def test_without_starlette_create_app_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, history: History
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # an import of it now fails
    with pytest.raises(ConfigError) as raised:
        create_app(history.path)
    assert INSTALL in str(raised.value)
    assert "pip install 'vera-eval[view]'" in INSTALL and "pip install -e '.[view]'" in INSTALL


def _imported_after(statement: str) -> list[str]:
    """The modules of the viewer, Starlette and uvicorn that `statement` imports."""
    code = (
        f"import sys; {statement}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'starlette', 'uvicorn'} "
        "or m.startswith('vera._viewer')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return list(ast.literal_eval(found.stdout.strip()))


@pytest.mark.slow
def test_import_vera_imports_neither_the_viewer_nor_starlette() -> None:
    assert _imported_after("import vera") == []
    # The CLI may name the viewer, but Starlette and uvicorn load only when a view starts.
    assert [m for m in _imported_after("import vera.cli") if "vera" not in m] == []
    assert "starlette" not in _imported_after("import vera._viewer")
    assert "starlette" in _imported_after("import vera._viewer._app")  # what the check can see


def test_the_list_shows_every_run_with_its_means_and_each_datasets_trend(
    client: TestClient, history: History
) -> None:
    page = client.get("/").text
    rows = re.findall(r'<tr data-run="([^"]+)" data-status="([^"]+)"', page)
    assert rows == [
        (history.running, "running"),
        (history.b, "finished"),
        (history.a, "finished"),
        (history.technical, "finished"),
    ]
    store = RunStore(history.path, read_only=True)
    for run_id in (history.a, history.b, history.technical):
        assert f'<a href="/runs/{run_id}">{run_id}</a>' in page
        report = store.report(run_id)
        cells = _cells(page, f'data-run="{run_id}"')
        assert cells[2:5] == [report.dataset, report.judge, report.pipeline or "—"]
        assert cells[6] == f"{report.counts['scored']} of {report.counts['total']}"
        for name, summary in report.metric_summary.items():
            assert summary.mean is not None
            meets = (
                summary.mean >= summary.threshold
                if summary.higher_is_better
                else summary.mean <= summary.threshold
            )
            mark = f'<span class="{"ok" if meets else "bad"}" data-metric="{name}"'
            assert mark in page.split(f'data-run="{run_id}"')[1].split("</tr>")[0], (run_id, name)
            assert f"{name} {summary.mean:.3f} {'✓' if meets else '✗'}" in cells[8]
        # The answer verdicts first: how many answers have an unsupported claim.
        answers = report.answers
        assert answers is not None
        mark = "✗" if answers.unfaithful else "✓"
        assert cells[8].startswith(
            f"unfaithful answers {answers.unfaithful} of {answers.judged} {mark}"
        ), cells[8]
    running = _cells(page, f'data-run="{history.running}"')
    assert f'href="/runs/{history.running}"' not in page
    assert running[5:7] == ["running", "3 done"]
    assert running[8].startswith("Not finished: 3 samples done")
    assert f"vera eval --resume {history.running}" in running[8]
    example = page.split('data-dataset="example"')[1].split("</section>")[0]
    assert example.count("<svg") == len(METRICS)
    technical = page.split('data-dataset="technical-docs"')[1].split("</section>")[0]
    assert "<svg" not in technical and "the trend starts with the second" in technical


def test_the_compare_form_picks_the_newest_run_and_the_one_before_of_its_dataset(
    client: TestClient, history: History
) -> None:
    page = client.get("/").text
    form = page.split('<form class="pick" method="get" action="/compare"')[1].split("</form>")[0]
    chosen = {
        name: re.search(r'value="([^"]+)" selected', block).group(1)  # type: ignore[union-attr]
        for name, block in re.findall(r'<select name="(\w)">(.*?)</select>', form, re.S)
    }
    assert chosen == {"a": history.a, "b": history.b}
    assert history.running not in form  # an unfinished run cannot be compared


def test_compare_shows_each_metric_and_the_changed_samples_worst_first(
    client: TestClient, history: History
) -> None:
    store = RunStore(history.path, read_only=True)
    before, after = store.report(history.a), store.report(history.b)
    page = client.get(f"/compare?a={history.a}&b={history.b}").text
    compared = compare_reports(after, before)
    assert set(compared) == set(METRICS)
    for name, c in compared.items():
        cells = _cells(page, f'data-metric="{name}"')
        assert cells[0] == name
        assert cells[1:4] == [
            f"{c.baseline_mean:.3f}",
            f"{c.system_mean:.3f}",
            f"{c.difference:+.3f} worse",  # both metrics are significantly worse under offline
        ]
        assert significant(c)
        assert cells[4] == f"{c.ci_low:+.3f} \N{EN DASH} {c.ci_high:+.3f}"
        assert cells[7] == str(c.paired_samples) == "28"
        assert 'class="num bad" data-role="difference"' in page.split(f'data-metric="{name}"')[1]
    assert "28 paired samples" in page
    changes = verdict_changes(before.samples, after.samples)
    shown = re.findall(r'<article class="change (\w+)" data-sample-id="([^"]+)"', page)
    assert [sample for _, sample in shown] == [c.id for c in changes] and len(changes) > 3
    assert [direction for direction, _ in shown] == [c.direction for c in changes]
    first = changes[0]
    assert (first.before.label, first.after.label[:4]) == ("pass", "fail")
    assert f'href="/runs/{history.a}#id={first.id}"' in page
    assert f'href="/runs/{history.b}#id={first.id}"' in page
    block = page.split(f'data-sample-id="{first.id}"')[1].split("</article>")[0]
    for claim in first.claims:
        assert html.escape(claim.text, quote=False) in block
    assert f"{len(changes)} samples changed" in page


def test_compare_lists_the_worst_changes_and_says_how_many_more_there_are(
    client: TestClient, history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "CHANGES_SHOWN", 2)
    store = RunStore(history.path, read_only=True)
    changes = verdict_changes(store.report(history.a).samples, store.report(history.b).samples)
    page = client.get(f"/compare?a={history.a}&b={history.b}").text
    shown = re.findall(r'<article class="change \w+" data-sample-id="([^"]+)"', page)
    assert shown == [c.id for c in changes[:2]]
    assert f"{len(changes) - 2} more changed samples are not listed here" in page


def test_compare_of_runs_of_different_datasets_says_their_samples_do_not_pair(
    client: TestClient, history: History
) -> None:
    page = client.get(f"/compare?a={history.technical}&b={history.b}").text
    assert 'id="no-pairs"' in page and "their samples do not pair" in page
    assert 'id="changes"' not in page
    cells = _cells(page, 'data-metric="faithfulness"')
    store = RunStore(history.path, read_only=True)
    means = [
        store.report(r).metric_summary["faithfulness"].mean for r in (history.technical, history.b)
    ]
    assert cells[1:3] == [f"{m:.3f}" for m in means]
    assert cells[3:7] == ["—"] * 4


HOSTILE = '<script>window.pwned = 1</script>"><img src=x onerror=alert(1)>'


def test_text_from_the_dataset_is_shown_as_text(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    data = tmp_path / "hostile.jsonl"
    fact = f"The refund window is 30 days {HOSTILE}."
    row = {"id": "q-" + HOSTILE, "query": "q", "contexts": [fact], "category": HOSTILE}
    runs = []
    for response in (fact, f"The refund window is 90 days {HOSTILE}."):
        data.write_text(json.dumps({**row, "response": response}) + "\n", encoding="utf-8")
        runs.append(stored_run(path, str(data), "offline"))
    client = TestClient(create_app(path))
    for url in ("/", f"/compare?a={runs[0]}&b={runs[1]}", run_url(runs[1])):
        page = client.get(url).text
        assert "<script>window.pwned" not in page and "<img src=x" not in page, url
    compared = client.get(f"/compare?a={runs[0]}&b={runs[1]}").text
    assert str(escape("q-" + HOSTILE)) in compared  # the changed sample, by its id
    assert f'href="/runs/{runs[1]}#id={quote("q-" + HOSTILE, safe="")}"' in compared


def test_a_runs_page_is_the_report_vera_report_writes_with_links(
    client: TestClient, history: History, tmp_path: Path
) -> None:
    store = RunStore(history.path, read_only=True)
    page = client.get(run_url(history.b)).text
    links = [
        ("All runs", "/"),
        ("Review: label samples", f"/review/{history.b}?queue=calibration"),
        (f"Compare with the previous run ({history.a})", f"/compare?a={history.a}&b={history.b}"),
    ]
    assert page == stored_report_html(store, history.b, links=links)  # no labels: unchanged
    nav = page.split('<nav class="app"')[1].split("</nav>")[0]
    assert '<a href="/">All runs</a>' in nav
    assert f'<a href="/compare?a={history.a}&amp;b={history.b}">' in nav
    # `vera report` writes the same page, less the links.
    write_stored_report(store, history.b, tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == stored_report_html(
        store, history.b
    )
    # The first run of a dataset has no previous one to compare with.
    first = client.get(run_url(history.a)).text.split('<nav class="app"')[1].split("</nav>")[0]
    assert "/compare" not in first


def test_an_unknown_or_unfinished_run_says_so(client: TestClient, history: History) -> None:
    unknown = client.get(run_url("no-such-run"))
    assert unknown.status_code == 404 and "no run &#39;no-such-run&#39;" in unknown.text
    running = client.get(run_url(history.running))
    assert running.status_code == 409
    assert f"Run {history.running} has not finished" in running.text
    assert f"vera eval --resume {history.running}" in running.text
    missing = client.get("/compare?b=" + history.b)
    assert missing.status_code == 400 and "Comparing needs two runs" in missing.text


def test_a_history_that_cannot_be_read_gives_a_page_that_says_so(
    history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(history.path))

    def locked(self: RunStore, *args: object, **kwargs: object) -> list[object]:
        raise StoreError(f"the run history {history.path} stayed locked by another process")

    monkeypatch.setattr(RunStore, "page", locked)
    response = client.get("/")
    assert response.status_code == 503
    assert "stayed locked by another process" in response.text
    assert _policy(response)["default-src"] == "'none'"


def test_a_host_not_allowed_is_refused(history: History) -> None:
    app = create_app(history.path, allowed_hosts=["127.0.0.1", "[::1]"])
    assert TestClient(app, base_url="http://127.0.0.1:8765").get("/").status_code == 200
    assert TestClient(app, base_url="http://[::1]:8765").get("/").status_code == 200
    refused = TestClient(app, base_url="http://rebound.example:8765").get("/")
    assert refused.status_code == 400 and "VERA" not in refused.text
    assert "default-src 'none'" in refused.headers["content-security-policy"]


RECORD_URL = "import sys, pathlib; pathlib.Path(sys.argv[2]).write_text(sys.argv[1])"


@pytest.mark.slow
def test_serve_prints_its_url_opens_the_browser_and_answers_loopback_only(
    history: History, tmp_path: Path
) -> None:
    opened = tmp_path / "opened.txt"
    script = tmp_path / "browser.py"
    script.write_text(RECORD_URL)
    env = {
        **os.environ,
        "BROWSER": f"{sys.executable} {script} %s {opened}",
        "PYTHONUNBUFFERED": "1",
    }
    code = f"from vera._viewer import serve; serve({str(history.path)!r}, port=0)"
    server = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.match(r"VERA view: (http://127\.0\.0\.1:(\d+)/) ", line)
        assert found, line
        url, port = found.group(1), found.group(2)
        deadline = time.monotonic() + 20
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.read_text() == url
        assert httpx.get(url).status_code == 200
        rebound = httpx.get(url, headers={"Host": f"rebound.example:{port}"})
        assert rebound.status_code == 400
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_serve_on_a_port_in_use_says_so(history: History) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}: .*--port"):
            serve(history.path, port=port, open_browser=False)


# A long history: paged, bounded, and never taken down by one damaged row


@pytest.fixture(scope="module")
def long_history(
    history: History, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str]]:
    """The four runs and 120 older copies of run B over three datasets: 124 runs, 3 pages."""
    path = tmp_path_factory.mktemp("long") / "runs.sqlite"
    shutil.copy2(history.path, path)
    return path, copy_runs(path, history.b, 120, datasets=3)


def _run_ids(page: str) -> list[str]:
    return re.findall(r'<tr data-run="([^"]+)"', page)


def test_the_list_is_paged_newest_first_with_links_between_pages(
    history: History, long_history: tuple[Path, list[str]]
) -> None:
    path, copies = long_history
    client = TestClient(create_app(path))
    first, second, third = (client.get(f"/?page={n}") for n in (1, 2, 3))
    assert [r.status_code for r in (first, second, third)] == [200, 200, 200]
    assert client.get("/").text == first.text
    newest_first = [history.running, history.b, history.a, history.technical, *copies]
    assert _run_ids(first.text) == newest_first[:50]
    assert _run_ids(second.text) == newest_first[50:100]
    assert _run_ids(third.text) == newest_first[100:]
    assert "124 runs, newest first; page 2 of 3, 50 a page" in second.text
    assert (
        'rel="prev" href="/?page=1"' in second.text and 'rel="next" href="/?page=3"' in second.text
    )
    assert 'rel="prev"' not in first.text and 'rel="next"' not in third.text
    past = client.get("/?page=4")
    assert past.status_code == 404 and "page 4 is past the last" in past.text
    for bad in ("0", "x", "-1", "2.5"):
        refused = client.get(f"/?page={bad}")
        assert refused.status_code == 400 and "page number from 1" in refused.text, bad


def test_a_page_draws_the_trends_of_its_datasets_from_their_last_runs_only(
    history: History, long_history: tuple[Path, list[str]]
) -> None:
    path, _ = long_history
    page = TestClient(create_app(path)).get("/?page=2").text
    trends = re.findall(r'<section class="dataset-trend" data-dataset="([^"]+)"', page)
    assert sorted(trends) == ["example", "example-1", "example-2"]
    for dataset in trends:
        section = page.split(f'data-dataset="{dataset}"')[1].split("</section>")[0]
        assert "its last 20 finished runs" in section
    # The compare form offers this page's runs and the newest pair, never the whole history.
    form = page.split('<form class="pick"')[1].split("</form>")[0]
    offered = set(re.findall(r'<option value="([^"]+)"', form))
    assert offered == {*_run_ids(page), history.a, history.b}


def test_the_parsed_reports_kept_between_pages_are_bounded(
    long_history: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "AGGREGATES_KEPT", 30)
    path, _ = long_history
    store = RunStore(path, read_only=True)
    view = pages.Pages(store)
    for number in (1, 2, 3, 1):
        assert "<table" in view.runs(number)
        assert len(view._aggregates) <= 30


def test_a_damaged_row_is_named_and_skipped_never_taking_the_list_down(
    history: History, tmp_path: Path
) -> None:
    path = tmp_path / "runs.sqlite"
    shutil.copy2(history.path, path)
    damage(path, history.a, "report", "{not json")
    damage(path, history.technical, "options", "[1, 2")
    store = RunStore(path, read_only=True)
    with pytest.warns(UserWarning) as caught:
        listed = [r.id for r in store.list()]
    assert listed == [history.running, history.b]
    messages = [str(w.message) for w in caught]  # newest first, as listed
    assert f"run {history.a} in {path} is damaged (its stored report: not JSON)" in messages[0]
    assert f"run {history.technical} in {path} is damaged (its stored options" in messages[1]
    records, damaged = store.select()
    assert [r.id for r in records] == listed and {d.id for d in damaged} == {
        history.a,
        history.technical,
    }
    with pytest.raises(DamagedRunError, match=f"run {history.a} .* is damaged"):
        store.get(history.a)
    page = TestClient(create_app(path)).get("/")
    assert page.status_code == 200
    assert _run_ids(page.text) == listed
    notice = page.text.split('id="damaged"')[1].split("</div>")[0]
    assert "2 runs are damaged" in notice
    assert (
        f'data-damaged="{history.a}"' in notice and f'data-damaged="{history.technical}"' in notice
    )


def test_a_stored_report_that_is_json_but_not_a_report_is_damaged_too(
    history: History, tmp_path: Path
) -> None:
    path = tmp_path / "runs.sqlite"
    shutil.copy2(history.path, path)
    damage(path, history.b, "report", '{"metrics": {}, "counts": "many"}')
    store = RunStore(path, read_only=True)
    with pytest.raises(
        DamagedRunError, match=f"run {history.b} .*its stored report: dataset: Field required"
    ):
        store.report(history.b)
    client = TestClient(create_app(path))
    page = client.get("/")
    assert page.status_code == 200 and history.b not in _run_ids(page.text)
    assert f'data-damaged="{history.b}"' in page.text
    shown = client.get(run_url(history.b))
    assert shown.status_code == 409 and "is damaged" in shown.text
    compared = client.get(compare_url(history.a, history.b))
    assert compared.status_code == 409 and f"run {history.b}" in compared.text
    assert "is damaged" in compared.text


# Off loopback: the Host check and the access token

TOKEN = "a-test-token-0123456789"


def test_a_token_is_asked_for_by_every_page_and_traded_once_for_a_cookie(
    history: History,
) -> None:
    app = create_app(history.path, allowed_hosts=["view.test"], token=TOKEN)
    client = TestClient(app, base_url="http://view.test", follow_redirects=False)
    refused = client.get("/")
    assert refused.status_code == 401 and history.a not in refused.text
    assert "?token=" in refused.text and TOKEN not in refused.text
    assert "default-src 'none'" in refused.headers["content-security-policy"]
    assert client.get("/?token=wrong-token-0123456789").status_code == 401
    compare = f"/compare?a={history.a}&b={history.b}"
    traded = client.get(f"{compare}&token={TOKEN}")
    assert traded.status_code == 303
    assert traded.headers["location"] == compare.replace(history.a, quote(history.a))
    cookie = traded.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert client.get(compare).status_code == 200  # the cookie, from now on
    fresh = TestClient(app, base_url="http://view.test")
    assert fresh.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert fresh.get("/", headers={"Authorization": "Bearer nope"}).status_code == 401
    rebound = TestClient(app, base_url="http://rebound.example").get(f"/?token={TOKEN}")
    assert rebound.status_code == 400  # the Host check comes first


def test_a_weak_token_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError, match="at least 16") as raised:
        check_token("short-secret")
    assert "short-secret" not in str(raised.value)


def test_off_loopback_the_host_check_stays_on_and_a_token_is_generated() -> None:
    loopback = plan_access("127.0.0.1")
    assert loopback.token is None and not loopback.exposed
    assert set(loopback.hosts) == {"127.0.0.1", "localhost", "[::1]"}
    assert plan_access("127.0.0.1", token=TOKEN).token == TOKEN
    with pytest.raises(ConfigError, match="--allow-host NAME"):
        plan_access("0.0.0.0")
    with pytest.raises(ConfigError, match="--allow-host NAME"):
        plan_access("::")
    wildcard = plan_access("0.0.0.0", ["Box.example", "10.0.0.5"])
    assert wildcard.exposed and wildcard.hosts == ("box.example", "10.0.0.5")
    assert wildcard.url_host == "box.example"
    assert wildcard.token is not None and len(wildcard.token) >= 32
    assert plan_access("0.0.0.0", ["box.example"]).token != wildcard.token
    lan = plan_access("192.168.1.20", token=TOKEN)
    assert lan.hosts == ("192.168.1.20",) and lan.token == TOKEN and lan.url_host == "192.168.1.20"
    assert plan_access("fd00::1", ["box"]).hosts == ("[fd00::1]", "box")
    assert url_for("box.example", 8765, TOKEN) == f"http://box.example:8765/?token={TOKEN}"
    assert url_for("fd00::1", 80) == "http://[fd00::1]:80/"


def test_serve_off_loopback_without_a_name_to_answer_refuses_before_listening(
    history: History,
) -> None:
    with pytest.raises(ConfigError, match="--allow-host NAME"):
        serve(history.path, host="0.0.0.0", port=0, open_browser=False)
    with pytest.raises(ConfigError, match="--token must be at least 16"):
        serve(
            history.path,
            host="0.0.0.0",
            port=0,
            open_browser=False,
            token="short",
            allow_hosts=["box"],
        )
