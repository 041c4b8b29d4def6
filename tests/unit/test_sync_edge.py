"""The sync edge (`vera._sync.run_sync`): one event loop from synchronous code, and inside a
running loop a RuntimeError that says what to use there, with the coroutine closed unrun."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import vera
from vera import generate_testset
from vera._run import run_sync

WHITEBOX = "the engine's own parts"


async def _answer() -> int:
    return 42


def test_from_synchronous_code_the_coroutine_runs_in_its_own_loop() -> None:
    assert run_sync(_answer(), inside_a_loop="unused") == 42


async def test_inside_a_running_loop_it_says_what_to_use_and_closes_the_coroutine() -> None:
    coroutine = _answer()
    with pytest.raises(RuntimeError, match="use the async form"):
        run_sync(coroutine, inside_a_loop="use the async form")
    assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED


async def test_the_library_calls_name_their_way_out_of_a_running_loop(tmp_path: Path) -> None:
    sample = vera.Sample(id="a", query="q", response="Refunds take 30 days.", contexts=["x"])
    with pytest.raises(RuntimeError, match=r"await vera\.aevaluate"):
        vera.evaluate([sample])
    (tmp_path / "doc.txt").write_text("Refunds take 30 days. " * 20, encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"asyncio\.to_thread\(generate_testset"):
        generate_testset(tmp_path, "openai:never-called", n=1)


def test_an_error_from_the_coroutine_is_not_chained_onto_the_loop_check() -> None:
    async def fails() -> None:
        raise AssertionError("faithfulness 0.000 is below 0.80")

    with pytest.raises(AssertionError) as caught:
        run_sync(fails(), inside_a_loop="unused")
    # No "no running event loop" RuntimeError printed above the user's failure.
    assert caught.value.__context__ is None and caught.value.__cause__ is None
