"""The results table: each finished sample of a run, stored the moment it finishes, and read
back streamed (in dataset order, or paired by sample id with another table's results)."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vera._sqlite_file import SqliteFile, StoreError
from vera._types._report import SampleResult

_BATCH = 500
"""Results read from the store per query when streaming them."""


def pack_result(result: SampleResult) -> bytes:
    """A result as stored: its JSON, compressed (a sample's claims and reasons repeat words)."""
    return zlib.compress(result.model_dump_json().encode("utf-8"), 6)


def unpack_result(payload: bytes | str) -> SampleResult:
    # Results stored before compression are JSON text.
    text = zlib.decompress(payload) if isinstance(payload, bytes) else payload
    return SampleResult.model_validate_json(text)


class ResultTable:
    """The queries of the `results` table (a part of `RunStore`, which owns the file)."""

    path: Path
    _file: SqliteFile

    def add_result(self, run_id: str, position: int, result: SampleResult) -> None:
        """Store one finished sample, at once."""
        self._file.execute(
            "INSERT OR REPLACE INTO results (run_id, sample_id, position, result) "
            "VALUES (?, ?, ?, ?)",
            (run_id, result.id, position, pack_result(result)),
        )

    def paired(
        self, run_id: str, other: str, *, batch: int = _BATCH
    ) -> Iterator[tuple[SampleResult, SampleResult]]:
        """The results of `run_id` paired with those of `other` that have the same sample
        id, in sample-id order, read `batch` pairs at a time: what paired statistics read, so
        no run is held in memory at once."""
        return self.pairs(run_id, "results b ON b.run_id = ?", (other,), batch=batch)

    def pairs(
        self, run_id: str, join: str, params: Sequence[Any], *, batch: int = _BATCH
    ) -> Iterator[tuple[SampleResult, SampleResult]]:
        """The results of `run_id` paired with the stored results (a `result` column, as in
        `results`) of the rows of table `b` that `join` selects with `params` and the same
        sample id, in sample-id order (how another feature's table of results is paired)."""
        sql = (
            f"SELECT a.sample_id, a.result, b.result FROM results a JOIN {join} "
            "AND b.sample_id = a.sample_id "
            "WHERE a.run_id = ? AND a.sample_id > ? ORDER BY a.sample_id LIMIT ?"
        )
        last = ""
        while True:
            rows = self._file.execute(sql, (*params, run_id, last, batch))
            for sample_id, mine, theirs in rows:
                last = sample_id
                yield unpack_result(mine), unpack_result(theirs)
            if len(rows) < batch:
                return

    def iter_results(self, run_id: str, *, batch: int = _BATCH) -> Iterator[SampleResult]:
        """The finished samples of a run in dataset order, read `batch` at a time, so a run
        of any size is never held in memory at once."""
        for _, result in self.iter_positioned(run_id, batch=batch):
            yield result

    def iter_positioned(
        self, run_id: str, *, batch: int = _BATCH, damaged: str = "raise"
    ) -> Iterator[tuple[int, SampleResult]]:
        """`iter_results` with each result's dataset position. A stored result that cannot be
        read back raises `StoreError` naming it, or with `damaged="skip"` is left out with a
        warning (a resumed run evaluates that sample again)."""
        position = -1
        while True:
            rows = self._file.execute(
                "SELECT position, result, sample_id FROM results WHERE run_id = ? "
                "AND position > ? ORDER BY position LIMIT ?",
                (run_id, position, batch),
            )
            for found, payload, sample_id in rows:
                position = found
                result = self._readable(run_id, sample_id, payload, damaged)
                if result is not None:
                    yield found, result
            if len(rows) < batch:
                return

    def _readable(
        self, run_id: str, sample_id: str, payload: bytes | str, damaged: str
    ) -> SampleResult | None:
        try:
            return unpack_result(payload)
        except zlib.error:
            why = "it does not decompress"
        except ValueError:  # not UTF-8, not JSON, or not a result
            why = "it is not a readable result"
        problem = (
            f"{self.path}: the stored result of sample {sample_id!r} in run {run_id} is "
            f"damaged ({why})"
        )
        if damaged != "skip":
            raise StoreError(f"{problem}; `vera eval --resume {run_id}` evaluates it again")
        warnings.warn(f"{problem}; it is evaluated again", stacklevel=2)
        return None

    def result(self, run_id: str, sample_id: str, *, damaged: str = "raise") -> SampleResult | None:
        """One stored sample's result (None: the run has no such sample; a damaged one is a
        `StoreError`, or with `damaged="skip"` None with a warning, as `iter_positioned`)."""
        rows = self._file.execute(
            "SELECT result FROM results WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
        )
        return self._readable(run_id, sample_id, rows[0][0], damaged) if rows else None


class StoredResults(Mapping[str, SampleResult]):
    """A stored run's results as a read-only mapping, each read when it is looked up."""

    def __init__(self, store: ResultTable, run_id: str) -> None:
        self._store = store
        self._run_id = run_id

    def __getitem__(self, sample_id: str) -> SampleResult:
        found = self._store.result(self._run_id, sample_id, damaged="skip")
        if found is None:
            raise KeyError(sample_id)
        return found

    def __len__(self) -> int:
        rows = self._store._file.execute(
            "SELECT COUNT(*) FROM results WHERE run_id = ?", (self._run_id,)
        )
        return int(rows[0][0])

    def __iter__(self) -> Iterator[str]:
        rows = self._store._file.execute(
            "SELECT sample_id FROM results WHERE run_id = ? ORDER BY position", (self._run_id,)
        )
        return (str(row[0]) for row in rows)
