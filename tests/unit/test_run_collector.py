"""The garbage collector during a run: objects from before the run are left out of its passes
and new ones collected less often, and afterwards everything is as it was, in a process that
froze objects of its own too."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

import vera
from vera._run._collector import YOUNG_OBJECTS, collecting_less
from vera.judges import OfflineJudge

WHITEBOX = "what the collector's settings are while a run lasts, which no result shows"


@pytest.fixture(autouse=True)
def _collector_as_found() -> Iterator[None]:
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _samples() -> list[vera.Sample]:
    return [
        vera.Sample(
            id=str(i), response=f"Refunds take {i} days.", contexts=["Refunds take 5 days."]
        )
        for i in range(3, 7)
    ]


def test_within_a_run_objects_from_before_are_frozen_and_passes_rarer() -> None:
    before = gc.get_threshold()
    with collecting_less():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (max(before[0], YOUNG_OBJECTS), *before[1:])
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_garbage_made_within_a_run_is_still_collected() -> None:
    with collecting_less():
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert gone() is None


def test_a_run_leaves_the_collector_as_it_found_it() -> None:
    before = gc.get_threshold()
    report = vera.evaluate(_samples(), judge=OfflineJudge())
    assert report.counts.scored == 4
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_process_that_froze_objects_of_its_own_keeps_them_frozen() -> None:
    gc.freeze()
    before = gc.get_threshold()
    with collecting_less():
        assert gc.get_threshold() == before
    vera.evaluate(_samples(), judge=OfflineJudge())
    # Unfreezing would have put the count to 0 (frozen objects freed meanwhile lower it).
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before


def test_a_collector_turned_off_stays_off() -> None:
    gc.disable()
    before = gc.get_threshold()
    with collecting_less():
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before
    assert not gc.isenabled()


def test_a_threshold_set_within_a_run_is_kept() -> None:
    with collecting_less():
        gc.set_threshold(1234, 5, 6)
    assert gc.get_threshold() == (1234, 5, 6)
