"""The terminal summary fits the console's width, whatever it is, without cutting a metric
name, a group name or a heading short: a grid where it fits, stacked rows where it does not."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.text import Text

import vera
from vera import Report
from vera._results import MetricComparison, baseline_comparison, significant
from vera._types import BaselineComparison
from vera.render._console import Column, change_cell, print_summary, print_table

WHITEBOX = "the report builder, on hand-made results"

WIDTHS = (40, 80, 200)
GRID_HEADERS = ("Metric", "Mean", "95% CI", "Scored", "Not scored", "Passed", "Failed", "Threshold")
STACKED_LABELS = ("mean", "95% CI", "passed", "threshold")
UNSUPPORTED = "The contract was signed on the moon by seventeen penguins in 1802."


@pytest.fixture(scope="module")
def report() -> Report:
    """Every metric (the longest names there are) on the bundled example: sub-scores, and a
    breakdown by category."""
    metrics = [
        vera.metrics.create_metric(name) for name in vera.metrics.METRIC_REGISTRY.builtin_names()
    ]
    return vera.evaluate(vera.load_dataset("example"), metrics)


@pytest.fixture(scope="module")
def with_baselines(report: Report) -> Report:
    """`report` as a pipeline's, against two baselines: one whose every response is invented
    (so the changes are significant), one the same as the system."""
    samples = list(vera.load_dataset("example"))
    metrics = [
        vera.metrics.create_metric(name) for name in vera.metrics.METRIC_REGISTRY.builtin_names()
    ]
    invented = [s.model_copy(update={"response": UNSUPPORTED}) for s in samples]
    baselines = {
        "naive-rag": vera.evaluate(invented, metrics),
        "simple-verification": vera.evaluate(samples, metrics),
    }
    block = baseline_comparison(report, baselines)
    return report.model_copy(
        update={"pipeline": "my_company.rag:answer_pipeline", "baseline_comparison": block}
    )


def render(report: Report, width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    print_summary(report, console, console)
    return console.export_text()


def tables(text: str) -> str:
    """The output up to the failing samples: their lines quote judge reasons, which may end
    in an ellipsis of their own (a long quote shortened by the metric, not by the layout)."""
    return text.split("Failing samples, worst first")[0]


def whole(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


def check_fits(text: str, width: int) -> None:
    lines = text.splitlines()
    too_long = [line for line in lines if Text(line).cell_len > width]
    assert not too_long, too_long
    assert "…" not in tables(text)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_metric_table_fits_and_cuts_no_name(report: Report, width: int) -> None:
    text = render(report, width)
    check_fits(text, width)
    shown = tables(text)
    for name, summary in report.metric_summary.items():
        assert whole(name, shown), name
        for sub in summary.sub_scores:
            assert whole(sub, shown), sub
    for group in report.breakdowns["category"]:
        assert whole(group, shown), group
    grid = width >= 200
    assert ("┃ Metric" in shown) is grid
    for heading in GRID_HEADERS if grid else STACKED_LABELS:
        assert heading in shown, heading


def test_stacked_a_metric_reads_as_one_line_of_figures(report: Report) -> None:
    text = render(report, 80)
    s = report.metric_summary["faithfulness"]
    lines = text.splitlines()
    at = lines.index("faithfulness")
    assert lines[at + 1] == (
        f"  mean {s.mean:.3f} · 95% CI {s.ci_low:.2f} to {s.ci_high:.2f} · "
        f"passed {s.passed}/{s.scored} · threshold ≥ {s.threshold:.2f}"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_baselines_table_fits_and_cuts_no_name(with_baselines: Report, width: int) -> None:
    text = render(with_baselines, width)
    check_fits(text, width)
    pipeline = "my_company.rag:answer_pipeline"
    shown = pipeline + tables(text).split(pipeline, 1)[1]
    for name in ("naive_rag", "simple_verification", pipeline):
        assert whole(name, shown), name
    for name in with_baselines.metric_summary:
        assert whole(name, shown), name
    assert "change" in shown
    # Better or worse is said once per significant change: the invented answers lose on
    # several metrics, the baseline identical to the system on none.
    said = len(re.findall(r"\b(better|worse)\b", shown))
    block = with_baselines.baseline_comparison
    assert block is not None
    found = {
        (name, metric): significant(c)
        for name, by_metric in block.significance.items()
        for metric, c in by_metric.items()
    }
    assert not any(v for (name, _), v in found.items() if name == "simple_verification")
    assert said == sum(found.values()) > 0


def test_a_change_from_near_zero_is_no_percentage(report: Report) -> None:
    tiny = MetricComparison(
        system_mean=0.0,
        baseline_mean=0.010,
        difference=-0.010,
        ci_low=-0.03,
        ci_high=0.01,
        p_value=0.5,
        paired_samples=28,
        improvement="-100.0%",
    )
    block = BaselineComparison.model_validate(
        {"significance": {"naive_rag": {"hallucination_rate": tiny.model_dump()}}}
    )
    text = render(report.model_copy(update={"baseline_comparison": block}), 200)
    shown = text.split("against the baselines", 1)[1]
    row = next(line for line in shown.splitlines() if "│ hallucination_rate" in line)
    assert "—" in row and "-100" not in row and "%" not in row
    assert "better" not in row and "worse" not in row


def comparison(low: float, high: float, difference: float = 0.1) -> MetricComparison:
    return MetricComparison(
        system_mean=0.6 + difference,
        baseline_mean=0.6,
        difference=difference,
        ci_low=low,
        ci_high=high,
        p_value=0.01,
        paired_samples=20,
        improvement=None,
    )


def styles(text: Text) -> set[str]:
    return {str(span.style) for span in text.spans} | ({str(text.style)} - {""})


def test_a_change_is_better_or_worse_and_coloured_only_when_significant() -> None:
    up = change_cell(comparison(0.05, 0.15), higher_is_better=True)
    up = change_cell(comparison(0.05, 0.15), higher_is_better=True)
    assert up.plain == "+16.7 % better" and styles(up) == {"green"}
    noisy = change_cell(comparison(-0.02, 0.2), higher_is_better=True)
    assert noisy.plain == "+16.7 %" and styles(noisy) == set()
    # A rate that went up got worse.
    rate = change_cell(comparison(0.05, 0.15), higher_is_better=False, p=True)
    assert rate.plain == "+16.7 % worse (p=0.010)" and styles(rate) == {"red"}
    # From a mean of 0 no ratio is shown, only the verdict, or "—" without one.
    from_zero = comparison(0.05, 0.15).model_copy(update={"baseline_mean": 0.0})
    assert change_cell(from_zero, higher_is_better=True).plain == "better"
    noisy_zero = comparison(-0.02, 0.2).model_copy(update={"baseline_mean": 0.0})
    assert change_cell(noisy_zero, higher_is_better=True).plain == "—"


def test_dataset_text_is_never_read_as_markup(report: Report) -> None:
    marked = report.model_copy(update={"dataset": "[bold]x[/bold]"})
    for width in (40, 200):
        assert "[bold]x[/bold]" in render(marked, width)


def test_print_table_draws_a_grid_only_when_it_fits_whole() -> None:
    columns = [Column("Name"), Column("Value", "value")]
    rows = [["a_rather_long_metric_name", "0.123"], ["[red]short[/red]", None]]
    for width, grid in ((80, True), (30, False)):
        console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
        print_table(console, "T", columns, rows)
        text = console.export_text()
        assert ("┏" in text) is grid
        assert "a_rather_long_metric_name" in text and "[red]short[/red]" in text
        assert "…" not in text
        if not grid:
            assert "  value 0.123" in text.splitlines()
            # An empty cell is left out of its stacked row, not shown as a bare label.
            assert text.splitlines()[-1] == "[red]short[/red]"
