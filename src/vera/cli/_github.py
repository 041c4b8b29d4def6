"""`vera github`: the steps of VERA's GitHub Action (action.yml) after `vera eval`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from vera import VeraError
from vera.cli._app import _fail, app, out

github_app = typer.Typer(
    help="VERA in a GitHub Actions job: step outputs and the pull-request comment.",
    no_args_is_help=True,
)
app.add_typer(github_app, name="github")

ReportOption = Annotated[
    Path, typer.Option("--report", metavar="PATH", help="The JSON report of vera eval -o.")
]
SummaryOption = Annotated[
    Path | None,
    typer.Option("--summary", metavar="PATH", help="vera eval's --markdown summary."),
]
ExitCodeOption = Annotated[
    int | None, typer.Option("--exit-code", metavar="N", help="vera eval's exit code.")
]


@github_app.command("outputs")
def outputs_command(
    report: ReportOption,
    exit_code: Annotated[
        int, typer.Option("--exit-code", metavar="N", help="vera eval's exit code.")
    ],
    summary: SummaryOption = None,
) -> None:
    """Append the step outputs to $GITHUB_OUTPUT and the summary to $GITHUB_STEP_SUMMARY.

    Example: vera github outputs --report vera/report.json --summary vera/summary.md --exit-code 1
    """
    from vera.integrations.github import write_step_outputs  # only for this command

    try:
        found = write_step_outputs(report, exit_code=exit_code, summary_path=summary)
    except VeraError as exc:
        _fail(exc)
    out.print(", ".join(f"{k}={v}" for k, v in found.items()), highlight=False, markup=False)


@github_app.command("comment")
def comment_command(
    report: ReportOption,
    summary: SummaryOption = None,
    exit_code: ExitCodeOption = None,
    name: Annotated[
        str, typer.Option("--name", help="The report's name: one comment per name.")
    ] = "vera",
    history: Annotated[
        Path | None,
        typer.Option("--history", metavar="PATH", help="The run history (default: the report's)."),
    ] = None,
    artifact_url: Annotated[
        str | None, typer.Option("--artifact-url", metavar="URL", help="The report artifact.")
    ] = None,
) -> None:
    """Create or update the pull request's one VERA comment; the token is $GITHUB_TOKEN.

    Example: vera github comment --report vera/report.json --summary vera/summary.md --exit-code 1
    """
    from vera.integrations.github import post_comment  # only for this command

    try:
        outcome = post_comment(
            report,
            name=name,
            exit_code=exit_code,
            summary_path=summary,
            history=history,
            artifact_url=artifact_url,
        )
    except VeraError as exc:
        _fail(exc)
    if outcome.comment is None:
        out.print(f"{outcome.skipped}", highlight=False, markup=False)
        return
    done = outcome.comment
    out.print(f"Comment {done.action}: {escape(done.url or str(done.id))}", highlight=False)
