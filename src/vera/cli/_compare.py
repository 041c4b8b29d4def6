"""`vera compare`: two stored runs, paired."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from vera.cli._app import _fail, app, err, out
from vera.cli._runs import HistoryOption, _store
from vera.render import (
    SHOWN_FAILURES,
    Cell,
    Column,
    change_cell,
    format_interval,
    format_score,
    print_table,
)
from vera.results import Report, compare_reports, most_changed, run_differences, verdict_changes
from vera.types import ConfigError, VeraError

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    pass


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
    try:
        store = _store(history)
        before, after = store.report(run_a), store.report(run_b)
        first, second = store.get(run_a).id, store.get(run_b).id
        if before.dataset != after.dataset and not any_dataset:
            raise ConfigError(
                f"run {first} is of dataset {before.dataset!r} and run {second} of "
                f"{after.dataset!r}: their samples do not pair; pass --any-dataset to compare "
                "them all the same"
            )
    except VeraError as exc:
        _fail(exc)
    changes = compare_reports(after, before)
    paired = max((c.paired_samples for c in changes.values()), default=0)
    rows: list[list[Cell]] = []
    for metric, c in changes.items():
        change = change_cell(c, after.metric_summary[metric].higher_is_better)
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
    title = f"{second} against {first} · {paired} paired samples"
    for line in run_differences(before, after):
        err.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    print_table(out, title, _COMPARE_COLUMNS, rows)
    if paired == 0:
        err.print("[yellow]No sample id is in both runs: there is no change to measure.[/]")
    _print_changed(before, after, top)


def _print_changed(before: Report, after: Report, top: int) -> None:
    """How many samples changed a verdict or a score (never a threshold alone), then the
    `top` largest score changes."""
    changed = verdict_changes(before.samples, after.samples)
    worse = sum(1 for c in changed if c.direction == "worse")
    better = sum(1 for c in changed if c.direction == "better")
    out.print(
        f"{len(changed)} samples changed a claim's verdict or a score: {worse} worse, "
        f"{better} better (a threshold alone changes none)",
        highlight=False,
        markup=False,
    )
    for line in most_changed(before, after, top):
        out.print(line, highlight=False, markup=False)
