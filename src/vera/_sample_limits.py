"""Bounded work per sample: size limits checked before a sample is judged, and a deadline on
its judge work.

A sample over a limit, or whose judge work outlasts `sample_timeout`, becomes an ERROR result
for that sample alone, with a message naming the limit and the setting that raises it; the run
goes on (docs/reliability.md, "Bounded work per sample").

Async judges (LLM, NLI) are cut off by the `asyncio.timeout` of `sample_deadline`. CPU-bound
judge code never awaits, so nothing can interrupt it from outside: the offline judge calls
`check_deadline()` in its loops instead. The deadline travels in a context variable, which
child tasks and `asyncio.to_thread` copy, so no judge signature carries it and a judge run
outside a sample (a benchmark, a pipeline step) has none.

SampleLimitError (a VeraError)   a sample is over a size limit
 └── SampleTimeoutError          its judge work outlasted sample_timeout
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from vera._types import Sample
from vera._types._errors import VeraError

DEFAULT_MAX_RESPONSE_CHARS = 200_000
"""About 50 pages: far above any chat answer, yet the offline judge checks one that long
against a context at the context limit in about 5 s (benchmarks/long_inputs.py)."""
DEFAULT_MAX_CONTEXT_CHARS = 10_000_000
"""About 2,500 pages, a whole book or manual as one context, which the offline judge indexes
in about 4 s and 100 MB; anything larger is more likely a bug upstream than a retrieval."""
DEFAULT_SAMPLE_TIMEOUT = 300.0
"""Seconds: some 50 times what the offline judge takes on a sample at both size limits, and
room for an LLM judge's calls on a long answer, retries included."""


class SampleLimitError(VeraError):
    """A sample is over a size limit, or its judge work ran out of time; that sample errors."""


class SampleTimeoutError(SampleLimitError):
    """A sample's judge work outlasted `sample_timeout`."""


class SampleLimitOptions(BaseModel):
    """The configured limits, checked as settings; `vera._plan.Settings` composes them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_response_chars: int = Field(default=DEFAULT_MAX_RESPONSE_CHARS, ge=1)
    """A longer response makes its sample an error, unjudged."""
    max_context_chars: int = Field(default=DEFAULT_MAX_CONTEXT_CHARS, ge=1)
    """A longer context makes its sample an error, unjudged."""
    sample_timeout: float = Field(default=DEFAULT_SAMPLE_TIMEOUT, gt=0)
    """Seconds the judge work of one sample may take, with any judge; past it, the sample is
    an error and the run goes on."""


@dataclass(frozen=True, slots=True)
class SampleLimits:
    """How much work one sample may cost, as the run's workers carry it."""

    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS
    max_context_chars: int = DEFAULT_MAX_CONTEXT_CHARS
    sample_timeout: float = DEFAULT_SAMPLE_TIMEOUT

    @classmethod
    def of(cls, settings: SampleLimitOptions) -> SampleLimits:
        """The limits `settings` (a run's `Settings`, say) configure."""
        return cls(
            max_response_chars=settings.max_response_chars,
            max_context_chars=settings.max_context_chars,
            sample_timeout=settings.sample_timeout,
        )


DEFAULT_LIMITS = SampleLimits()
"""The limits of a sample evaluated with no settings given."""


def check_sizes(sample: Sample, limits: SampleLimits) -> None:
    """Raise `SampleLimitError` when the response or a context is over its limit."""
    response = len(sample.response or "")
    if response > limits.max_response_chars:
        raise SampleLimitError(
            f"response is {response:,} characters, over max_response_chars="
            f"{limits.max_response_chars:,}; raise --max-response-chars or shorten it"
        )
    for number, text in enumerate(sample.context_texts, start=1):
        if len(text) > limits.max_context_chars:
            raise SampleLimitError(
                f"context {number} is {len(text):,} characters, over max_context_chars="
                f"{limits.max_context_chars:,}; raise --max-context-chars or split it"
            )


@dataclass(frozen=True, slots=True)
class _Deadline:
    at: float  # time.monotonic()
    seconds: float


_DEADLINE: ContextVar[_Deadline | None] = ContextVar("vera_sample_deadline", default=None)


def _timed_out(seconds: float) -> SampleTimeoutError:
    return SampleTimeoutError(
        f"judging the sample took longer than sample_timeout={seconds:g}s; raise "
        "--sample-timeout or shorten the sample"
    )


@asynccontextmanager
async def sample_deadline(seconds: float) -> AsyncIterator[None]:
    """Give the judge work inside at most `seconds`, then raise `SampleTimeoutError`.

    Awaiting code is cancelled at the deadline; CPU-bound code stops at its next
    `check_deadline()`.
    """
    token = _DEADLINE.set(_Deadline(time.monotonic() + seconds, seconds))
    try:
        async with asyncio.timeout(seconds) as scope:
            yield
    except TimeoutError:
        if not scope.expired():
            raise  # someone else's timeout, with its own message
        raise _timed_out(seconds) from None
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise `SampleTimeoutError` when the current sample's deadline has passed.

    Cheap (a context variable and a clock read), so loops call it once per claim or sentence.
    """
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() >= deadline.at:
        raise _timed_out(deadline.seconds)
