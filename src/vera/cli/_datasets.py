"""`vera datasets list`: the bundled datasets."""

from __future__ import annotations

import typer
from rich.table import Table

from vera import load_dataset
from vera.cli._app import app, out
from vera.datasets import BUNDLED
from vera.render._console import plain_cells

datasets_app = typer.Typer(help="The datasets bundled with VERA.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("list")
def datasets_list() -> None:
    """List the bundled datasets: `vera eval --dataset NAME` runs one."""
    table = Table(title="Bundled datasets")
    for column in ("Name", "Dataset", "Samples", "Documents", "Categories"):
        table.add_column(column)
    for name in BUNDLED:
        data = load_dataset(name)
        samples = list(data)
        categories = sorted({s.category or "uncategorized" for s in samples})
        table.add_row(
            *plain_cells(name, data.name, len(samples), len(data.documents), ", ".join(categories))
        )
    out.print(table)
