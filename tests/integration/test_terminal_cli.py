"""The CLI as a CI log sees it (stderr not a terminal), at a narrow and a wide console, and
reading commands in a folder with no run history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vera import RunObserver, cli
from vera.cli import _app as cli_app
from vera.cli import _eval as cli_eval
from vera.metrics._registry import METRICS

WHITEBOX = "the CLI console, and a run interrupted inside it"

ESCAPE = "\x1b"
COMPARE_HEADERS = ("Metric", "A", "B", "B - A", "95% CI", "p", "Change", "Paired")
COMPARE_LABELS = ("A", "B", "B - A", "95% CI", "p", "change", "paired")


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    """A CLI runner in an empty folder, its stderr read as a log: not a terminal."""
    monkeypatch.chdir(tmp_path)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


def at_width(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """The summary's console as wide as a terminal of `width` columns."""
    monkeypatch.setattr(cli_app.out, "_width", width)


def test_eval_in_a_log_prints_plain_progress_lines(runner: CliRunner) -> None:
    assert not cli_app.err.is_terminal
    result = runner.invoke(cli.app, ["eval", "--dataset", "example"])
    assert result.exit_code == 1, result.stderr  # the example's unfaithful answers
    assert re.search(r"^Run \S+$", result.stderr, re.MULTILINE)
    assert "Evaluating: 0/28 samples (0%)" in result.stderr
    # The progress ends before the gate's lines, which follow it on stderr.
    progress, gate = result.stderr.strip().split("\nGate failed:", 1)
    last = progress.splitlines()[-1]
    assert re.fullmatch(r"Evaluated 28/28 samples in [\d.]+ s · [\d.]+ samples/s", last), last
    assert "unfaithful answers: 11 of 28" in " ".join(gate.split())
    assert "\r" not in result.stderr and ESCAPE not in result.stderr


def test_an_interrupted_run_still_says_how_to_finish_it(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, observer: RunObserver, **kwargs: object) -> None:
        observer.run_started("20260101-120000-ab12cd")
        observer.pass_started(None, 28, 0)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_eval, "run_plan", interrupted)
    result = runner.invoke(cli.app, ["eval", "--dataset", "example"])
    assert result.exit_code == cli_app.EXIT_INTERRUPTED
    said = " ".join(result.stderr.split())  # the message may wrap at the console's width
    ended = said.index("Evaluated 0/28 samples in ")
    assert said.index("Interrupted: ") > ended
    assert said.endswith(
        "Interrupted: 0 finished sample(s) are stored in run 20260101-120000-ab12cd; "
        "finish it with: vera eval --resume 20260101-120000-ab12cd"
    )


@pytest.mark.parametrize("width", [40, 80, 200])
def test_the_eval_summary_fits_the_console(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    at_width(monkeypatch, width)
    result = runner.invoke(cli.app, ["eval", "--dataset", "example", "-m", "all", "--no-history"])
    assert result.exit_code in (0, 1), result.stderr
    shown = result.stdout.split("Failing samples, worst first")[0]
    assert max(len(line) for line in result.stdout.splitlines()) <= width
    assert "…" not in shown
    for name in METRICS:
        assert re.search(rf"(?<!\w){name}(?!\w)", shown), name


def two_runs(runner: CliRunner) -> tuple[str, str]:
    """Two stored runs of the example that differ: the learned offline judge, then the
    rule-based one."""
    ids = []
    for judge in ("offline:learned", "offline"):
        result = runner.invoke(cli.app, ["eval", "-d", "example", "-m", "all", "--judge", judge])
        assert result.exit_code in (0, 1), result.stderr
        found = re.search(r"^Run (\S+)$", result.stderr, re.MULTILINE)
        assert found is not None
        ids.append(found.group(1))
    return ids[0], ids[1]


@pytest.mark.parametrize("width", [40, 80, 200])
def test_compare_fits_the_console_and_names_every_metric(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    first, second = two_runs(runner)
    at_width(monkeypatch, width)
    result = runner.invoke(cli.app, ["compare", first, second])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    table = result.stdout.split(METRICS_END, 1)[0]
    assert "…" not in table
    for name in METRICS:
        assert re.search(rf"(?<!\w){name}(?!\w)", table), name
    grid = width == 200
    assert ("┃ Metric" in table) is grid
    for heading in COMPARE_HEADERS if grid else COMPARE_LABELS:
        assert re.search(rf"(?<![\w-]){re.escape(heading)}(?![\w-])", table), heading
    # The judges differ on some metrics beyond their noise, and agree exactly on others.
    assert "worse" in table or "better" in table
    assert "+0.0 %" in table


METRICS_END = "\nex-"
"""Where `vera compare`'s table ends: the most changed samples follow, each from its id."""


READERS = (
    (["runs", "list"], 0),
    (["runs", "show", "X"], 2),
    (["compare", "A", "B"], 2),
    (["report", "X", "-o", "r.html"], 2),
)


@pytest.mark.parametrize(("args", "code"), READERS)
def test_reading_the_history_never_creates_it(
    runner: CliRunner, tmp_path: Path, args: list[str], code: int
) -> None:
    result = runner.invoke(cli.app, args)
    assert result.exit_code == code, result.output
    assert list(tmp_path.iterdir()) == []
    assert ".vera/runs.sqlite" in result.stderr
    if code == 0:
        assert result.stderr.startswith("No runs recorded: ")


@pytest.mark.parametrize(("args", "code"), READERS)
def test_reading_a_named_history_never_creates_it_or_its_folder(
    runner: CliRunner, tmp_path: Path, args: list[str], code: int
) -> None:
    result = runner.invoke(cli.app, [*args, "--history", "kept/runs.sqlite"])
    assert result.exit_code == code, result.output
    assert list(tmp_path.iterdir()) == []
    assert "kept/runs.sqlite" in result.stderr
