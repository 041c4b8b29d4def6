"""The run history: one SQLite file per project, with numbered schema migrations."""

from vera._sqlite_file import MissingStoreError, SqliteFile, StoreError
from vera.store._history import HISTORY_SCHEMA_VERSION, DamagedRunError, RunStore

__all__ = [
    "HISTORY_SCHEMA_VERSION",
    "DamagedRunError",
    "MissingStoreError",
    "RunStore",
    "SqliteFile",
    "StoreError",
]
