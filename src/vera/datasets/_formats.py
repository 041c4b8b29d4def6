"""Dataset formats by name: each a `DatasetFormat` in one registry, built-ins and plugins alike.

A format is found by `--format` / `format=` (its name), by a file's extension, or by content
(a format that `detects` its files among another format's, as OTLP traces among .json/.jsonl
files). Every error message and the `--format` help list the registered names, so adding a
format is one module defining its `DatasetFormat` plus one `FORMAT_REGISTRY.register` line
below; another package adds one through the `vera.dataset_formats` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vera._json import bounded_lines
from vera._registry import Registry
from vera._types._errors import ConfigError, DatasetError
from vera.datasets._readers import (
    RawRow,
    json_rows,
    read_csv_rows,
    read_json_document,
    read_jsonl_rows,
)

ENTRY_POINT_GROUP = "vera.dataset_formats"


@dataclass(frozen=True)
class DatasetFormat:
    """How to read one dataset format.

    `read(path)` yields the file's rows as `RawRow`s, each with the place it came from ("line
    7"); a row that cannot be read is a `RawRow` whose data is `invalid_data(problem)`, so
    `--skip-invalid` records it and reads on. `extensions` (".tsv") choose the format by file
    name; `summary` explains it in the `--format` help. `text_cells` says every cell is text (as
    in CSV), so validation parses numbers and lists out of strings. `check(path)` runs when the
    dataset is opened, so a missing extra or a broken file fails before the run; `count_rows`
    says how many rows there are where that is cheap (for a progress bar). `detects(path)`
    claims a file whose extension belongs to one of the formats named in `within`.
    """

    read: Callable[[Path], Iterator[RawRow]]
    extensions: tuple[str, ...] = ()
    summary: str = ""
    text_cells: bool = False
    check: Callable[[Path], object] | None = None
    count_rows: Callable[[Path], int] | None = None
    detects: Callable[[Path], bool] | None = None
    within: tuple[str, ...] = ()


def read_json_rows(path: Path) -> Iterator[RawRow]:
    """The rows of a JSON file: an array of rows or an object holding one."""
    yield from json_rows(path, read_json_document(path))


def count_jsonl_rows(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _, line in bounded_lines(fh) if line is None or line.strip())


FORMAT_REGISTRY: Registry[DatasetFormat] = Registry("dataset format", ENTRY_POINT_GROUP)
"""Every dataset format by name: the built-ins, then installed plugins."""
FORMAT_REGISTRY.register("json", DatasetFormat(read_json_rows, (".json",)))
FORMAT_REGISTRY.register(
    "jsonl", DatasetFormat(read_jsonl_rows, (".jsonl", ".ndjson"), count_rows=count_jsonl_rows)
)
FORMAT_REGISTRY.register("csv", DatasetFormat(read_csv_rows, (".csv",), text_cells=True))
FORMAT_REGISTRY.register("parquet", "vera.datasets._parquet:PARQUET")
FORMAT_REGISTRY.register("otlp", "vera.datasets._otlp:OTLP")


def dataset_format(name: str) -> DatasetFormat:
    """The format registered as `name`; `DatasetError` listing the registered names if none is,
    `ConfigError` if a plugin's object is not a `DatasetFormat`."""
    found = FORMAT_REGISTRY.find(name.lower().lstrip("."))
    if found is None:
        raise DatasetError(f"unknown dataset format {name!r}; expected {_listed(_names())}")
    if not isinstance(found, DatasetFormat):
        raise ConfigError(
            f"dataset format {name!r} is {type(found).__name__}, not a vera.datasets.DatasetFormat"
        )
    return found


def detect_format(path: Path, format: str | None) -> str:
    """The name of the format to read `path` with: `format` when given, else the one its
    extension names, or a format that recognises the file's content among those."""
    if format is not None:
        name = format.lower().lstrip(".")
        dataset_format(name)
        return FORMAT_REGISTRY.key(name)
    by_extension = _extensions()
    detected = by_extension.get(path.suffix.lower())
    if detected is None:
        known = _listed(list(by_extension))
        raise DatasetError(
            f"{path}: unknown dataset format {path.suffix or '(no extension)'!r}; expected a "
            f"{known} file (or pass format='jsonl' / --format)"
        )
    if not path.is_file():
        return detected
    return next((name for name in _detectors(detected) if _claims(name, path)), detected)


def _claims(name: str, path: Path) -> bool:
    detects = dataset_format(name).detects
    return detects is not None and detects(path)


def _detectors(detected: str) -> list[str]:
    """The formats that may claim a file of format `detected` by its content."""
    return [name for name in _names() if detected in dataset_format(name).within]


def _extensions() -> dict[str, str]:
    """Extension → format name over every format; `ConfigError` when two claim one."""
    owners: dict[str, str] = {}
    for name in _names():
        for extension in dataset_format(name).extensions:
            suffix = extension.lower()
            if suffix in owners:
                raise ConfigError(
                    f"dataset formats {owners[suffix]!r} and {name!r} both claim the extension "
                    f"{suffix!r}; uninstall one of the plugins or pass --format"
                )
            owners[suffix] = name
    return owners


def _names() -> list[str]:
    return FORMAT_REGISTRY.names()


def _listed(names: list[str]) -> str:
    """ "a, b or c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def format_help() -> str:
    """The `--format` help: the registered names (plugins are not imported for it), each with
    its summary."""
    names = [
        f"{name} ({summary})" if (summary := dataset_format(name).summary) else name
        for name in FORMAT_REGISTRY.builtin_names()
    ]
    return (
        f"Dataset format when the extension does not say: {', '.join(names)}, or an installed "
        "plugin's."
    )
