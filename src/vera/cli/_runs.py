"""`vera runs list` and `vera runs show`: the run history."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from vera import MissingStoreError, RunStore, VeraError
from vera.cli._app import _fail, app, err, out
from vera.cli._labels import labels_app
from vera.providers._batch import describe_batches
from vera.render._console import Cell, Column, format_score, print_summary, print_table

runs_app = typer.Typer(help="The run history (.vera/runs.sqlite).", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
app.add_typer(labels_app, name="labels")
HistoryOption = Annotated[
    Path | None, typer.Option("--history", help="The run store (default .vera/runs.sqlite).")
]


def _store(path: Path | None) -> RunStore:
    """The run history for commands that only read it: never created or changed by them."""
    return RunStore(path or RunStore.DEFAULT_PATH, read_only=True)


_RUNS_COLUMNS = (
    Column("Run"),
    Column("Status", "status", "left"),
    Column("Dataset", "dataset", "left"),
    Column("Samples", "samples", "left"),
    Column("Metrics", "metrics", "left"),
)


@runs_app.command("list")
def runs_list(
    history: HistoryOption = None,
    limit: Annotated[
        int,
        typer.Option("--limit", min=0, help="List the newest N runs (0: every run)."),
    ] = RunStore.PAGE_SIZE,
) -> None:
    """List stored runs, newest first (the newest 50 unless --limit says otherwise)."""
    try:
        store = _store(history)
        if limit:
            page = store.page(1, limit)
            records, total = page.records, page.total
            for run in page.damaged:
                warnings.warn(f"{run}; skipped it, the other runs are listed", stacklevel=1)
        else:
            records = store.list()
            total = len(records)
    except MissingStoreError as exc:
        err.print(f"No runs recorded: {escape(str(exc))}", highlight=False, soft_wrap=True)
        return
    except VeraError as exc:
        _fail(exc)
    rows: list[list[Cell]] = []
    for record in records:
        means = ", ".join(f"{k} {format_score(v)}" for k, v in record.metrics.items())
        status = record.status
        if status == "running" and store.monitor_window(record.id) is not None:
            status = "open window"  # its monitor finishes it when the window closes
        rows.append([record.id, status, record.dataset, str(record.finished_samples), means])
    print_table(out, "Runs", _RUNS_COLUMNS, rows)
    if limit and total > limit:
        out.print(f"The newest {limit} of {total} runs; --limit 0 lists every one.")


@runs_app.command("show")
def runs_show(
    run_id: str,
    history: HistoryOption = None,
    plan: Annotated[
        bool,
        typer.Option("--plan", help="Also print the run's stored plan (JSON), after the summary."),
    ] = False,
) -> None:
    """Show one run: its summary if it finished, then (with --plan) the plan it ran."""
    try:
        store = _store(history)
        record = store.get(run_id)
        pipeline = record.options.get("pipeline")
        out.print(
            f"Run {record.id} · {record.status} · {record.finished_samples} samples done · "
            f"dataset {record.dataset}" + (f" · pipeline {pipeline}" if pipeline else ""),
            markup=False,
            highlight=False,
        )
        if record.status == "finished":
            print_summary(store.report(record.id), out, err)
        else:
            out.print(_unfinished(store, record.id), markup=False, highlight=False)
        for line in describe_batches(store.batches(record.id, intents=True)):
            out.print(line, markup=False, highlight=False)
    except VeraError as exc:
        _fail(exc)
    if plan:
        out.print("Plan:", highlight=False)
        out.print_json(data=record.options)
    else:
        out.print(f"Its plan: vera runs show {record.id} --plan", markup=False, highlight=False)


def _unfinished(store: RunStore, run_id: str) -> str:
    """What finishes a run that has not: `--resume`, or its monitor for a monitor window."""
    window = store.monitor_window(run_id)
    if window is None:
        return (
            f"No summary yet: the run has not finished (vera eval --resume {run_id} finishes it)."
        )
    monitor, _closed = window
    return (
        f"No summary yet: a window of vera monitor {monitor!r} that is still open; the "
        "monitor stores its summary when the window closes (a monitor that was stopped "
        "closes its past windows when it starts again)."
    )
