"""Baselines as the reports tell them: a change is better or worse, coloured and badged
"significant", only when its paired 95 % interval excludes 0; a relative change is shown only
against a baseline mean clear of 0. Comparisons are built by hand here, at the boundaries, and
read from the HTML table, the charts' captions and the Markdown summary alike.
"""

from __future__ import annotations

from functools import cache
from html.parser import HTMLParser

import pytest

import vera
from vera import Report
from vera._results import MetricComparison, relative_change
from vera._types import BaselineComparison
from vera.render import render_html
from vera.render._markdown import render_markdown
from vera.render._view import baseline_rows, baseline_view

WHITEBOX = "the report builder, on hand-made results"


@cache
def _base() -> Report:
    data = list(vera.load_dataset("example"))[:4]
    metrics = [vera.metrics.create_metric(n) for n in ("faithfulness", "hallucination_rate")]
    return vera.evaluate(data, metrics, dataset_name="example")


def _comparison(
    low: float | None, high: float | None, *, p: float | None, system: float, baseline: float
) -> MetricComparison:
    return MetricComparison(
        system_mean=system,
        baseline_mean=baseline,
        difference=system - baseline,
        ci_low=low,
        ci_high=high,
        p_value=p,
        paired_samples=4,
        improvement="+999.9%",  # seed 001's figure, which the reports no longer show
    )


def _compared(metric: str, comparison: MetricComparison) -> Report:
    """The base report on `metric` alone, against one baseline "naive_rag"."""
    base = _base()
    block = {
        "naive_rag": {metric: comparison.baseline_mean},
        "improvement_over_baseline": {"naive_rag": {metric: comparison.improvement}},
        "significance": {"naive_rag": {metric: comparison.model_dump()}},
    }
    return base.model_copy(
        update={
            "metric_summary": {metric: base.metric_summary[metric]},
            "baseline_comparison": BaselineComparison.model_validate(block),
        }
    )


class _Cells(HTMLParser):
    """The baseline table's cells: text, class and title of each, row by row."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[dict[str, str]]] = []
        self.cell: dict[str, str] | None = None
        self.inside = False
        self.badges = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "table":
            self.inside = "baseline-table" in found.get("class", "")
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag == "td":
            self.cell = {
                "text": "",
                "class": found.get("class", ""),
                "title": found.get("title", ""),
            }
            self.rows[-1].append(self.cell)
        elif self.inside and tag == "span" and "significant" in found.get("class", ""):
            self.badges += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif tag == "td":
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell["text"] += data


def _table(report: Report) -> tuple[list[dict[str, str]], int]:
    parser = _Cells()
    parser.feed(render_html(report))
    (row,) = [r for r in parser.rows if r]
    return row, parser.badges


# (metric, interval, p, means) -> what the reports must call the change.
CASES = {
    "excludes 0 just above, but p >= 0.05": (
        "faithfulness", (0.001, 0.05), 0.2, (0.70, 0.68), None
    ),
    "excludes 0 above, p < 0.05": ("faithfulness", (0.001, 0.05), 0.03, (0.70, 0.68), "better"),
    "touches 0, though p < 0.05": ("faithfulness", (0.0, 0.05), 0.04, (0.70, 0.68), None),
    "straddles 0": ("faithfulness", (-0.02, 0.03), 0.5, (0.70, 0.69), None),
    "excludes 0 below": ("faithfulness", (-0.05, -0.001), 0.01, (0.60, 0.65), "worse"),
    "lower is better, excludes 0 below": (
        "hallucination_rate", (-0.05, -0.001), 0.01, (0.10, 0.15), "better"
    ),
    "lower is better, excludes 0 above": (
        "hallucination_rate", (0.002, 0.04), 0.03, (0.20, 0.18), "worse"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_better_or_worse_only_when_the_interval_excludes_0(case: str) -> None:
    metric, (low, high), p, (system, baseline), called = CASES[case]
    comparison = _comparison(low, high, p=p, system=system, baseline=baseline)
    report = _compared(metric, comparison)

    row, badges = _table(report)
    difference = row[4]
    if called is None:
        assert difference["text"].strip().endswith("no significant change")
        assert "muted" in difference["class"].split()
        assert not {"ok", "bad"} & set(difference["class"].split())
        assert badges == 0  # whatever the p-value says
    else:
        assert difference["text"].strip().endswith(called)
        assert ("ok" if called == "better" else "bad") in difference["class"].split()
        assert badges == 1
    assert row[7]["text"] == relative_change(system, baseline) != comparison.improvement

    (panel,), (view_row,) = baseline_view(report)
    assert view_row.change == (called or "no significant change")
    assert ("no significant change" in panel.note) is (called is None)
    if called is not None:
        assert f"{comparison.difference:+.3f}, {called}" in panel.note

    markdown = render_markdown(report)
    (line,) = [x for x in markdown.splitlines() if x.startswith(f"| {metric} | naive")]
    assert (f"**{called}**" if called else "| no significant change |") in line


def test_a_change_from_a_baseline_near_0_has_no_relative_figure() -> None:
    comparison = _comparison(-0.03, 0.0, p=0.5, system=0.0, baseline=0.01)
    assert comparison.improvement != "-100.0 %"
    report = _compared("hallucination_rate", comparison)
    row, _ = _table(report)
    assert row[7]["text"] == "—"
    assert "within 0.05 of 0" in row[7]["title"]
    assert "%" not in row[7]["text"]
    html = render_html(report)
    assert 'id="relative-notes"' in html and "-100.0" not in html
    (view_row,) = baseline_rows(report)
    assert view_row.relative is None and "baseline mean 0.010" in view_row.relative_note
    markdown = render_markdown(report)
    assert "-100.0" not in markdown and "| — |" in markdown


def test_a_comparison_without_paired_samples_says_so() -> None:
    base = _base()
    block = {"naive_rag": {"faithfulness": 0.5}}  # means only, as an older report keeps them
    report = base.model_copy(
        update={
            "metric_summary": {"faithfulness": base.metric_summary["faithfulness"]},
            "baseline_comparison": BaselineComparison.model_validate(block),
        }
    )
    row, badges = _table(report)
    assert row[4]["text"].strip().endswith("not compared") and badges == 0
    (view_row,) = baseline_rows(report)
    assert view_row.better is None and view_row.comparison.baseline_mean == 0.5
