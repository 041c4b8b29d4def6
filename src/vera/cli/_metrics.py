"""`vera metrics`: every metric by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vera.cli._app import app, out
from vera.metrics import metric_classes
from vera.render import (
    Cell,
    Column,
    print_table,
)

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    pass


_METRICS_COLUMNS = (
    Column("Name"),
    Column("Measures", "measures", "left"),
    Column("Better", "better", "left"),
    Column("Judge work", "judge work", "left"),
)


@app.command("metrics")
def metrics_command() -> None:
    """List the metrics `--metric` accepts, with what each measures and costs."""
    rows: list[list[Cell]] = []
    for name, cls in metric_classes().items():
        needs = ", ".join(sorted(need.value for need in cls.needs)) or "none"
        better = "higher" if cls.higher_is_better else "lower"
        rows.append([name, cls.description, better, needs])
    # A grid where it fits whole, else each metric stacked: a name is never cut.
    print_table(out, "VERA metrics", _METRICS_COLUMNS, rows)
    out.print("Metrics that share judge work share its calls: see docs/metrics.md.")
