"""`SqliteFile`: the one way VERA opens its SQLite files (the run history, the response cache).

Both are shared by threads of one run and by runs in other processes. Writers take turns: a
writer waits at most `lock_timeout` seconds for another to finish, then fails with a message
that names the file and what to do, never a bare "database is locked". A path that is a folder
or a file that is not SQLite fails the same way, before any sample is evaluated.

Each file holds the tables of one or more features, and each feature owns its own: a `Schema`
(its name and its ordered `Migration`s), defined beside the feature's queries in the feature's
package. The file records each feature's version in its `schema_versions` table (the registry);
a feature applies its own migrations when it opens the file (`SqliteFile.adopt`), so a feature
adds a migration without touching any other. A writer applies the migrations a feature lacks, in
order, in one transaction; a reader never writes, so it reads an older file as it is; both refuse
a feature of a higher version than they know, or a file whose layout is newer (written by a newer
VERA).

Files written before the registry kept one number for the whole file in SQLite's
`PRAGMA user_version`: how many steps of one chain it had. Each such number is read as the
features' versions it stood for (`legacy`); a writer records them in `schema_versions` and sets
`user_version` to one past the last of them, which older VERA refuses as newer.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vera._types._errors import ConfigError, RunStopError

DEFAULT_LOCK_TIMEOUT = 30.0
"""Seconds a write waits for another process's write to finish."""


_WAL_RETRY_SECONDS = 0.01

Migration = Callable[[sqlite3.Connection], None]
"""One numbered step of a feature's tables: migration N (from 1) turns version N - 1 of them
into version N. It runs inside the opening writer's transaction, so it uses `execute` only
(`executescript` would commit half of it). Files from before versions existed are version 0
whatever they hold, so the first steps must allow what they create to be there already
(`IF NOT EXISTS`)."""

_VERSIONS = (
    "CREATE TABLE IF NOT EXISTS schema_versions "
    "(feature TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


@dataclass(frozen=True)
class Schema:
    """One feature's tables in a file: its `name` in the file's `schema_versions` and its
    `migrations` in order. Add a step at the end; never change or remove one that shipped."""

    name: str
    migrations: tuple[Migration, ...]

    @property
    def latest(self) -> int:
        """The version this code writes: how many migrations it knows."""
        return len(self.migrations)


_WRITE_FAILURES = frozenset(
    {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE"}
)
"""SQLite's names for a write the disk refused: full, over quota, a file-size limit."""


class StoreError(ConfigError):
    """A SQLite file cannot be used: locked too long, not SQLite, or not a file path."""


class MissingStoreError(StoreError):
    """A file opened only to read does not exist (and was not created)."""


class StoreWriteError(StoreError, RunStopError):
    """A statement failed on a file that opened fine: a full disk or quota, read-only media,
    a lock held too long, an I/O error, a damaged page. Every later write would fail alike,
    so it stops a run as a rejected key does (exit 2): the run cannot record what it does."""


class SqliteFile:
    """One SQLite file in WAL mode, safe to share between threads; `what` names it in errors
    ("the run history") and `flag` is the option that chooses it ("--history")."""

    def __init__(
        self,
        path: Path | str,
        *,
        what: str,
        flag: str,
        schemas: Sequence[Schema] = (),
        legacy: Sequence[Mapping[str, int]] = (),
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        read_only: bool = False,
        scratch: bool = False,
    ) -> None:
        """`schemas` are adopted at once (see `adopt`); `legacy[N - 1]` is what a file of
        `user_version` N written before the registry holds, feature by feature. `scratch` is
        for a file thrown away after one run: no WAL and no syncs, so it takes about half the
        room and writes (it is never shared, and a crash loses nothing that was kept)."""
        self.path = Path(path)
        self.scratch = scratch
        self.what = what
        self.flag = flag
        self.lock_timeout = lock_timeout
        self.read_only = read_only
        self._lock = threading.Lock()
        self._legacy = tuple(dict(versions) for versions in legacy)
        self.layout = len(self._legacy) + 1
        """The `user_version` of a file whose versions are in `schema_versions`."""
        self._schemas: dict[str, Schema] = {}
        self._versions: dict[str, int] | None = None
        """The versions a writer brought the file to (None: not known yet)."""
        if self.path.is_dir():
            raise StoreError(f"{self.flag} {self.path} is a folder; give the path of a file")
        self._db = self._open_read_only() if read_only else self._open_writer()
        try:
            with self._translated():
                self._stored_versions()  # refuses a file of a newer layout
            self.adopt(*schemas)
        except BaseException:
            self._db.close()
            raise

    def _open_writer(self) -> sqlite3.Connection:
        with self._translated():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=self.lock_timeout, check_same_thread=False, isolation_level=None
            )
            try:
                if self.scratch:
                    db.execute("PRAGMA page_size=1024")  # many small tables: small pages
                    db.execute("PRAGMA journal_mode=MEMORY")
                    db.execute("PRAGMA synchronous=OFF")
                    return db
                self._enter_wal(db)
                # With WAL, NORMAL survives a crash of VERA; only a power cut can lose the
                # newest commits, and each is one sample's result or one cached reply.
                db.execute("PRAGMA synchronous=NORMAL")
            except BaseException:
                db.close()
                raise
        return db

    def _stored_versions(self) -> dict[str, int]:
        """Each feature's version as the file records it; a file of a newer layout than this
        code knows is refused."""
        layout = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if layout > self.layout:
            raise StoreError(
                f"{self.what} {self.path} has layout version {layout}, written by a newer "
                f"VERA; this one knows up to version {self.layout} and will neither misread nor "
                f"change it: {self._remedy}"
            )
        if layout < self.layout:
            return dict(self._legacy[layout - 1]) if layout else {}
        rows = self._db.execute("SELECT feature, version FROM schema_versions").fetchall()
        return {str(feature): int(version) for feature, version in rows}

    @property
    def _remedy(self) -> str:
        return f"upgrade vera-eval (pip install -U vera-eval), or point {self.flag} at another file"

    def _check(self, schema: Schema, versions: Mapping[str, int]) -> None:
        found = versions.get(schema.name, 0)
        if found > schema.latest:
            raise StoreError(
                f"{self.what} {self.path} has version {found} of its {schema.name!r} tables, "
                f"written by a newer VERA; this one knows up to version {schema.latest} and "
                f"will neither misread nor change them: {self._remedy}"
            )

    def version_of(self, feature: str) -> int:
        """The version of `feature`'s tables in the file now (0: it has none), read again
        each time: another process may have added them since this one opened it."""
        with self._lock, self._translated():
            return self._stored_versions().get(feature, 0)

    def adopt(self, *schemas: Schema) -> None:
        """Register features' tables on this file: a writer applies the migrations they lack,
        all or none; a reader only checks that none is newer than this code knows."""
        for schema in schemas:
            known = self._schemas.setdefault(schema.name, schema)
            if known is not schema:
                raise ValueError(f"two schemas are named {schema.name!r} in {self.path}")
        with self._lock, self._translated():
            if self.read_only:
                versions = self._stored_versions()
                for schema in schemas:
                    self._check(schema, versions)
            elif schemas and not self._current(schemas):
                self._migrate(schemas)

    def _current(self, schemas: Sequence[Schema]) -> bool:
        """Whether the file holds `schemas` at their latest versions, read without writing:
        a writer that opens an up-to-date file takes no write lock."""
        if self._versions is None or not all(s.name in self._versions for s in schemas):
            self._versions = self._stored_versions()
            if int(self._db.execute("PRAGMA user_version").fetchone()[0]) < self.layout:
                return False  # recorded in `user_version` only: written before the registry
        for schema in schemas:
            self._check(schema, self._versions)
        return all(self._versions.get(s.name) == s.latest for s in schemas)

    def _migrate(self, schemas: Sequence[Schema]) -> None:
        """Apply the migrations `schemas` lack, in one transaction."""
        # IMMEDIATE takes the write lock first, so of two writers opening an old file at once
        # one migrates and the other, once it has the lock, reads the versions again: done.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            versions = self._stored_versions()
            for schema in schemas:
                self._check(schema, versions)
            self._db.execute(_VERSIONS)
            self._db.execute(f"PRAGMA user_version = {self.layout:d}")
            for schema in schemas:
                for step in schema.migrations[versions.get(schema.name, 0) :]:
                    step(self._db)
                versions[schema.name] = schema.latest
            self._db.executemany(
                "INSERT OR REPLACE INTO schema_versions (feature, version) VALUES (?, ?)",
                sorted(versions.items()),
            )
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._versions = versions

    def _open_read_only(self) -> sqlite3.Connection:
        """The file as it is, for reading: a missing file is an error, never created. On
        read-only media it is opened immutable (see `_open_immutable`)."""
        if not self.path.is_file():
            raise MissingStoreError(
                f"{self.what} {self.path} does not exist: nothing has been recorded there yet; "
                f"point {self.flag} at an existing file"
            )
        with self._translated():
            try:
                return self._connect_read_only("mode=ro")
            except sqlite3.OperationalError as exc:
                # A reader of a WAL file creates its `-shm` beside it; in a folder nobody
                # may write to (a read-only mount, a locked-down CI artifact) SQLite cannot,
                # and says only "unable to open database file".
                if "unable to open" not in str(exc):
                    raise
            return self._open_immutable()

    def _open_immutable(self) -> sqlite3.Connection:
        """The file read as it lies on disk, with no lock and no `-shm` (SQLite's
        `immutable=1`): right for media nobody writes to. Commits still in a `-wal` file
        beside it are not seen, which is said, never passed over."""
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:
            warnings.warn(
                f"{self.path} is in a read-only folder and its {wal.name} holds commits "
                f"that cannot be read from there; the newest runs may be missing: copy "
                f"{self.path} and {wal.name} to a writable folder to see them",
                stacklevel=2,
            )
        return self._connect_read_only("immutable=1")

    def _connect_read_only(self, mode: str) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path.resolve().as_uri() + "?" + mode,
            uri=True,
            timeout=self.lock_timeout,
            check_same_thread=False,
            isolation_level=None,
        )
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _enter_wal(self, db: sqlite3.Connection) -> None:
        # Switching a new file to WAL needs a lock SQLite does not wait for (it answers BUSY at
        # once, busy timeout or not), so two runs creating one file together would fail; the
        # switch is retried within the same bounded wait.
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(_WAL_RETRY_SECONDS)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement (its own transaction) and return its rows; `StoreWriteError`
        when the file fails it."""
        with self._lock, self._translated(StoreWriteError):
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _translated(self, kind: type[StoreError] = StoreError) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            raise kind(self._message(exc)) from None
        except sqlite3.DatabaseError as exc:
            raise kind(
                f"{self.path} is not {self.what}, or is damaged ({exc}); point {self.flag} at "
                "a new file or at one VERA wrote"
            ) from None
        except OSError as exc:
            raise kind(f"cannot use {self.path} for {self.what}: {exc.strerror}") from None

    def _message(self, exc: sqlite3.OperationalError) -> str:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return (
                f"{self.what} {self.path} stayed locked by another process for "
                f"{self.lock_timeout:g}s; wait for that run to finish, raise lock_timeout in "
                f"vera.toml, or use another {self.flag}"
            )
        code = getattr(exc, "sqlite_errorname", "")
        if "full" in text or code in _WRITE_FAILURES:
            return (
                f"{self.what} {self.path} cannot grow ({text}, {code or 'SQLITE_FULL'}): its "
                f"disk is full, over quota or failing; free some space, or use another "
                f"{self.flag}"
            )
        if "readonly" in text or "read-only" in text:
            return (
                f"cannot write to {self.what} {self.path} ({text}): the file or its folder is "
                f"read-only; use another {self.flag}"
            )
        return (
            f"cannot use {self.path} for {self.what} ({text}); check that its folder is "
            f"writable and its disk sound, or use another {self.flag}"
        )
