"""`vera view` and the commands that read the run history, against what issue 27 found: a
server started off loopback, a long history, a damaged row, and a history on read-only media.

Real processes throughout: `python -m vera` as a user runs it, its uvicorn server reached over
HTTP on 127.0.0.1, and real SQLite files edited or made read-only as a disk or a person would.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.extras import without
from tests.support.view_history import History, copy_runs, damage, make_history, stored_run

pytest.importorskip("starlette", reason=without("view"))
pytest.importorskip("uvicorn", reason=without("view"))


def _env(home: Path) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1"}
    if os.environ.get("PYTHONPATH"):  # a checkout put first, as its tests are run
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _vera(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vera", *args],
        cwd=cwd,
        env=_env(cwd),
        capture_output=True,
        text=True,
        timeout=120,
    )


_VIEW = (sys.executable, "-m", "vera", "view", "--no-browser", "--port", "0")


@dataclass
class Server:
    process: subprocess.Popen[str]
    address: str
    """The line it printed once listening."""
    stderr: Path

    @property
    def url(self) -> str:
        found = re.search(r"http://\S+", self.address)
        assert found, self.address
        return found.group(0)

    def output(self) -> tuple[str, str]:
        """Everything it printed, once stopped: stdout, stderr."""
        self.process.terminate()
        rest, _ = self.process.communicate(timeout=20)
        return self.address + rest, self.stderr.read_text()


@contextmanager
def view(cwd: Path, history: Path, *args: str, **env: str) -> Iterator[Server]:
    """`vera view` on `history`, on a free port, until the block ends; `env` adds variables."""
    stderr = cwd / f"view-{os.urandom(3).hex()}.err"
    with stderr.open("w") as sink:
        process = subprocess.Popen(
            [*_VIEW, "--history", str(history), *args],
            cwd=cwd,
            env={**_env(cwd), "PYTHONUNBUFFERED": "1", **env},
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
        )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, f"vera view printed no address within 60 s: {stderr.read_text()}"
        yield Server(process, process.stdout.readline(), stderr)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=20)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("history"))


def _copy(history: History, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "runs.sqlite"
    shutil.copy2(history.path, path)
    return path


# 4. Off loopback


def test_view_on_every_interface_without_allow_host_refuses_to_start(
    history: History, tmp_path: Path
) -> None:
    result = _vera(
        tmp_path, "view", "--no-browser", "--port", "0", "--host", "0.0.0.0",
        "--history", str(history.path),
    )  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert "--host 0.0.0.0 answers on every network interface" in result.stderr
    assert "--allow-host NAME" in result.stderr


def test_view_off_loopback_warns_prints_its_address_and_answers_only_its_token(
    history: History, tmp_path: Path
) -> None:
    with view(tmp_path, history.path, "--host", "0.0.0.0", "--allow-host", "view.test") as server:
        found = re.match(
            r"Serving the run history at (http://view\.test:(\d+)/\?token=(\S+)) ", server.address
        )
        assert found, server.address
        port, token = found.group(2), found.group(3)
        base = f"http://127.0.0.1:{port}"
        host = {"Host": f"view.test:{port}"}
        bare = httpx.get(base + "/", headers=host)
        assert bare.status_code == 401 and history.b not in bare.text
        wrong = httpx.get(base + "/?token=" + "x" * len(token), headers=host)
        assert wrong.status_code == 401
        rebound = httpx.get(f"{base}/?token={token}", headers={"Host": f"evil.example:{port}"})
        assert rebound.status_code == 400 and history.b not in rebound.text
        with httpx.Client(base_url=base, headers=host) as browser:
            traded = browser.get(f"/?token={token}")
            assert traded.status_code == 303 and traded.headers["location"] == "/"
            page = browser.get("/")  # with the cookie it was given
            assert page.status_code == 200 and history.b in page.text
        bearer = httpx.get(base + "/", headers={**host, "Authorization": f"Bearer {token}"})
        assert bearer.status_code == 200
        stdout, stderr = server.output()
    said = " ".join(stderr.split())
    assert "warning: vera view listens on 0.0.0.0, which other machines can reach" in said
    assert "Answered Host names: view.test." in said
    assert "127.0.0.1" not in stdout
    assert stdout.count(token) == 1 and token not in stderr  # the address, and nowhere else


def test_view_takes_its_token_from_the_environment_on_loopback_too(
    history: History, tmp_path: Path
) -> None:
    token = "env-given-token-0123456789"
    with view(tmp_path, history.path, VERA_VIEW_TOKEN=token) as server:
        assert re.fullmatch(rf"http://127\.0\.0\.1:\d+/\?token={token}", server.url)
        bare = httpx.get(server.url.split("?")[0])
        answered = httpx.get(server.url, follow_redirects=True)
    assert bare.status_code == 401
    assert answered.status_code == 200 and history.b in answered.text


# 6. A long history, and a damaged row


def test_a_page_of_a_long_history_is_one_page_whatever_the_history_size(
    history: History, tmp_path: Path
) -> None:
    sizes = {}
    for count in (100, 3000):
        path = _copy(history, tmp_path / str(count))
        copy_runs(path, history.b, count, datasets=4)
        with view(tmp_path, path) as server:
            url = server.url
            first = httpx.get(url, timeout=60)
            last = httpx.get(f"{url}?page={-(-(count + 4) // 50)}", timeout=60)
        assert first.status_code == 200 and last.status_code == 200
        assert first.text.count("<tr data-run=") == 50
        assert f"{count + 4} runs, newest first; page 1 of" in first.text
        assert 'rel="next"' in first.text and 'rel="next"' not in last.text
        sizes[count] = len(first.content)
    # The page of 3,004 runs holds what the page of 104 holds, give or take its digits.
    assert abs(sizes[3000] - sizes[100]) < 2_000, sizes


def test_runs_list_shows_the_newest_runs_and_says_how_many_there_are(
    history: History, tmp_path: Path
) -> None:
    path = _copy(history, tmp_path / "long")
    copies = copy_runs(path, history.b, 100)
    newest = _vera(tmp_path, "runs", "list", "--history", str(path))
    every = _vera(tmp_path, "runs", "list", "--history", str(path), "--limit", "0")
    assert newest.returncode == every.returncode == 0, newest.stderr + every.stderr
    assert copies[45] in newest.stdout and copies[46] not in newest.stdout  # 4 + 46 = 50
    assert "The newest 50 of 104 runs; --limit 0 lists every one." in newest.stdout
    assert all(run_id in every.stdout for run_id in [*history.ids, *copies])
    assert "The newest" not in every.stdout


def test_a_damaged_row_is_skipped_with_a_warning_by_every_reader(
    history: History, tmp_path: Path
) -> None:
    path = _copy(history, tmp_path / "damaged")
    damage(path, history.a, "report", "{not json")
    listed = _vera(tmp_path, "runs", "list", "--history", str(path))
    assert listed.returncode == 0, listed.stderr
    for run_id in (history.b, history.technical, history.running):
        assert run_id in listed.stdout
    assert history.a not in listed.stdout
    assert f"warning: run {history.a} in {path} is damaged (its stored report: not JSON)" in (
        " ".join(listed.stderr.split())
    )
    assert "writable" not in listed.stderr
    # A report's trend reads the list of the dataset's runs: the damaged one is left out.
    report = _vera(tmp_path, "report", history.b, "-o", "b.html", "--history", str(path))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "b.html").stat().st_size > 0
    shown = _vera(tmp_path, "runs", "show", history.a, "--history", str(path))
    assert shown.returncode == 2 and "is damaged" in shown.stderr
    assert "Traceback" not in shown.stderr + report.stderr + listed.stderr
    with view(tmp_path, path) as server:
        page = httpx.get(server.url, timeout=30)
    assert page.status_code == 200
    assert f'data-damaged="{history.a}"' in page.text
    assert f'<tr data-run="{history.b}"' in page.text


# 7. Read-only media


def _writable(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.touch()
    except OSError:
        return False
    probe.unlink()
    return True


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` as on read-only media: nothing can be created in it, even by root (for whom
    permissions are no bar, the immutable attribute is set)."""
    folder.chmod(0o555)
    immutable = False
    try:
        if _writable(folder) and shutil.which("chattr"):
            done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
            immutable = done.returncode == 0
        if _writable(folder):
            pytest.skip("no way to make a folder read-only here (root, without chattr)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_a_history_on_read_only_media_is_listed_and_viewed(
    history: History, tmp_path: Path
) -> None:
    path = _copy(history, tmp_path / "media")
    before = sorted(os.listdir(path.parent))
    with read_only(path.parent):
        listed = _vera(tmp_path, "runs", "list", "--history", str(path))
        with view(tmp_path, path) as server:
            page = httpx.get(server.url, timeout=30)
            run = httpx.get(server.url + "runs/" + history.b, timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert all(run_id in listed.stdout for run_id in history.ids)
    assert "unable to open" not in listed.stderr and "warning" not in listed.stderr
    assert page.status_code == 200 and all(run_id in page.text for run_id in history.ids)
    assert run.status_code == 200
    assert sorted(os.listdir(path.parent)) == before


def test_commits_a_read_only_folder_keeps_unread_are_said_to_be_missing(
    history: History, tmp_path: Path
) -> None:
    source = _copy(history, tmp_path / "source")
    # Another connection held open keeps the newest run's commit in the -wal file, as a
    # history copied off a machine while a run was writing it has it.
    with closing(sqlite3.connect(source)) as holder:
        holder.execute("SELECT COUNT(*) FROM runs").fetchall()
        newest = stored_run(source, "example", "offline")
        assert (tmp_path / "source" / "runs.sqlite-wal").stat().st_size > 0
        media = tmp_path / "media"
        media.mkdir()
        for name in ("runs.sqlite", "runs.sqlite-wal"):
            shutil.copy2(tmp_path / "source" / name, media / name)
    with read_only(media):
        listed = _vera(tmp_path, "runs", "list", "--history", str(media / "runs.sqlite"))
    assert listed.returncode == 0, listed.stderr
    assert history.b in listed.stdout and newest not in listed.stdout
    said = " ".join(listed.stderr.split())
    assert "is in a read-only folder and its runs.sqlite-wal holds commits" in said
    assert "the newest runs may be missing" in said
