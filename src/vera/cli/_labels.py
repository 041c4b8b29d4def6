"""`vera labels`: the labels people gave a stored run in `vera view --review`.

    vera labels export RUN -o labelled.jsonl                      # the labelled samples
    vera labels export RUN -o sample.jsonl --scope calibration    # for `vera calibrate FILE`

A shell over `vera._review.export_labels`: it parses, calls it once, prints, and exits 0, or 2
with the message for a bad run id, an unreadable dataset or nothing labelled.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from vera import ExitCode, RunStore, VeraError, export_labels
from vera._text import printable
from vera.render._outputs import check_output_paths

labels_app = typer.Typer(
    help="The labels people gave stored runs in `vera view --review`.", no_args_is_help=True
)


class Scope(StrEnum):
    """`--scope`: which samples the exported file holds."""

    LABELLED = "labelled"
    CALIBRATION = "calibration"


@labels_app.command("export")
def export_command(
    run_id: Annotated[
        str, typer.Argument(help="A stored run's id (or a unique prefix).", show_default=False)
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The JSONL file to write.", show_default=False)
    ],
    history: Annotated[
        Path | None, typer.Option("--history", help="The run store (default .vera/runs.sqlite).")
    ] = None,
    scope: Annotated[
        Scope,
        typer.Option(
            "--scope",
            help="labelled: every labelled sample, with who labelled it when; calibration: "
            "every sample of the run, labelled only where it is in the calibration sample, "
            "so that `vera calibrate FILE` gives the run's intervals.",
        ),
    ] = Scope.LABELLED,
) -> None:
    """Export a run's human labels as a labelled dataset (human_faithful, human_claims).

    Example: vera labels export 20260101-120000-ab12cd -o labelled.jsonl
    """
    try:
        check_output_paths([output])
        store = RunStore(history or RunStore.DEFAULT_PATH, read_only=True)
        try:
            rows = export_labels(store, run_id, output, scope=scope.value)
        finally:
            store.close()
    except VeraError as exc:
        typer.echo(printable(f"error: {exc}"), err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    typer.echo(f"{rows} samples written to {output}")
