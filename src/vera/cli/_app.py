"""The `vera` app: its console, the error and warning shapes, and the entry point."""

from __future__ import annotations

import difflib
import importlib
import warnings
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from vera.cli._commands import COMMANDS

# The engine is imported inside the functions that use it: `vera --help` and `vera --version`
# load this module and `_commands` only (docs/architecture.md, "`import vera` is lazy").


class _LazyGroup(TyperGroup):
    """`vera`'s command group: `--help` lists `COMMANDS` without importing them; a command's
    module is imported when the command is looked up to run or to show its own help."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        home = COMMANDS.get(cmd_name)
        if cmd_name in self.commands or home is None:
            return self.commands.get(cmd_name)
        if self._listing:
            return TyperCommand(cmd_name, short_help=home.line)
        importlib.import_module(home.module)  # registers its commands on `app`
        command = _registered(cmd_name)
        command.short_help = home.line
        self.commands[cmd_name] = command
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # typer suggests a near name from the commands built so far; these are all of them
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:
            message = getattr(exc, "message", None)
            matches = difflib.get_close_matches(args[0], COMMANDS) if args else []
            if matches and isinstance(message, str) and "Did you mean" not in message:
                names = ", ".join(repr(name) for name in matches)
                exc.message = f"{message.rstrip('.')}. Did you mean {names}?"  # type: ignore[attr-defined]
            raise

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True  # the listing reads each command's line, not its module
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def _registered(name: str) -> Any:
    """The command or group `name` that a command module registered on `app`, as typer
    builds it for the group."""
    for info in app.registered_commands:
        if info.name == name:
            return typer.main.get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=app.rich_markup_mode,
            )
    raise LookupError(f"{COMMANDS[name].module} registers no command '{name}'")


app = typer.Typer(
    name="vera",
    help="VERA: claim-level faithfulness evaluation for RAG systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_LazyGroup,
)


class _Console(Console):
    """A console whose text passes through `redact`: a key in a URL that reached a message
    (an option echoed back, a server's error) is never printed; and through `printable`: an
    escape sequence in the data (an id, an answer quoted in a reason or an error) is shown,
    never obeyed by the terminal. Tables' cells are `printable` where `vera.render` builds them.

    Its width is read when it prints, not when `vera.cli` is imported: rich fixes `COLUMNS` at
    construction, so a process (a test worker, an app embedding the CLI) that set it later
    would get the width of whatever imported the CLI first."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if "width" not in kwargs:
            self._width = None  # rich reads COLUMNS and the terminal again on each print

    def print(self, *objects: Any, **kwargs: Any) -> None:
        from vera._text import printable
        from vera._types import redact

        super().print(
            *(printable(redact(o)) if isinstance(o, str) else o for o in objects), **kwargs
        )


out = _Console()
err = _Console(stderr=True)


def _help_hint(extra: str) -> str:
    """`install_hint` for a help text, which Typer reads as console markup: escaped, so the
    `[view]` of `vera-eval[view]` is shown, not taken for a style."""
    from vera._types import install_hint

    return escape(install_hint(extra))


def _version(value: bool) -> None:
    if value:
        from vera import __version__

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
    from vera import ExitCode

    # Not wrapped: a message is one line to read, grep and paste, whatever the width.
    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(ExitCode.USAGE) from None


def _write_json(path: Path, text: str, what: str) -> None:
    """`text` to `path`, whole or not at all (`atomic_text`); a failure is exit 2."""
    from vera import VeraError
    from vera.render import atomic_text

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
