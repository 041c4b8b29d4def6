"""Report formats by name, for `vera eval --report FORMAT=PATH`, `vera report --format` and
output paths, on the shared `vera._registry.Registry`.

A reporter has a `name`, the file `extension` its output goes in, and
`write(view, out)`: it writes the finished run a `RunView` shows (aggregates, gate results,
streamed results, dataset texts, history) to a text file. Every format goes through that one
door with the same view. Built in: "json", "html", "md" (alias "markdown") and "junit".
Installed packages add formats under the `vera.reporters` entry-point group: the entry point's
name is the format name and its object a reporter instance (one with only the earlier
`render(report, context) -> str` is still accepted, given the same data).

This module must not import `vera.providers` (reports never depend on how a run was judged).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO, runtime_checkable

from vera._registry import Registry
from vera._types._errors import ConfigError
from vera._types._report import Report
from vera.render._html import render_html
from vera.render._json_report import write_json
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.render._run_view import RenderContext, RunView

ENTRY_POINT_GROUP = "vera.reporters"
"""Packages can offer report formats under this entry-point group (name = format name)."""


@runtime_checkable
class Reporter(Protocol):
    """A report format: its `name`, its file `extension` (with the dot) and how it writes a
    finished run. Every output, built-in or plugin, is written through `write`."""

    @property
    def name(self) -> str:
        """The format's name, as `--format` and `--report FORMAT=PATH` take it."""
        ...

    @property
    def extension(self) -> str:
        """The file extension its output is written with, such as ".json"."""
        ...

    def write(self, view: RunView, out: TextIO) -> None:
        """Write the run `view` shows to `out` in this format."""
        ...


@runtime_checkable
class RenderingReporter(Protocol):
    """The earlier plugin shape, still accepted: `render(report, context) -> str`, given the
    same data as `write` (`RunView.context()`)."""

    @property
    def name(self) -> str: ...

    @property
    def extension(self) -> str: ...

    def render(self, report: Report, context: RenderContext) -> str:
        """The report as text in this format."""
        ...


@dataclass(frozen=True)
class FunctionReporter:
    """A reporter made of a name, an extension and a write function."""

    name: str
    extension: str
    writer: Callable[[RunView, TextIO], None]

    def write(self, view: RunView, out: TextIO) -> None:
        """Write the run by the write function."""
        self.writer(view, out)


@dataclass(frozen=True)
class _Rendered:
    """A `RenderingReporter` behind the one door: it renders from the view's context."""

    reporter: RenderingReporter

    @property
    def name(self) -> str:
        return self.reporter.name

    @property
    def extension(self) -> str:
        return self.reporter.extension

    def write(self, view: RunView, out: TextIO) -> None:
        out.write(self.reporter.render(view.report, view.context()))


def _html(view: RunView, out: TextIO) -> None:
    out.write(
        render_html(
            view.report,
            samples=view.samples,
            history=view.history,
            results=view.sample_results(),
            links=view.links,
            conversations=view.conversations,
            thread_link=view.thread_link,
        )
    )


def _markdown(view: RunView, out: TextIO) -> None:
    out.write(
        render_markdown(
            view.report, gate_failures=view.gate_failures, results=view.sample_results()
        )
    )


def _junit(view: RunView, out: TextIO) -> None:
    out.write(render_junit(view.report, view.sample_results()))


REPORTER_REGISTRY: Registry[Reporter] = Registry("report format", ENTRY_POINT_GROUP)
"""Every report format by name: the built-ins and installed plugins."""
REPORTER_REGISTRY.register("json", FunctionReporter("json", ".json", write_json))
REPORTER_REGISTRY.register("html", FunctionReporter("html", ".html", _html))
REPORTER_REGISTRY.register("md", FunctionReporter("md", ".md", _markdown), aliases=["markdown"])
REPORTER_REGISTRY.register("junit", FunctionReporter("junit", ".xml", _junit))

_EXTENSIONS = {
    ".json": "json",
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
    ".xml": "junit",
}
"""File extension → built-in format."""


def reporter_names() -> list[str]:
    """Every format name, plugins loaded: built-ins first, then plugins by name (aliases such
    as "markdown" are accepted but not listed)."""
    return REPORTER_REGISTRY.names()


def get_reporter(format: str) -> Reporter:
    """The reporter `format` names (a `render`-only plugin wrapped to write); `ConfigError`
    suggesting the closest for an unknown one, or for a plugin object that is not a reporter."""
    reporter = REPORTER_REGISTRY.get(format)
    if isinstance(reporter, Reporter):
        return reporter
    if isinstance(reporter, RenderingReporter):
        return _Rendered(reporter)
    raise ConfigError(
        f"report format {format.strip()!r} is {type(reporter).__name__}, not a reporter "
        "(it needs name, extension and write(view, out))"
    )


_NO_CONTEXT = RenderContext()


def render_report(format: str, report: Report, context: RenderContext = _NO_CONTEXT) -> str:
    """`report` as text in the format `format` names ("json", "html", "md", "junit", ...),
    written through the reporter's `write` like every output."""
    out = io.StringIO()
    get_reporter(format).write(RunView.of(report, context), out)
    return out.getvalue()


def format_for_path(path: str | Path) -> str | None:
    """The format a file's extension implies (".json" → "json", ".html"/".htm" → "html",
    ".md" → "md", ".xml" → "junit", else a plugin format's extension), or None."""
    suffix = Path(path).suffix.lower()
    if not suffix:
        return None
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    for name in REPORTER_REGISTRY.names():
        if get_reporter(name).extension.lower() == suffix:
            return name
    return None
