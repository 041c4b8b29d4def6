"""The sync edge: a library call from synchronous code runs its coroutine in one new event
loop. Inside a running loop (Jupyter, an async app) there is none to make, so the call fails
saying what to use there instead, and the coroutine is closed unrun rather than left to warn
that it was never awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T], *, inside_a_loop: str) -> T:
    """`coroutine`'s result, from its own event loop; `RuntimeError(inside_a_loop)` when
    called inside a running one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if running:
        coroutine.close()
        raise RuntimeError(inside_a_loop)
    # Run outside the `except` block: an error the coroutine raises (a failing assertion)
    # would otherwise carry "no running event loop" as its context, printed above it.
    return asyncio.run(coroutine)
