"""A metric that does not apply to a sample says why, naming the sample field it needs, and
the summary says it for every such metric in the terminal, Markdown and HTML."""

from __future__ import annotations

import io

from rich.console import Console

import vera
from vera import Report, Sample
from vera.render import render_html
from vera.render._console import print_summary
from vera.render._markdown import render_markdown

WHITEBOX = "the console's tables, panels and progress"

NEEDS_REFERENCE = "(needs the sample field `reference`)"


def run() -> Report:
    samples = [
        Sample(id="plain", query="What is the refund window?",
               response="The refund window is 30 days.",
               contexts=["The refund window is 30 days."]),
        Sample(id="with-reference", query="What is the refund window?",
               response="The refund window is 30 days.",
               contexts=["The refund window is 30 days."], reference="30 days."),
    ]  # fmt: skip
    return vera.evaluate(
        samples, metrics=["faithfulness", "answer_correctness", "grounding_recall", "abstention"]
    )


def test_each_not_applicable_metric_names_the_field_it_needs() -> None:
    report = run()
    result = report.sample("plain").results["answer_correctness"]
    assert result.score is None and result.reason.endswith(NEEDS_REFERENCE)
    summary = report.metric_summary
    assert summary["answer_correctness"].not_applicable_reasons == {
        f"no reference answer to compare with {NEEDS_REFERENCE}": 1
    }
    assert summary["abstention"].not_applicable_reasons == {
        "the question is answerable (needs the sample field `answerable`)": 2
    }
    assert summary["faithfulness"].not_applicable_reasons == {}
    # Every metric that did not apply to some sample has a reason for each of them.
    for name, s in summary.items():
        assert sum(s.not_applicable_reasons.values()) == s.not_applicable, name


def test_the_summary_says_why_in_every_format() -> None:
    report = run()
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    print_summary(report, console, console)
    text = console.export_text()
    assert "Not applicable, and why:" in text
    line = "answer_correctness: 1 sample not applicable: no reference answer to compare with"
    assert f"{line} {NEEDS_REFERENCE}" in text
    assert "abstention: 2 samples not applicable: the question is answerable" in text
    assert "faithfulness: " not in text.split("Not applicable, and why:")[1].split("\n\n")[0]
    markdown = render_markdown(report)
    assert "**Not applicable, and why:**" in markdown
    assert "abstention: 2 samples not applicable: the question is answerable" in markdown
    page = render_html(report)
    assert 'data-role="not-applicable">the question is answerable (needs the sample field' in page


def test_the_reasons_survive_the_json_report() -> None:
    report = run()
    again = Report.model_validate_json(report.to_json())
    assert again.metric_summary == report.metric_summary
