"""Two stored runs compared, streaming: their aggregates read without samples, their results
paired in SQL a batch at a time (`RunStore.paired`) and read once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vera._results._comparison import (
    Pairs,
    RunComparison,
    compare_paired,
    pairs_in_memory,
    run_differences,
)
from vera._store._history import RunStore
from vera._store._records import RunRecord
from vera._types._errors import ConfigError
from vera._types._report import Report

OtherDataset = Literal["refuse", "pair", "means"]
"""What `compare_runs` does with runs of different datasets: refuse them (a `ConfigError`),
pair their samples all the same (`vera compare --any-dataset`), or compare their means only,
pairing nothing (`vera view`)."""


@dataclass(frozen=True)
class StoredComparison:
    """Run B (`second`) against run A (`first`), as `vera compare` and `vera view` show it."""

    first: RunRecord
    second: RunRecord
    before: Report
    """Run A's report without its samples (its summaries, counts and fingerprint)."""
    after: Report
    """Run B's, likewise."""
    paired: bool
    """Whether the samples were paired (False: runs of different datasets, means only)."""
    differences: list[str]
    """What differs between the runs beyond their answers (`run_differences`)."""
    comparison: RunComparison


def compare_runs(
    store: RunStore,
    run_a: str,
    run_b: str,
    *,
    top: int = 5,
    changes: int = 0,
    other_dataset: OtherDataset = "refuse",
) -> StoredComparison:
    """Compare stored run B against run A in one pass over their paired results, keeping only
    the `top` largest score moves and the `changes` worst changed samples: memory stays flat
    whatever the runs' size. Raises `ConfigError` for an unknown or unfinished run, and for
    runs of different datasets unless `other_dataset` says otherwise."""
    first, second = store.get(run_a), store.get(run_b)
    before = store.report(first.id, samples=False)
    after = store.report(second.id, samples=False)
    same = before.dataset == after.dataset
    if not same and other_dataset == "refuse":
        raise ConfigError(
            f"run {first.id} is of dataset {before.dataset!r} and run {second.id} of "
            f"{after.dataset!r}: their samples do not pair; pass --any-dataset to compare "
            "them all the same"
        )
    paired = same or other_dataset == "pair"
    pairs = _pairs(store, first.id, second.id, before, after) if paired else ()
    return StoredComparison(
        first=first,
        second=second,
        before=before.model_copy(update={"samples": ()}),
        after=after.model_copy(update={"samples": ()}),
        paired=paired,
        differences=run_differences(before, after),
        comparison=compare_paired(after, before, pairs, top=top, changes=changes),
    )


def _pairs(store: RunStore, first: str, second: str, before: Report, after: Report) -> Pairs:
    """B's results with A's, in sample-id order: from the file, or, where an earlier version
    stored a report whole (its samples inside), from both whole reports."""
    if not before.samples and not after.samples:
        return store.paired(second, first)
    whole_a = before if before.samples else store.report(first)
    whole_b = after if after.samples else store.report(second)
    return pairs_in_memory(whole_b, whole_a)
