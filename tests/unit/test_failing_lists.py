"""Lists of failing samples respect each metric's direction, and a cut list says how many it
left out and where they are: the terminal, Markdown and HTML reports agree with JUnit."""

from __future__ import annotations

import io
import re

from rich.console import Console

import vera
from vera import Report, Sample
from vera.datasets import InvalidRow
from vera.render import render_html
from vera.render._console import FAILING_TITLE, print_summary
from vera.render._html import read_samples
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.render._ranking import FailingSamples, margin
from vera.testing import FakeJudge

WHITEBOX = "the console's tables, panels and progress"

CONTEXT = "The refund window is 30 days."


def _sample(sample_id: str, response: str) -> Sample:
    return Sample(id=sample_id, query="What is the refund window?", response=response,
                  contexts=[CONTEXT])  # fmt: skip


def run(passing: int, failing: int) -> Report:
    """`passing` samples whose every claim is supported (faithfulness 1.0, hallucination rate
    0.0), read first, and `failing` samples with one claim of three supported (faithfulness
    0.333, hallucination rate 0.667): both metrics fail them."""
    script: dict[str, list[tuple[str, str]]] = {}
    samples = []
    for i in range(passing):
        response = f"Good answer {i}."
        script[response] = [(response, "FULLY_SUPPORTED")]
        samples.append(_sample(f"good-{i}", response))
    for i in range(failing):
        response = f"Bad answer {i}. Invented {i}. Made up {i}."
        script[response] = [
            (f"Bad answer {i}.", "FULLY_SUPPORTED"),
            (f"Invented {i}.", "NO_EVIDENCE"),
            (f"Made up {i}.", "CONTRADICTED"),
        ]
        samples.append(_sample(f"bad-{i}", response))
    return vera.evaluate(
        samples, metrics=["faithfulness", "hallucination_rate"], judge=FakeJudge(script)
    )


def console_text(report: Report) -> str:
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    print_summary(report, console, console)
    return console.export_text()


def junit_failures(report: Report, metric: str) -> int:
    found = re.search(rf'name="vera\.{metric}"[^>]*failures="(\d+)"', render_junit(report))
    assert found is not None
    return int(found.group(1))


def test_a_hallucination_rate_of_zero_is_not_the_lowest_score() -> None:
    # Before: the console ranked by the lowest raw score, so the passing samples' hallucination
    # rate of 0.0 ranked them "lowest" and no failing sample was listed at all.
    report = run(passing=6, failing=3)
    text = console_text(report)
    assert FAILING_TITLE in text
    listed = text.split(FAILING_TITLE, 1)[1]
    for i in range(3):
        assert f"bad-{i} · faithfulness 0.333" in listed
        assert f"bad-{i} · hallucination_rate 0.667" in listed
    assert "good-" not in listed
    assert "more failing" not in listed  # nothing was cut


def test_the_cut_console_list_says_how_many_more_and_where() -> None:
    report = run(passing=2, failing=6)
    assert junit_failures(report, "faithfulness") == 6
    text = console_text(report)
    assert "(6 failing)" in text
    assert len(set(re.findall(r"bad-\d", text.split(FAILING_TITLE, 1)[1]))) == 5
    assert "… and 1 more failing sample: every sample is in the JSON and HTML reports" in text


def test_the_cut_markdown_list_says_how_many_more_and_where() -> None:
    # Before: "Failing samples" stopped at 5 without a word while JUnit counted 6.
    report = run(passing=2, failing=7)
    assert junit_failures(report, "hallucination_rate") == 7
    text = render_markdown(report)
    assert "<summary>Failing samples: 7, worst first</summary>" in text
    listed = text.split("<summary>", 1)[1]
    assert len(set(re.findall(r"bad-\d", listed))) == 5
    assert "… and 2 more failing samples: every sample is in the JSON and HTML reports" in listed
    assert "good-" not in listed


def test_a_list_under_the_cap_says_nothing_more() -> None:
    text = render_markdown(run(passing=3, failing=5))
    assert "<summary>Failing samples: 5, worst first</summary>" in text
    assert "more failing" not in text


def test_worst_is_measured_in_each_metrics_direction() -> None:
    report = run(passing=1, failing=1)
    good, bad = report.sample("good-0"), report.sample("bad-0")
    # hallucination_rate 0.667 against ≤ 0.0 is 0.667 past it; faithfulness 0.333 against
    # ≥ 0.5 only 0.167.
    assert (
        margin(bad, report.metric_summary) == -report.sample("bad-0").scores["hallucination_rate"]
    )
    assert margin(good, report.metric_summary) == 0.0  # at the hallucination threshold exactly
    found = FailingSamples.of(report.samples, report.metric_summary, 5)
    assert [r.id for r in found.worst()] == ["bad-0"]
    assert (found.total, found.left_out) == (1, 0)


def test_the_html_list_puts_the_failing_samples_first() -> None:
    # A sample that fails only the lower-is-better metric still comes before every passing
    # sample, though its faithfulness is higher than theirs.
    script = {
        "Fine.": [("Fine.", "PARTIALLY_SUPPORTED")],
        "Mostly. Not this.": [
            ("Mostly.", "FULLY_SUPPORTED"),
            ("Mostly again.", "FULLY_SUPPORTED"),
            ("Not this.", "NO_EVIDENCE"),
        ],
    }
    samples = [_sample("partial", "Fine."), _sample("one-wrong", "Mostly. Not this.")]
    report = vera.evaluate(
        samples, metrics=["faithfulness", "hallucination_rate"], judge=FakeJudge(script)
    )
    assert report.sample("partial").scores["faithfulness"] == 0.5
    assert report.sample("one-wrong").scores["faithfulness"] > 0.5
    data = read_samples(render_html(report))
    assert [data["rows"][row][0] for row in data["order"]] == ["one-wrong", "partial"]


def test_cut_lists_of_errors_and_invalid_rows_say_how_many_more_and_where() -> None:
    # The fake judge raises on a response it was not given: each such sample is an error.
    script = {"Scripted.": [("Scripted.", "FULLY_SUPPORTED")]}
    samples = [_sample(f"err-{i}", f"Unscripted {i}.") for i in range(7)]
    report = vera.evaluate(
        [*samples, _sample("ok", "Scripted.")], metrics=["faithfulness"], judge=FakeJudge(script)
    )
    assert report.counts["errors"] == 7
    rows = tuple(
        InvalidRow(location=f"data.jsonl:{i}", field="contexts", problem="bad", message=f"bad {i}")
        for i in range(6)
    )
    text = console_text(report.model_copy(update={"invalid_rows": rows}))
    assert len(re.findall(r"^error err-\d", text, re.MULTILINE)) == 5
    assert "… and 2 more errors: every sample is in the JSON and HTML reports" in text
    assert len(re.findall(r"^invalid bad \d", text, re.MULTILINE)) == 5
    assert "… and 1 more invalid row: every invalid row is in the JSON report's invalid_rows" in (
        " ".join(text.split())
    )
