"""The run history: one SQLite file per project, with numbered schema migrations."""

from vera._sqlite_file import MissingStoreError, SqliteFile, StoreError
from vera._store._compare import OtherDataset, StoredComparison, compare_runs
from vera._store._history import (
    DEFAULT_HISTORY_PATH,
    HISTORY_SCHEMA_VERSION,
    PAGE_SIZE,
    DamagedRunError,
    HistoryBatchJournal,
    RunStore,
)

__all__ = [
    "DEFAULT_HISTORY_PATH",
    "HISTORY_SCHEMA_VERSION",
    "PAGE_SIZE",
    "DamagedRunError",
    "HistoryBatchJournal",
    "MissingStoreError",
    "OtherDataset",
    "RunStore",
    "SqliteFile",
    "StoreError",
    "StoredComparison",
    "compare_runs",
]
