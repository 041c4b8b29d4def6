"""`vera runs show` on a run that has not finished says what finishes it: `--resume` for a
run of `vera eval`, the monitor itself for a window of `vera monitor`."""

from __future__ import annotations

import time
from pathlib import Path

from starlette.testclient import TestClient
from typer.testing import CliRunner

from vera import RunStore, create_app
from vera._monitor import MonitorHistory
from vera._plan import build_plan
from vera._viewer import run_url
from vera.cli import app

WHITEBOX = "the monitor's own parts; the viewer's own parts"


def test_an_open_monitor_window_is_finished_by_its_monitor_not_by_resume(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    history = MonitorHistory(path)
    start = time.time()
    window = history.window("support-bot", start, start + 60, build_plan())
    history.close()
    shown = CliRunner().invoke(app, ["runs", "show", window, "--history", str(path)])
    said = " ".join(shown.output.split())
    assert shown.exit_code == 0, shown.output
    assert "a window of vera monitor 'support-bot' that is still open" in said
    assert "--resume" not in said


def test_an_unfinished_eval_run_is_finished_with_resume(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    store = RunStore(path)
    run_id = store.start("example", build_plan())
    store.close()
    shown = CliRunner().invoke(app, ["runs", "show", run_id, "--history", str(path)])
    said = " ".join(shown.output.split())
    assert f"vera eval --resume {run_id} finishes it" in said
    assert RunStore(path, read_only=True).monitor_window(run_id) is None


def test_vera_view_s_page_of_an_open_window_does_not_offer_resume(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    history = MonitorHistory(path)
    start = time.time()
    window = history.window("support-bot", start, start + 60, build_plan())
    history.close()
    page = TestClient(create_app(path)).get(run_url(window))
    said = " ".join(page.text.split())
    assert page.status_code == 409
    assert "window of vera monitor &#39;support-bot&#39; that is still open" in said
    assert "--resume" not in said and "To finish it" not in said


def test_vera_runs_list_shows_an_open_window_as_such_not_as_running(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    history = MonitorHistory(path)
    start = time.time()
    window = history.window("support-bot", start, start + 60, build_plan())
    history.close()
    store = RunStore(path)
    plain = store.start("example", build_plan())
    store.close()
    listed = CliRunner().invoke(
        app, ["runs", "list", "--history", str(path)], env={"COLUMNS": "200"}
    )
    rows = {line.split("│")[1].strip(): line for line in listed.output.splitlines() if "│" in line}
    assert "open window" in rows[window] and "running" not in rows[window]
    assert "running" in rows[plain]
