"""Report formats by name, for `vera report --format` and output paths, on the shared
`vera.registry.Registry`.

A reporter has a `name`, the file `extension` its output goes in, and
`render(report, context) -> str`; `RenderContext` carries what some formats need besides the
report. Built in: "json", "html", "md" (alias "markdown") and "junit". Installed packages add
formats under the `vera.reporters` entry-point group: the entry point's name is the format name
and its object a reporter instance.

This module must not import `vera.providers` (reports never depend on how a run was judged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from vera.errors import ConfigError
from vera.registry import Registry
from vera.report import Report, ResultSource, SampleResult
from vera.reports.html import render_html
from vera.reports.junit import render_junit
from vera.reports.markdown import render_markdown
from vera.reports.view import HistoryPoint
from vera.types import Sample

__all__ = [
    "ENTRY_POINT_GROUP",
    "REPORTER_REGISTRY",
    "FunctionReporter",
    "RenderContext",
    "Reporter",
    "format_for_path",
    "get_reporter",
    "render_report",
    "reporter_names",
]

ENTRY_POINT_GROUP = "vera.reporters"
"""Packages can offer report formats under this entry-point group (name = format name)."""


@dataclass(frozen=True)
class RenderContext:
    """What a format may need besides the report: the evaluated `samples` by id (the HTML report
    shows responses with their claims in place), earlier runs' `history` for trend charts
    (oldest first), the quality gate's `gate_failures`, and `results`, where a run streamed its
    per-sample results to the run store instead of keeping them in `report.samples`. `links`
    are (label, URL) pairs the HTML report shows above its title (`vera view`'s pages)."""

    samples: Mapping[str, Sample] = field(default_factory=dict)
    history: Sequence[HistoryPoint] = ()
    gate_failures: Sequence[str] = ()
    results: ResultSource | None = None
    links: Sequence[tuple[str, str]] = ()

    def sample_results(self, report: Report) -> Iterable[SampleResult]:
        """Every sample's result, in dataset order, read once: from `results` when the run
        streamed them, else `report.samples`. Renderers iterate this, never `report.samples`."""
        return self.results() if self.results is not None else report.samples


@runtime_checkable
class Reporter(Protocol):
    """A report format: its `name`, its file `extension` (with the dot) and how it renders."""

    @property
    def name(self) -> str:
        """The format's name, as `--format` takes it."""
        ...

    @property
    def extension(self) -> str:
        """The file extension its output is written with, such as ".json"."""
        ...

    def render(self, report: Report, context: RenderContext) -> str:
        """The report as text in this format."""
        ...


@dataclass(frozen=True)
class FunctionReporter:
    """A reporter made of a name, an extension and a render function."""

    name: str
    extension: str
    renderer: Callable[[Report, RenderContext], str]

    def render(self, report: Report, context: RenderContext) -> str:
        """The report as text, by the render function."""
        return self.renderer(report, context)


def _json(report: Report, context: RenderContext) -> str:
    return report.to_json() + "\n"


def _html(report: Report, context: RenderContext) -> str:
    return render_html(
        report,
        samples=context.samples,
        history=context.history,
        results=context.sample_results(report),
        links=context.links,
    )


def _markdown(report: Report, context: RenderContext) -> str:
    return render_markdown(
        report, gate_failures=context.gate_failures, results=context.sample_results(report)
    )


def _junit(report: Report, context: RenderContext) -> str:
    return render_junit(report, context.sample_results(report))


REPORTER_REGISTRY: Registry[Reporter] = Registry("report format", ENTRY_POINT_GROUP)
"""Every report format by name: the built-ins and installed plugins."""
REPORTER_REGISTRY.register("json", FunctionReporter("json", ".json", _json))
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
    """The reporter `format` names; `ConfigError` suggesting the closest for an unknown one, or
    for a plugin object that is not a reporter."""
    reporter = REPORTER_REGISTRY.get(format)
    if not isinstance(reporter, Reporter):
        raise ConfigError(
            f"report format {format.strip()!r} is {type(reporter).__name__}, not a reporter "
            "(it needs name, extension and render(report, context))"
        )
    return reporter


_NO_CONTEXT = RenderContext()


def render_report(format: str, report: Report, context: RenderContext = _NO_CONTEXT) -> str:
    """`report` as text in the format `format` names ("json", "html", "md", "junit", ...)."""
    return get_reporter(format).render(report, context)


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
