"""The run history: one SQLite file per project; each feature's tables are versioned apart."""

from vera._sqlite_file import MissingStoreError, SqliteFile, StoreError
from vera._store._compare import OtherDataset, StoredComparison, compare_runs
from vera._store._history import DEFAULT_HISTORY_PATH, RunStore
from vera._store._records import PAGE_SIZE, DamagedRunError

__all__ = [
    "DEFAULT_HISTORY_PATH",
    "PAGE_SIZE",
    "DamagedRunError",
    "MissingStoreError",
    "OtherDataset",
    "RunStore",
    "SqliteFile",
    "StoreError",
    "StoredComparison",
    "compare_runs",
]
