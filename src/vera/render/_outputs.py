"""Writing a run's reports through one door: a `RunView` of the finished run, built once and
shared by every output (the store opened at most once, the dataset read at most once), handed
to each format's `Reporter.write`, built-in or plugin, for the CLI and Python alike.

    with open_run_view(result) as view:          # result: a RunResult of run_plan
        write_reports(view, [("html", Path("r.html")), ("csv", Path("r.csv"))])
    write_run_reports(result, {"json": Path("r.json")})   # the same, in one call
"""

from __future__ import annotations

import contextlib
import errno
import functools
import heapq
import io
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from vera._plan._settings import Settings
from vera._results._builder import ResultSource
from vera._store._history import DEFAULT_HISTORY_PATH, RunStore
from vera._types import Conversation, Sample
from vera._types._errors import ConfigError, VeraError
from vera._types._report import Report, SampleResult
from vera.datasets import open_dataset
from vera.datasets._conversations import read_conversations
from vera.render._registry import format_for_path, get_reporter, reporter_names
from vera.render._run_view import RunView
from vera.render._threads import Thread, ThreadWants, report_threads
from vera.render._view import HistoryPoint

if TYPE_CHECKING:
    from vera._run._engine import RunResult

_STAMP = "%Y-%m-%dT%H:%M:%SZ"
TREND_RUNS = 20

ReportTargets = Mapping[str, Path] | Iterable[tuple[str, Path]]
"""The reports to write: format -> path, or (format, path) pairs (a format may be named twice)."""


@dataclass(frozen=True)
class _ReadBack:
    """How the run read its dataset, so it is read back alike: the column mapping (`--field`)
    and the conversation settings, which decide a turn's contexts and their order (a verdict
    names its context by index)."""

    fields: Mapping[str, str] = field(default_factory=dict)
    user_facts: bool = True
    agent_steps: bool = False


def _samples(source: str | None, how: _ReadBack) -> dict[str, Sample]:
    """The dataset's samples by id, for the query and contexts the results do not carry,
    when the dataset can still be read (as the run read it, `how`). (A result's own response
    and contexts, where a pipeline answered, take precedence in the renderer:
    `vera.render._samples`.)"""
    return {s.id: s for s in _read_samples(source, how)}


def _read_samples(source: str | None, how: _ReadBack) -> Iterator[Sample]:
    """The dataset's samples in order, streamed, as the run read them (`how`); none once it
    cannot be read any more."""
    if source is None:
        return
    try:
        yield from open_dataset(
            source,
            skip_invalid=True,
            fields=how.fields,
            user_facts=how.user_facts,
            agent_steps=how.agent_steps,
        )
    except VeraError:
        return


def _conversations(source: str | None) -> dict[str, Conversation]:
    """The dataset's conversations by id, every message as read, for the HTML report's
    threads, when the dataset can still be read as conversations; else none (the threads then
    show what the turn samples hold, and say so)."""
    if source is None:
        return {}
    try:
        return {c.id: c for c in read_conversations(source)}
    except VeraError:
        return {}


def _history(report: Report, store: RunStore | None) -> list[HistoryPoint]:
    # Only the dataset's newest finished runs are read, however long the history; --quick
    # runs (its first samples only) are left out of the trend of its whole runs.
    if store is None:
        return []
    newest = store.list(dataset=report.dataset, finished=True, limit=TREND_RUNS, full=True)
    return [
        HistoryPoint(r.id, datetime.fromtimestamp(r.created, UTC).strftime(_STAMP), r.metrics)
        for r in reversed(newest)
        if r.metrics
    ]


def report_format(path: Path, format: str | None = None) -> str:
    """The format asked for, else the one `path`'s extension names (`format_for_path`), else
    JSON: the one rule every command's `-o` follows, so `-o report.html` is always HTML."""
    return format or format_for_path(path) or "json"


def output_format(path: Path, formats: tuple[str, ...], command: str) -> str:
    """`report_format` for a command that writes only `formats`: a suffix naming another
    format is refused (`ConfigError`) before any work, rather than written in the wrong one."""
    found = report_format(path)
    if found not in formats:
        raise ConfigError(
            f"-o {path}: its extension asks for {found}, which {command} does not write; "
            f"give a path ending in {' or '.join(_SUFFIXES.get(f, '.' + f) for f in formats)}"
        )
    return found


_SUFFIXES = {"json": ".json", "html": ".html", "md": ".md", "junit": ".xml"}


def parse_report_option(values: Iterable[str]) -> list[tuple[str, Path]]:
    """`--report FORMAT=PATH` values as (format, path) pairs; `ConfigError` for a value
    without `=` or with an unknown format (suggesting the closest)."""
    targets: list[tuple[str, Path]] = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not fmt.strip() or not path.strip():
            raise ConfigError(
                f"--report {value!r}: give FORMAT=PATH, e.g. --report html=report.html "
                f"(formats: {', '.join(reporter_names())})"
            )
        try:
            get_reporter(fmt)
        except ConfigError as exc:
            raise ConfigError(f"--report {value!r}: {exc}") from None
        targets.append((fmt.strip().lower(), Path(path.strip())))
    return targets


def _pairs(targets: ReportTargets) -> list[tuple[str, Path]]:
    return list(targets.items() if isinstance(targets, Mapping) else targets)


def check_report_targets(targets: ReportTargets) -> None:
    """Refuse, before a run is spent, reports that cannot be written: an unknown format, a path
    that cannot be written (`check_output_paths`), or two reports to one path."""
    pairs = _pairs(targets)
    for fmt, _ in pairs:
        get_reporter(fmt)
    seen: dict[Path, str] = {}
    for fmt, path in pairs:
        key = Path(os.path.abspath(path))
        if key in seen:
            raise ConfigError(
                f"two reports would be written to {path} ({seen[key]} and {fmt}); "
                "give each its own path"
            )
        seen[key] = fmt
    check_output_paths(path for _, path in pairs)


def write_reports(view: RunView, targets: ReportTargets) -> None:
    """Write every report `targets` asks for from the one `view`, each through its format's
    `Reporter.write`, each file atomically. One that fails (a full disk, a plugin's bug)
    spares the others; then `ConfigError` says which failed and why."""
    pairs = _pairs(targets)
    check_output_paths(path for _, path in pairs)
    failed: list[str] = []
    for fmt, path in pairs:
        try:
            _write_one(view, fmt, path)
        except VeraError as exc:
            failed.append(str(exc))
    if failed:
        raise ConfigError("; ".join(failed))


def _write_one(view: RunView, fmt: str, path: Path) -> None:
    reporter = get_reporter(fmt)
    with atomic_text(path, what="the report") as out:
        try:
            reporter.write(view, out)
        except (VeraError, OSError):
            raise  # `atomic_text` says what a failed write means (a full disk)
        except Exception as exc:  # a plugin may fail in any way; say which format did
            raise ConfigError(
                f"report format {reporter.name!r} failed writing {path}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


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


class _SharedStore:
    """The run history, opened read-only the first time an output needs it (the trend, a
    streamed run's results) and then shared: one open per run however many outputs."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._store: RunStore | None = None
        self._error: VeraError | None = None
        self._tried = False

    def get(self) -> RunStore | None:
        """The store, or None where it cannot be opened (`error` says why)."""
        if not self._tried:
            self._tried = True
            try:
                self._store = RunStore(
                    self._settings.history_path or DEFAULT_HISTORY_PATH,
                    lock_timeout=self._settings.lock_timeout,
                    read_only=True,
                )
            except VeraError as exc:
                self._error = exc
        return self._store

    def trend(self, report: Report) -> list[HistoryPoint]:
        # The report matters more than its trend: no store, no trend.
        return _history(report, self.get())

    def results(self, result: RunResult) -> Iterator[SampleResult]:
        """A streamed run's results in dataset order, with those it could not store."""
        store = self.get()
        if store is None or result.run_id is None:
            raise ConfigError(f"cannot read the run's results back: {self._error}")
        stored = store.iter_positioned(result.run_id)
        for _, sample in heapq.merge(stored, result.unstored, key=lambda item: item[0]):
            yield sample

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


@contextlib.contextmanager
def open_run_view(result: RunResult) -> Iterator[RunView]:
    """The view every output of a finished run is written from: its report and gate results,
    its results (a streamed run's read back from the history), the dataset's texts and the
    trend, each loaded when first read; the history is opened once, and closed on leaving."""
    plan, settings = result.plan, result.plan.settings
    shared = _SharedStore(settings)
    streamed = result.streamed and result.run_id is not None
    results: ResultSource | None = (lambda: shared.results(result)) if streamed else None
    if result.streamed and result.scratch is not None:  # a run without a history streamed
        results = lambda: iter(result.results())  # noqa: E731
    how = _ReadBack(settings.fields, settings.user_facts, settings.agent_steps)
    try:
        yield RunView(
            result.report,
            gate_failures=result.gate_failures,
            run_id=result.run_id,
            results=results,
            samples=lambda: _samples(plan.dataset.source, how),
            dataset=lambda: _read_samples(plan.dataset.source, how),
            history=(lambda: shared.trend(result.report)) if settings.history else list,
            conversations=lambda: _conversations(plan.dataset.source),
        )
    finally:
        shared.close()


def write_run_reports(result: RunResult, targets: ReportTargets) -> None:
    """Every report `targets` asks for (format -> path, or pairs) of a finished run, from one
    `RunView`: what `vera eval -o/--html/--markdown/--junit/--report` writes."""
    with open_run_view(result) as view:
        write_reports(view, targets)


def stored_run_view(
    store: RunStore,
    run_id: str,
    *,
    links: Sequence[tuple[str, str]] = (),
    thread_link: str | None = None,
) -> RunView:
    """A finished stored run's view, read from the open `store`: its report, the texts from
    the dataset source its plan read (where it can still be read, with its `--field`
    mapping) and the trend; `thread_link` as `RunView` takes it. `ConfigError` for an unknown
    or unfinished run."""
    record = store.get(run_id)
    report = store.report(record.id)
    dataset = record.options.get("dataset", {})
    source = dataset.get("source") if isinstance(dataset, dict) else dataset
    path = source if isinstance(source, str) else None
    # `vera conversations` runs its turn samples from memory, naming the file it read: the
    # threads read their messages from it (a thread that does not match the run's turns,
    # e.g. a replay's, is not shown from it; see `vera.render._threads`).
    name = dataset.get("name") if isinstance(dataset, dict) else None
    named = path or (name if isinstance(name, str) else None)
    how = _stored_reading(record.options)
    return RunView(
        report,
        run_id=record.id,
        samples=lambda: _samples(path, how),
        dataset=lambda: _read_samples(path, how),
        history=lambda: _history(report, store),
        links=links,
        conversations=lambda: _conversations(named),
        thread_link=thread_link,
    )


def _stored_reading(options: Mapping[str, object]) -> _ReadBack:
    """How a stored run read its dataset (`--field`, `--no-user-facts`, `--agent-steps`), to
    read it again alike."""
    settings = options.get("settings", {})
    if not isinstance(settings, dict):
        return _ReadBack()
    fields = settings.get("fields")
    return _ReadBack(
        dict(fields) if isinstance(fields, dict) else {},
        settings.get("user_facts") is not False,
        settings.get("agent_steps") is True,
    )


def stored_thread(
    store: RunStore, run_id: str, conversation_id: str, *, base: str = ""
) -> Thread | None:
    """One conversation of a finished stored run as a thread, each turn linking to its sample
    at `base` (the run's page); None when the run has no such conversation."""
    view = stored_run_view(store, run_id)
    block = view.report.conversations
    if block is None or all(c.id != conversation_id for c in block.conversations):
        return None
    wants = ThreadWants(ids=(conversation_id,))
    for result in view.sample_results():
        wants.add(result)
    [thread] = report_threads(block, wants, view.conversations, view.samples, base=base)
    return thread


def stored_report_html(
    store: RunStore, run_id: str, *, links: Sequence[tuple[str, str]] = ()
) -> str:
    """A stored run's HTML report, as `vera report RUN_ID -o report.html` writes it, with
    `links` above the title (`vera view`'s pages). `ConfigError` for an unknown or unfinished
    run."""
    out = io.StringIO()
    get_reporter("html").write(stored_run_view(store, run_id, links=links), out)
    return out.getvalue()


def write_stored_report(
    store: RunStore, run_id: str, path: Path, format: str | None = None
) -> None:
    """Write a stored run's report to `path` in `format` (default: from the extension), as
    `vera report` does, through the same door as `vera eval`'s outputs."""
    fmt = report_format(path, format)
    write_reports(stored_run_view(store, run_id), [(fmt, path)])
