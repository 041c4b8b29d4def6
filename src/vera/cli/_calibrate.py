"""`vera calibrate`: judge scores corrected with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from vera import VeraError, calibrate, load_settings
from vera.cli._app import _fail, _write_json, app, out
from vera.cli._eval_flags import _JudgeFlag
from vera.cli._runs import HistoryOption
from vera.render._calibration import calibration_lines
from vera.render._outputs import check_output_paths


@app.command("calibrate")
def calibrate_command(
    source: Annotated[
        str,
        typer.Argument(
            help="A JSON report, a dataset file whose samples carry human_faithful, or a "
            "stored run's id (or a unique prefix).",
            show_default=False,
        ),
    ],
    judge: _JudgeFlag = None,
    history: HistoryOption = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the calibration block as JSON here.")
    ] = None,
) -> None:
    """How far to trust the judge: its agreement with human labels (human_faithful) and the
    run's figures corrected by them, with 95 % intervals.

    Example: vera calibrate labelled.jsonl --judge offline:learned
    """
    try:
        check_output_paths([json_path] if json_path is not None else [])
        settings = load_settings({"judge": judge, "history_path": history})
        found = calibrate(source, settings.judge, settings=settings)
    except VeraError as exc:
        _fail(exc)
    for line in calibration_lines(found):
        out.print(line, highlight=False, markup=False)
    if json_path is not None:
        _write_json(json_path, found.model_dump_json(indent=2), "the calibration")
        out.print(f"Calibration written to {escape(str(json_path))}", highlight=False)
