"""Writing a run's reports: what each format needs (the dataset for the HTML report's
responses in place, the run history for its trend), gathered once for the CLI and Python."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from vera.datasets import open_dataset
from vera.errors import ConfigError, VeraError
from vera.history import DEFAULT_HISTORY_PATH, RunStore
from vera.plan import RunPlan
from vera.report import Report, ResultSource, SampleResult
from vera.reports.registry import RenderContext, format_for_path, render_report
from vera.reports.view import HistoryPoint
from vera.settings import Settings
from vera.types import Sample

__all__ = [
    "atomic_text",
    "check_output_paths",
    "json_chunks",
    "render_context",
    "report_format",
    "stored_report_html",
    "write_report",
    "write_run_reports",
    "write_stored_report",
]

_STAMP = "%Y-%m-%dT%H:%M:%SZ"
TREND_RUNS = 20


def _samples(source: str | None, fields: Mapping[str, str] | None = None) -> dict[str, Sample]:
    """The dataset's samples by id, for the query and contexts the results do not carry,
    when the dataset can still be read (with the run's column mapping, `fields`). (A result's
    own response and contexts, where a pipeline answered, take precedence in the renderer:
    `vera.reports.samples`.)"""
    if source is None:
        return {}
    try:
        return {s.id: s for s in open_dataset(source, skip_invalid=True, fields=fields)}
    except VeraError:
        return {}


def _history(report: Report, store: RunStore) -> list[HistoryPoint]:
    # Only the dataset's newest finished runs are read, however long the history.
    newest = store.list(dataset=report.dataset, finished=True, limit=TREND_RUNS)
    return [
        HistoryPoint(r.id, datetime.fromtimestamp(r.created, UTC).strftime(_STAMP), r.metrics)
        for r in reversed(newest)
        if r.metrics
    ]


def render_context(
    report: Report,
    fmt: str,
    *,
    source: str | None = None,
    store: RunStore | None = None,
    gate_failures: Sequence[str] = (),
    results: ResultSource | None = None,
    fields: Mapping[str, str] | None = None,
) -> RenderContext:
    """What the `fmt` renderer needs beyond the report; only the HTML report reads the dataset
    and the history. `results` reads a streamed run's results back (see `RunResult.results`)."""
    if fmt != "html":
        return RenderContext(gate_failures=tuple(gate_failures), results=results)
    history = _history(report, store) if store is not None else []
    return RenderContext(
        samples=_samples(source, fields),
        history=history,
        gate_failures=tuple(gate_failures),
        results=results,
    )


def report_format(path: Path, format: str | None = None) -> str:
    """The format asked for, else the one `path`'s extension names."""
    if format:
        return format
    found = format_for_path(path)
    if found is None:
        raise ConfigError(
            f"cannot tell the report format of {path} from its extension; "
            "use --format json, html, md or junit"
        )
    return found


def write_report(
    report: Report,
    path: Path,
    fmt: str,
    *,
    source: str | None = None,
    store: RunStore | None = None,
    gate_failures: Sequence[str] = (),
    results: ResultSource | None = None,
    fields: Mapping[str, str] | None = None,
) -> None:
    """Render `report` as `fmt` and write it to `path`; the HTML report reads the dataset at
    `source` and the trend from `store`. A streamed run's JSON report is written a sample at a
    time from `results`, never built whole in memory."""
    check_output_paths([path])
    with atomic_text(path, what="the report") as out:
        if fmt == "json" and results is not None:
            out.writelines(json_chunks(report, results()))
            return
        context = render_context(
            report,
            fmt,
            source=source,
            store=store,
            gate_failures=gate_failures,
            results=results,
            fields=fields,
        )
        out.write(render_report(fmt, report, context))


@functools.cache
def _new_file_mode() -> int:
    # The mode `open()` would give a new file; mkstemp's is 0600. Read once: the umask can
    # only be read by setting it.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_text(path: Path, *, what: str = "the file") -> Iterator[TextIO]:
    """A text file that replaces `path` only once it is whole: written to a temporary file in
    the same folder, synced, then renamed over `path` (atomic on POSIX). A failure on the way
    (a full disk, a quota) removes the temporary file and leaves any earlier `path` as it was;
    it is raised as `ConfigError` naming `what` and the path ("the report", "the dataset")."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".partial", dir=path.parent
        )
    except OSError as exc:
        raise _write_error(path, what, exc) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())  # a delayed-allocation ENOSPC shows here, not after rename
        os.chmod(temporary, _new_file_mode())
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise _write_error(path, what, exc) from None
        raise


def _write_error(path: Path, what: str, exc: OSError) -> ConfigError:
    reason = exc.strerror or str(exc)
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    fix = "; free some space or write it elsewhere" if full else ""
    kept = " (any earlier file there is left as it was)" if path.exists() else ""
    return ConfigError(f"cannot write {what} to {path}: {reason}{kept}{fix}")


_SAMPLES_SLOT = "\x00samples\x00"


def json_chunks(report: Report, results: Iterable[SampleResult]) -> Iterator[str]:
    """`report` as the text `Report.to_json()` gives, with its samples taken from `results`
    one at a time: the same bytes, without the whole document in memory."""
    data = report.model_copy(update={"samples": ()}).to_dict()
    data["samples"] = _SAMPLES_SLOT
    head, tail = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).split(
        json.dumps(_SAMPLES_SLOT)
    )
    yield head
    first = True
    for result in results:
        text = json.dumps(
            result.model_dump(mode="json"), indent=2, ensure_ascii=False, allow_nan=False
        )
        yield ("[\n    " if first else ",\n    ") + text.replace("\n", "\n    ")
        first = False
    yield ("[]" if first else "\n  ]") + tail + "\n"


def check_output_paths(paths: Iterable[Path]) -> None:
    """Refuse report paths that cannot be written (a folder, a file where a folder must be, a
    folder that is read-only), so a run is never spent before its report fails to save."""
    for path in paths:
        if path.is_dir():
            raise ConfigError(f"the report path {path} is a folder; give a file path")
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise ConfigError(f"cannot write the report to {path}: {folder} is not a folder")
        if not os.access(folder, os.W_OK):
            raise ConfigError(f"cannot write the report to {path}: {folder} is read-only")


def write_run_reports(
    report: Report,
    plan: RunPlan,
    outputs: Mapping[str, Path],
    *,
    gate_failures: Sequence[str] = (),
    results: ResultSource | None = None,
) -> None:
    """Every report `outputs` asks for (format -> path) of a run of `plan`; the run history is
    opened once, and only when the HTML report needs its trend. `results` reads a streamed
    run's results back."""
    settings = plan.settings
    wants_history = "html" in outputs and settings.history
    store = _trend_store(settings) if wants_history else None
    failed: list[str] = []
    try:
        for fmt, path in outputs.items():
            try:
                write_report(
                    report,
                    path,
                    fmt,
                    source=plan.dataset.source,
                    store=store,
                    gate_failures=gate_failures,
                    results=results,
                    fields=settings.fields,
                )
            except VeraError as exc:  # one report that fails (a full disk) spares the others
                failed.append(str(exc))
    finally:
        if store is not None:
            store.close()
    if failed:
        raise ConfigError("; ".join(failed))


def _trend_store(settings: Settings) -> RunStore | None:
    """The history, read-only, for the HTML report's trend; None (no trend) when it cannot be
    opened: the report matters more than its trend."""
    try:
        return RunStore(
            settings.history_path or DEFAULT_HISTORY_PATH,
            lock_timeout=settings.lock_timeout,
            read_only=True,
        )
    except VeraError:
        return None


def _stored_run(store: RunStore, run_id: str) -> tuple[Report, str | None]:
    """A finished stored run's report, and the dataset source its plan read (for the HTML
    report's texts), when that is a path or bundled name."""
    record = store.get(run_id)
    report = store.report(record.id)
    source = record.options.get("dataset", {})
    source = source.get("source") if isinstance(source, dict) else source
    return report, source if isinstance(source, str) else None


def _stored_fields(store: RunStore, run_id: str) -> dict[str, str]:
    """The column mapping a stored run read its dataset with (`--field`), to read it again."""
    settings = store.get(run_id).options.get("settings", {})
    fields = settings.get("fields") if isinstance(settings, dict) else None
    return dict(fields) if isinstance(fields, dict) else {}


def stored_report_html(
    store: RunStore, run_id: str, *, links: Sequence[tuple[str, str]] = ()
) -> str:
    """A stored run's HTML report, as `vera report RUN_ID -o report.html` writes it (the texts
    from the dataset source where it can still be read, the trend from `store`), with `links`
    above the title (`vera view`'s pages). `ConfigError` for an unknown or unfinished run."""
    report, source = _stored_run(store, run_id)
    fields = _stored_fields(store, run_id)
    context = render_context(report, "html", source=source, store=store, fields=fields)
    return render_report("html", report, replace(context, links=links))


def write_stored_report(
    store: RunStore, run_id: str, path: Path, format: str | None = None
) -> None:
    """Write a stored run's report to `path` in `format` (default: from the extension), as
    `vera report` does; the HTML is what `stored_report_html` gives without links."""
    report, source = _stored_run(store, run_id)
    fmt, fields = report_format(path, format), _stored_fields(store, run_id)
    write_report(report, path, fmt, source=source, store=store, fields=fields)
