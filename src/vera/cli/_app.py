"""The `vera` app: its console, the error and warning shapes, and the entry point."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from vera import __version__
from vera.render import (
    atomic_text,
)
from vera.run import (
    EXIT_USAGE,
)
from vera.text import printable
from vera.types import VeraError, install_hint, redact

if TYPE_CHECKING:  # the generator's modules load only for `vera generate`
    pass


app = typer.Typer(
    name="vera",
    help="VERA: claim-level faithfulness evaluation for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class _Console(Console):
    """A console whose text passes through `redact`: a key in a URL that reached a message
    (an option echoed back, a server's error) is never printed; and through `printable`: an
    escape sequence in the data (an id, an answer quoted in a reason or an error) is shown,
    never obeyed by the terminal. Tables' cells are `printable` where `vera.render` builds them."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(
            *(printable(redact(o)) if isinstance(o, str) else o for o in objects), **kwargs
        )


out = _Console()
err = _Console(stderr=True)


def _help_hint(extra: str) -> str:
    """`install_hint` for a help text, which Typer reads as console markup: escaped, so the
    `[view]` of `vera-eval[view]` is shown, not taken for a style."""
    return escape(install_hint(extra))


def _version(value: bool) -> None:
    if value:
        out.print(f"vera {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """VERA: claim-level faithfulness evaluation for RAG systems."""


EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a process ended by SIGINT (128 + 2)."""


def _fail(exc: Exception) -> NoReturn:
    """Bad usage or input: the message, and exit 2 (nothing was evaluated)."""
    # Not wrapped: a message is one line to read, grep and paste, whatever the width.
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE) from None


def _write_json(path: Path, text: str, what: str) -> None:
    """`text` to `path`, whole or not at all (`atomic_text`); a failure is exit 2."""
    try:
        with atomic_text(path, what=what) as file:
            file.write(text + "\n")
    except VeraError as exc:
        _fail(exc)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    err.print(f"[yellow]warning:[/] {escape(str(message))}", highlight=False)


def main() -> None:
    """Entry point of the `vera` console script."""
    # The library says what it skipped through `warnings`; a user reads it as one plain line.
    warnings.showwarning = _show_warning
    app()
