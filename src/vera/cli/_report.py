"""`vera report`: a stored run's reports, written again."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from vera import VeraError
from vera.cli._app import _fail, app, out
from vera.cli._runs import HistoryOption, _store
from vera.render import (
    write_stored_report,
)


@app.command("report")
def report_command(
    run_id: str,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write it.")],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="json, html, md, junit or a plugin's format; default from the extension.",
        ),
    ] = None,
    history: HistoryOption = None,
) -> None:
    """Write a stored run's report again, from the run history.

    Example: vera report 20260101-120000-ab12cd -o report.html
    """
    try:
        write_stored_report(_store(history), run_id, output, format)
    except VeraError as exc:
        _fail(exc)
    out.print(f"Report written to {escape(str(output))}", highlight=False)
