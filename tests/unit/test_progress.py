"""Progress on stderr: plain, spaced lines in a CI log; a live bar only in a terminal."""

from __future__ import annotations

import io
import itertools
import re
import time

import pytest
from rich.console import Console

from vera import SampleResult, SampleStatus
from vera.render._progress import RunProgress, format_duration

WHITEBOX = "the console's tables, panels and progress"

RESULT = SampleResult(id="s", status=SampleStatus.SCORED)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def plain_console() -> tuple[Console, io.StringIO]:
    """A console as in a CI log: not a terminal."""
    file = io.StringIO()
    return Console(file=file, width=80), file


def run_pass(
    progress: RunProgress, clock: FakeClock, file: io.StringIO, *, total: int | None, step: float
) -> list[tuple[float, str]]:
    """A pass of `count` samples, one every `step` seconds: each printed line, with the
    time it appeared."""
    count = total if total is not None else 230
    lines: list[tuple[float, str]] = []

    def collect() -> None:
        new = file.getvalue()[sum(len(text) + 1 for _, text in lines) :]
        lines.extend((clock.now, text) for text in new.splitlines())

    progress.pass_started(None, total, 0)
    collect()
    for _ in range(count):
        clock.now += step
        progress.sample_finished(RESULT)
        collect()
    progress.pass_finished()
    collect()
    return lines


def test_a_69_second_run_in_a_log_says_how_far_it_is_every_10_seconds() -> None:
    console, file = plain_console()
    assert not console.is_terminal
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    lines = run_pass(progress, clock, file, total=230, step=0.3)
    *running, last = lines
    times = [at for at, _ in running]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(running) >= 6
    assert all(gap >= 10 for gap in gaps), gaps
    # Never quiet for more than 10 s while samples finish (one every 0.3 s).
    assert all(gap <= 10.3 + 1e-9 for gap in gaps), gaps
    assert 69 - times[-1] <= 10.3
    assert running[0][1] == "Evaluating: 0/230 samples (0%)"
    at, text = running[1]
    assert at == pytest.approx(10.2)
    assert text == "Evaluating: 34/230 samples (14%) · 3.3 samples/s · about 59 s left"
    assert last[1] == "Evaluated 230/230 samples in 1 min 9 s · 3.3 samples/s"
    assert "\r" not in file.getvalue() and "\x1b" not in file.getvalue()


def test_the_time_left_reads_in_minutes_on_a_long_run() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    progress.pass_started("naive-rag", 500, 0)
    for _ in range(40):
        clock.now += 0.25
        progress.sample_finished(RESULT)
    line = file.getvalue().splitlines()[-1]
    assert line == "Evaluating naive-rag: 40/500 samples (8%) · 4.0 samples/s · about 2 min left"


def test_a_streamed_pass_shows_count_and_rate_but_no_time_left() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    lines = run_pass(progress, clock, file, total=None, step=0.5)
    texts = [text for _, text in lines]
    assert texts[0] == "Evaluating: 0 samples"
    assert texts[1] == "Evaluating: 20 samples · 2.0 samples/s"
    assert not any("left" in text or "%" in text for text in texts)
    assert texts[-1] == "Evaluated 230 samples in 1 min 55 s · 2.0 samples/s"


def test_a_resumed_pass_counts_what_was_done_but_rates_only_what_is_new() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    progress.pass_started(None, 100, 40)
    for _ in range(10):
        clock.now += 1.0
        progress.sample_finished(RESULT)
    assert progress.finished == 50
    assert file.getvalue().splitlines() == [
        "Evaluating: 40/100 samples (40%)",
        "Evaluating: 50/100 samples (50%) · 1.0 samples/s · about 50 s left",
    ]


def test_a_stalled_pass_still_prints_every_10_seconds_and_no_more() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    progress.pass_started(None, 10, 0)
    for at in (5.0, 9.9, 10.0, 15.0, 19.9, 20.0):
        clock.now = at
        progress.tick()
    assert len(file.getvalue().splitlines()) == 3  # the start, then at 10 s and 20 s


def test_the_heartbeat_thread_prints_while_no_sample_finishes_and_stops_with_the_pass() -> None:
    console, file = plain_console()
    progress = RunProgress(console, interval=0.05)
    progress.pass_started(None, 10, 0)
    time.sleep(0.4)
    progress.pass_finished()
    printed = file.getvalue()
    time.sleep(0.2)
    assert file.getvalue() == printed  # nothing after the pass
    lines = printed.splitlines()
    assert lines[-1].startswith("Evaluated 0/10 samples in ")
    assert len(lines) - 2 >= 2, lines  # heartbeat lines between the start and the end


def test_each_pass_ends_with_one_line_however_often_it_is_finished() -> None:
    console, file = plain_console()
    clock = FakeClock()
    with RunProgress(console, clock=clock, heartbeat=False) as progress:
        progress.run_started("20260101-120000-ab12cd")
        progress.pass_started(None, 2, 0)
        clock.now = 1.5
        progress.sample_finished(RESULT)
        progress.pass_finished()
        progress.pass_finished()  # as Ctrl-C handling does, after the runner's own
    assert progress.run_id == "20260101-120000-ab12cd"
    assert file.getvalue().splitlines() == [
        "Run 20260101-120000-ab12cd",
        "Evaluating: 0/2 samples (0%)",
        "Evaluated 1/2 samples in 1.5 s · 0.7 samples/s",
    ]


def test_a_terminal_gets_a_live_bar_with_count_rate_and_time_left() -> None:
    file = io.StringIO()
    console = Console(file=file, width=120, force_terminal=True, color_system=None)
    clock = FakeClock()
    progress = RunProgress(console, clock=clock)
    progress.pass_started(None, 10, 0)
    for _ in range(5):
        clock.now += 0.5
        progress.sample_finished(RESULT)
    bar = progress._bar
    assert bar is not None
    with console.capture() as capture:
        console.print(bar.make_tasks_table(bar.tasks))
    shown = capture.get()
    progress.pass_finished()
    assert re.search(r"5/10 .*2\.0 samples/s .*0:00:02", shown), shown
    assert "Evaluating:" not in file.getvalue()  # no plain lines beside the bar
    assert file.getvalue().rstrip().endswith("Evaluated 5/10 samples in 2.5 s · 2.0 samples/s")


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.04, "0.0 s"), (4.25, "4.2 s"), (41, "41 s"), (161, "2 min 41 s"), (3900, "1 h 05 min")],
)
def test_durations_read_as_a_person_says_them(seconds: float, said: str) -> None:
    assert format_duration(seconds) == said


def test_errored_and_skipped_samples_are_not_counted_or_rated_as_evaluated() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    progress.pass_started(None, 10, 0)
    clock.now = 2.0
    for index in range(10):
        status = (SampleStatus.SCORED, SampleStatus.ERROR, SampleStatus.SKIPPED)[index % 3]
        progress.sample_finished(SampleResult(id=f"s{index}", status=status))
    progress.pass_finished()
    # 4 scored in 2 s: 2.0 samples/s, not the 5.0 of every finished sample.
    assert file.getvalue().splitlines()[-1] == (
        "Evaluated 4/10 samples in 2.0 s (3 errored, 3 not evaluated: the run stopped) · "
        "2.0 samples/s"
    )


def test_a_pass_where_every_sample_errored_gives_no_rate() -> None:
    console, file = plain_console()
    clock = FakeClock()
    progress = RunProgress(console, clock=clock, heartbeat=False)
    progress.pass_started(None, 10, 0)
    clock.now = 0.01
    for index in range(10):
        progress.sample_finished(SampleResult(id=f"s{index}", status=SampleStatus.ERROR))
    progress.pass_finished()
    last = file.getvalue().splitlines()[-1]
    assert last == "Evaluated 0/10 samples in 0.0 s (10 errored)"
