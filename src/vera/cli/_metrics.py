"""`vera metrics`: every metric by name."""

from __future__ import annotations

from vera import VeraError, load_settings
from vera.cli._app import _fail, app, out
from vera.metrics import METRIC_REGISTRY, Rubric, goal_completion
from vera.render._console import Cell, Column, print_table

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
    for name in METRIC_REGISTRY.names():
        cls = METRIC_REGISTRY.get(name)
        needs = ", ".join(sorted(need.value for need in cls.needs)) or "none"
        better = "higher" if cls.higher_is_better else "lower"
        rows.append([name, cls.description, better, needs])
    rows.extend(_rubric_rows())
    # A grid where it fits whole, else each metric stacked: a name is never cut.
    print_table(out, "VERA metrics", _METRICS_COLUMNS, rows)
    out.print("Metrics that share judge work share its calls: see docs/metrics.md.")
    out.print(
        "Rubrics: criteria of your own in plain words, as [[rubric]] tables in vera.toml "
        "(vera rubric items NAME shows their checklist); see docs/metrics.md.",
        markup=False,
        highlight=False,
    )


def _rubric_rows() -> list[list[Cell]]:
    """A row for each rubric of vera.toml: its criteria (or items) and its scope's work."""
    try:
        rubrics = load_settings().rubrics()
    except VeraError as exc:
        _fail(exc)
    rows: list[list[Cell]] = []
    configured = {r.name for r in rubrics}
    presets = [goal_completion()] if "goal_completion" not in configured else []
    for rubric in (*presets, *rubrics):
        what = rubric.criteria.strip() or "; ".join(item.text for item in rubric.items)
        work = "claims, rubric" if rubric.scope == "claim" else "rubric"
        rows.append(
            [rubric.name, f"rubric ({rubric.scope}): {what}; {Rubric.description}", "higher", work]
        )
    return rows
