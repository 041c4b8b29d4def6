"""`vera rubric items NAME`: a rubric's checklist, shown, and written to a file to edit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from vera import ConfigError, VeraError, load_settings, rubric_checklist
from vera.cli._app import _fail, app, out
from vera.cli._eval_flags import _JudgeFlag
from vera.judges import create_judge
from vera.metrics import write_items_file

# Escaped: typer reads help as console markup, where [rubric] would be taken for a style.
rubric_app = typer.Typer(help=r"Rubric metrics of vera.toml ([\[rubric]]).", no_args_is_help=True)
app.add_typer(rubric_app, name="rubric")


@rubric_app.command("items")
def items_command(
    name: Annotated[str, typer.Argument(help="The rubric's name in vera.toml.")],
    judge: _JudgeFlag = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Write the rubric with its items to this TOML file, to edit and pass back "
            "(rubrics_file = PATH in vera.toml).",
        ),
    ] = None,
) -> None:
    """Show the yes/no items a rubric's criteria become, and the checklist's fingerprint.

    The judge writes them once (the response cache keeps them: the next run asks nothing);
    items written in vera.toml are shown as they are.

    Example: vera rubric items no_legal_advice --judge openai:gpt-4o-mini --write rubric.toml
    """
    try:
        settings = load_settings({"judge": judge})
        rubrics = {r.name: r for r in settings.rubrics()}
        if name not in rubrics:
            known = ", ".join(rubrics) or "none: add a [[rubric]] table to vera.toml"
            raise ConfigError(f"no rubric named {name!r}; the rubrics are {known}")
        rubric = rubrics[name]
        checklist = asyncio.run(rubric_checklist(rubric, create_judge(settings.judge, settings)))
        if write is not None:
            write_items_file(rubric, checklist, write)
    except (VeraError, OSError) as exc:
        _fail(exc)
    out.print(
        f"Rubric {name} ({rubric.scope}), fingerprint {checklist.fingerprint}, written by "
        f"{checklist.written_by}",
        highlight=False,
        markup=False,
    )
    for item in checklist.items:
        marks = f" (weight {item.weight:g})" if item.weight != 1 else ""
        marks += " [sees the expected answer]" if item.reference else ""
        out.print(f"  {item.id}. {item.text}{marks}", highlight=False, markup=False)
    if write is not None:
        out.print(
            f"Written to {write}: edit the items, then set rubrics_file = {str(write)!r}"
            " in vera.toml (and remove the [[rubric]] table of the same name)",
            highlight=False,
            markup=False,
        )
