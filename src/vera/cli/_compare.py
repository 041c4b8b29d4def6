"""`vera compare`: two stored runs, paired."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from vera import ConfigError, VeraError, compare_runs
from vera.cli._app import _fail, app, err, out
from vera.cli._runs import HistoryOption, _store
from vera.render._console import (
    SHOWN_FAILURES,
    Cell,
    Column,
    change_cell,
    format_interval,
    format_score,
    print_table,
)

if TYPE_CHECKING:
    from vera._results import RunComparison
    from vera._store import StoredComparison

_COMPARE_COLUMNS = (
    Column("Metric"),
    Column("A"),
    Column("B"),
    Column("B - A"),
    Column("95% CI"),
    Column("p"),
    Column("Change", "change"),
    Column("Paired", "paired"),
)
"""`vera compare`'s table: A is the first run given, B the second."""


@app.command("compare")
def compare_command(
    run_a: str,
    run_b: str,
    history: HistoryOption = None,
    top: int = SHOWN_FAILURES,
    any_dataset: Annotated[
        bool,
        typer.Option("--any-dataset", help="Compare runs of different datasets all the same."),
    ] = False,
) -> None:
    """Compare run B against run A: per-metric change with a paired 95 % interval and p-value,
    how many samples changed a verdict or a score, and those whose scores changed most. Warns
    when the two runs were not measured alike (test set, judge, metrics, thresholds, system,
    gates; `run_differences`).

    Example: vera compare 20261122-101500 20261123-090000
    """
    if top < 0:
        _fail(ConfigError(f"--top {top}: give 0 or more samples to list"))
    try:
        compared = compare_runs(
            _store(history),
            run_a,
            run_b,
            top=top,
            other_dataset="pair" if any_dataset else "refuse",
        )
    except VeraError as exc:
        _fail(exc)
    _print_metrics(compared)
    _print_changed(compared.comparison)


def _print_metrics(compared: StoredComparison) -> None:
    """The warnings that the runs were not measured alike, then the per-metric table."""
    changes = compared.comparison.metrics
    paired = max((c.paired_samples for c in changes.values()), default=0)
    rows: list[list[Cell]] = []
    for metric, c in changes.items():
        change = change_cell(c, compared.after.metric_summary[metric].higher_is_better)
        rows.append(
            [
                metric,
                format_score(c.baseline_mean),
                format_score(c.system_mean),
                "—" if c.difference is None else f"{c.difference:+.3f}",
                format_interval(c.ci_low, c.ci_high),
                "—" if c.p_value is None else f"{c.p_value:.3f}",
                change if c.paired_samples else "— (nothing paired)",
                str(c.paired_samples),
            ]
        )
    title = f"{compared.second.id} against {compared.first.id} · {paired} paired samples"
    for line in compared.differences:
        err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    print_table(out, title, _COMPARE_COLUMNS, rows)
    if paired == 0:
        err.print("[yellow]No sample id is in both runs: there is no change to measure.[/]")


def _print_changed(comparison: RunComparison) -> None:
    """How many samples changed a verdict or a score (never a threshold alone), then the
    largest score changes."""
    out.print(
        f"{comparison.changed} samples changed a claim's verdict or a score: "
        f"{comparison.worse} worse, {comparison.better} better (a threshold alone changes none)",
        highlight=False,
        markup=False,
    )
    for line in comparison.moved_lines():
        out.print(line, highlight=False, markup=False)
