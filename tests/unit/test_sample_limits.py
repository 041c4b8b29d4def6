"""Bounded work per sample: size limits and the per-sample deadline, for every kind of judge.

A sample over a limit is an ERROR result naming the limit and the flag that raises it; the
offline judge, which never awaits, stops at its own deadline checks. The clock is a fake
wherever the outcome would otherwise depend on how fast this machine is.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from pathlib import Path

import pytest

from vera import Claim, ClaimVerdict, ConfigError, Sample, SampleStatus, Settings, load_settings
from vera._plan import (
    SampleLimitError,
    SampleLimits,
    SampleTimeoutError,
    check_deadline,
    check_sizes,
    sample_deadline,
)
from vera._run import evaluate_sample
from vera.judges import BaseJudge, OfflineJudge
from vera.judges._offline import LONG_TEXT
from vera.metrics._faithfulness import Faithfulness

WHITEBOX = "the engine's own parts"

CONTEXT = "The museum opens at 9 am. Entry costs 12 euros. The museum is closed on Mondays."
ANSWER = "The museum opens at 9 am. Entry costs 12 euros."
# Longer than LONG_TEXT, so the offline judge works on it in a worker thread.
LONG_CONTEXT = " ".join(f"Gallery {i} holds {i % 7 + 2} paintings." for i in range(3_000))


def sample(response: str = ANSWER, *contexts: str) -> Sample:
    return Sample(id="s1", query="q", response=response, contexts=contexts or (CONTEXT,))


class FakeClock:
    """Stands in for the `time` module inside `vera._plan` only (asyncio keeps the real
    one): each reading is `step` seconds after the last."""

    def __init__(self, step: float) -> None:
        self.ticks = itertools.count(step=step)

    def monotonic(self) -> float:
        return float(next(self.ticks))


@pytest.fixture
def slow_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every clock reading is 10 s after the last: any deadline under 10 s has passed at the
    first check."""
    monkeypatch.setattr("vera._sample_limits.time", FakeClock(step=10.0))


def test_defaults_admit_the_largest_stress_sample() -> None:
    limits = SampleLimits.of(Settings())
    assert limits == SampleLimits(200_000, 10_000_000, 300.0)
    check_sizes(sample("x" * 200_000, "y" * 10_000_000), limits)


def test_a_response_over_the_limit_names_the_size_the_limit_and_the_flag() -> None:
    with pytest.raises(SampleLimitError) as caught:
        check_sizes(sample("x" * 250_000), SampleLimits())
    assert str(caught.value) == (
        "response is 250,000 characters, over max_response_chars=200,000; "
        "raise --max-response-chars or shorten it"
    )


def test_a_context_over_the_limit_is_named_by_its_position() -> None:
    limits = SampleLimits(max_context_chars=100)
    with pytest.raises(SampleLimitError) as caught:
        check_sizes(sample(ANSWER, CONTEXT[:50], "z" * 101), limits)
    assert str(caught.value) == (
        "context 2 is 101 characters, over max_context_chars=100; "
        "raise --max-context-chars or split it"
    )
    check_sizes(sample(ANSWER, "z" * 100), limits)


async def test_an_oversized_sample_is_an_error_and_no_judge_work_is_done() -> None:
    class FakeJudgeThatMustNotBeCalled(BaseJudge):
        async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
            raise AssertionError("judged a sample over its limits")

        async def verify_claims(
            self, claims: Sequence[Claim], contexts: Sequence[str]
        ) -> list[ClaimVerdict]:
            raise AssertionError("judged a sample over its limits")

    limits = SampleLimits(max_response_chars=10)
    result = await evaluate_sample(
        sample(), [Faithfulness()], FakeJudgeThatMustNotBeCalled(), limits=limits
    )
    assert result.status is SampleStatus.ERROR
    assert result.error == (
        f"SampleLimitError: response is {len(ANSWER)} characters, over max_response_chars=10; "
        "raise --max-response-chars or shorten it"
    )


def test_settings_take_the_limits_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text(
        "max-response-chars = 1000\nmax-context-chars = 5000\nsample-timeout = 2.5\n"
    )
    settings = load_settings(directory=tmp_path, environ={})
    assert SampleLimits.of(settings) == SampleLimits(1000, 5000, 2.5)
    with pytest.raises(ConfigError, match="sample_timeout"):
        load_settings({"sample_timeout": 0}, directory=tmp_path, environ={})


def test_no_deadline_outside_a_sample() -> None:
    check_deadline()  # a judge run on its own (a benchmark, a pipeline step) is never cut off


async def test_the_offline_judge_stops_at_its_deadline(slow_clock: None) -> None:
    limits = SampleLimits(sample_timeout=5)
    result = await evaluate_sample(sample(), [Faithfulness()], OfflineJudge(), limits=limits)
    assert result.status is SampleStatus.ERROR
    assert result.error == (
        "SampleTimeoutError: judging the sample took longer than sample_timeout=5s; "
        "raise --sample-timeout or shorten the sample"
    )


async def test_the_deadline_reaches_the_offline_judge_in_its_worker_thread(
    slow_clock: None,
) -> None:
    assert len(LONG_CONTEXT) > LONG_TEXT
    judge = OfflineJudge()
    claims = await judge.extract_claims(ANSWER)
    with pytest.raises(SampleTimeoutError, match="sample_timeout=5s"):
        async with sample_deadline(5):
            await judge.verify_claims(claims, [LONG_CONTEXT])


async def test_an_async_judge_is_cancelled_at_the_deadline() -> None:
    class FakeHangingJudge(BaseJudge):
        async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
            await asyncio.Event().wait()  # a provider that never answers
            return []

        async def verify_claims(
            self, claims: Sequence[Claim], contexts: Sequence[str]
        ) -> list[ClaimVerdict]:
            return []

    limits = SampleLimits(sample_timeout=0.01)
    result = await evaluate_sample(sample(), [Faithfulness()], FakeHangingJudge(), limits=limits)
    assert result.status is SampleStatus.ERROR
    assert result.error is not None and "sample_timeout=0.01s" in result.error


async def test_a_timeout_of_the_judge_s_own_keeps_its_message() -> None:
    class FakeTimingOutJudge(BaseJudge):
        async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
            raise TimeoutError("the provider call took longer than 60s")

        async def verify_claims(
            self, claims: Sequence[Claim], contexts: Sequence[str]
        ) -> list[ClaimVerdict]:
            return []

    result = await evaluate_sample(sample(), [Faithfulness()], FakeTimingOutJudge())
    assert result.error == "TimeoutError: the provider call took longer than 60s"


async def test_a_long_sample_leaves_the_event_loop_free() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    judge = OfflineJudge()
    claims = await judge.extract_claims(ANSWER)
    task = asyncio.create_task(ticker())
    verdicts = await judge.verify_claims(claims, [LONG_CONTEXT])
    task.cancel()
    # On the loop, the judge would return before the ticker ever ran.
    assert ticks > 0
    assert len(verdicts) == len(claims)
