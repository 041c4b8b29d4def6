"""`--spool DIR`: accepted requests kept on disk until every trace in them is settled, so a
restart (a `kill -9` included) loses none of what the receiver answered 200 to.

Each accepted body is written, inflated, to its own file (`<number>.pb` or `.json`) before
the answer, by a rename, so a file is whole or absent. Once every trace it holds is settled
(evaluated and stored, not sampled, filtered, dropped, invalid or incomplete) the file is
removed. On start the files left are read back in order; a trace whose result is stored
already is not evaluated again (`MonitorHistory.evaluated`), so each is evaluated once.

A file the monitor cannot read back (or whose spans make its reading fail) is moved to
`DIR/quarantine/` with a `.reason` file beside it, so a poisoned request is kept for
inspection instead of stopping every restart; the newest `QUARANTINE_KEPT` are kept.
A write that fails (a full disk) leaves no `.part` file behind.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from vera._types._errors import ConfigError

QUARANTINE = "quarantine"
"""The sub-folder poisoned spool files are moved to."""
QUARANTINE_KEPT = 100
"""Quarantined files kept at most; the oldest are removed beyond it (a flood of bad requests
must not fill the disk a second time)."""

_KINDS = {".pb": "application/x-protobuf", ".json": "application/json"}


class Spool:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"--spool {folder}: cannot create it ({exc.strerror})") from None
        if not os.access(folder, os.W_OK):
            raise ConfigError(f"--spool {folder}: the folder is not writable")
        self._lock = threading.Lock()
        self._left = self._files()
        self._next = max((number for number, _ in self._left), default=0) + 1
        self._open: dict[int, set[str]] = {}
        """For each file read: its traces not settled yet."""
        self._files_of: dict[str, set[int]] = {}

    def _files(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.folder.iterdir():
            if path.suffix in _KINDS and path.stem.isdigit():
                found.append((int(path.stem), path))
        return sorted(found)

    def left_over(self) -> Iterator[tuple[int, bytes, str]]:
        """The files a previous monitor left: (number, body, content type), oldest first."""
        for number, path in self._left:
            try:
                body = path.read_bytes()
            except FileNotFoundError:
                continue
            yield number, body, _KINDS[path.suffix]
        self._left = []

    def write(self, body: bytes, content_type: str) -> int:
        """Keep an accepted (inflated) body; its number."""
        with self._lock:
            number = self._next
            self._next += 1
        suffix = ".pb" if "protobuf" in content_type else ".json"
        path = self.folder / f"{number:012d}{suffix}"
        partial = path.with_suffix(".part")
        try:
            partial.write_bytes(body)
            os.replace(partial, path)
        except OSError:
            # A full disk: what was written of it only takes the room the next one needs.
            partial.unlink(missing_ok=True)
            raise
        return number

    def quarantine(self, number: int, reason: str) -> Path | None:
        """Set file `number` aside in `DIR/quarantine/` (with its `reason`), so it is never
        read again on start; where it went, or None when it could not be moved."""
        with self._lock:
            self._open.pop(number, None)
        folder = self.folder / QUARANTINE
        for suffix in _KINDS:
            path = self.folder / f"{number:012d}{suffix}"
            if not path.exists():
                continue
            try:
                folder.mkdir(exist_ok=True)
                target = folder / path.name
                os.replace(path, target)
                target.with_suffix(".reason").write_text(reason + "\n", encoding="utf-8")
            except OSError:
                path.unlink(missing_ok=True)
                return None
            self._trim(folder)
            return target
        return None

    def quarantined(self) -> int:
        """Files in the quarantine folder."""
        folder = self.folder / QUARANTINE
        if not folder.is_dir():
            return 0
        return sum(1 for p in folder.iterdir() if p.suffix in _KINDS)

    def _trim(self, folder: Path) -> None:
        kept = sorted(p for p in folder.iterdir() if p.suffix in _KINDS)
        for path in kept[:-QUARANTINE_KEPT]:
            path.unlink(missing_ok=True)
            path.with_suffix(".reason").unlink(missing_ok=True)

    def holds(self, number: int, trace_ids: Iterable[str]) -> None:
        """File `number` was read: these are its traces (none: it is removed at once)."""
        with self._lock:
            ids = set(trace_ids)
            self._open[number] = ids
            for trace_id in ids:
                self._files_of.setdefault(trace_id, set()).add(number)
            if not ids:
                self._remove(number)

    def settle(self, trace_id: str) -> None:
        """Trace `trace_id` needs none of its files any more."""
        with self._lock:
            for number in self._files_of.pop(trace_id, ()):
                left = self._open.get(number)
                if left is None:
                    continue
                left.discard(trace_id)
                if not left:
                    self._remove(number)

    def pending(self) -> int:
        """Files still kept."""
        with self._lock:
            return len(self._open)

    def _remove(self, number: int) -> None:
        self._open.pop(number, None)
        for suffix in _KINDS:
            (self.folder / f"{number:012d}{suffix}").unlink(missing_ok=True)
