"""Assertions for your own test suite, as seed 000 and DeepEval users expect.

    from vera.testing import assert_faithful

    def test_refund_answer(vera_judge):
        answer = my_rag("How long is the refund window?")
        assert_faithful(answer.text, answer.contexts, judge=vera_judge)

`assert_faithful` passes on the answer verdict (`vera._results.answer_verdict`), as `vera eval`
does: any claim with no evidence or contradicted fails it, whatever the mean of the claims'
weights, and PARTIALLY_SUPPORTED counts by the judge's rule. A `threshold` adds a gate on
`faithfulness` (that mean), as `--threshold` does. A failure lists every claim the contexts do
not fully support, with its verdict and reason. As with
`vera eval`'s exit codes, nothing passes on nothing measured: an empty response, or one in
which the judge finds no claim, fails the assertion (pass `allow_no_claims=True` where an answer
without claims, such as a greeting, is what you expect). The `vera_judge` fixture (from VERA's
pytest plugin) is the judge your settings name: `VERA_JUDGE`, `vera.toml` or `[tool.vera]`,
else the offline judge.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any

from vera._analysis._analysis import analyse_sample
from vera._results._answers import claims_verdict
from vera._sync import run_sync
from vera._text import printable
from vera._types import Context, Sample, Verdict
from vera._types._results import MetricResult, MetricStatus
from vera.judges._base import Judge, partial_rule
from vera.judges._fake import FakeJudge
from vera.judges._offline import OfflineJudge
from vera.metrics._faithfulness import Faithfulness
from vera.metrics._hallucination import HallucinationRate
from vera.providers._fake import FakeChatModel

__all__ = [
    "FakeChatModel",
    "FakeJudge",
    "assert_faithful",
    "assert_faithful_async",
    "assert_no_hallucination",
]


def _sample(response: str, contexts: Sequence[str | Context], query: str) -> Sample:
    return Sample(id="assertion", query=query, response=response, contexts=list(contexts))


async def _check(
    sample: Sample,
    judge: Judge | None,
    metric: Faithfulness | HallucinationRate,
    failure: str,
    allow_no_claims: bool = False,
    by_verdict: bool = False,
) -> MetricResult:
    """Score `sample`; when the metric fails, the answer verdict (with `by_verdict`) is
    unfaithful, or nothing was measured, raise with `failure` and every claim that is not
    fully supported, with its verdict and reason."""
    if not (sample.response or "").strip():
        raise AssertionError("the response is empty: there is nothing to measure")
    judge = judge or OfflineJudge()
    analysis = await analyse_sample(sample, judge, metric.needs)
    result = metric.score(sample, analysis)
    if result.status is MetricStatus.NO_CLAIMS and not allow_no_claims:
        raise AssertionError(
            f"{metric.name} measured nothing: the judge found no claim in the response "
            f"{sample.response!r}; pass allow_no_claims=True if no claim is expected"
        )
    answer = claims_verdict(
        [v.verdict for v in analysis.verdicts],
        [c.text for c in analysis.claims],
        partial_rule(judge),
    )
    unfaithful = by_verdict and answer.passed is False
    if result.passed and not unfaithful:
        return result
    message = "" if result.passed else f"{failure.format(score=result.score)}: {result.reason}"
    if unfaithful:
        message = f"unfaithful answer: {answer.reason}" + (f"; {message}" if message else "")
    unsupported = "\n".join(
        f"  - {verdict.verdict.value}: {claim.text!r}"
        + (f" ({verdict.reason})" if verdict.reason else "")
        for claim, verdict in zip(analysis.claims, analysis.verdicts, strict=True)
        if verdict.verdict is not Verdict.FULLY_SUPPORTED
    )
    # printable: pytest prints the message into a terminal or a CI log.
    raise AssertionError(printable(f"{message}\nclaims not fully supported:\n{unsupported}"))


async def assert_faithful_async(
    response: str,
    contexts: Sequence[str | Context],
    *,
    threshold: float | None = None,
    judge: Judge | None = None,
    query: str = "",
    allow_no_claims: bool = False,
) -> MetricResult:
    """`assert_faithful` for async tests."""
    # Without a threshold the mean gates nothing: 0 passes every score, the verdict decides.
    return await _check(
        _sample(response, contexts, query),
        judge,
        Faithfulness(threshold=threshold or 0.0),
        f"faithfulness {{score:.3f}} is below {threshold or 0.0:.2f}",
        allow_no_claims,
        by_verdict=True,
    )


def assert_faithful(
    response: str,
    contexts: Sequence[str | Context],
    *,
    threshold: float | None = None,
    judge: Judge | None = None,
    query: str = "",
    allow_no_claims: bool = False,
) -> MetricResult:
    """Fail unless the answer verdict on `response` is faithful to `contexts` (no claim
    with no evidence or contradicted; PARTIALLY_SUPPORTED by the judge's rule) and, where
    `threshold` is given, its faithfulness is at least `threshold`."""
    return _run(
        assert_faithful_async(
            response,
            contexts,
            threshold=threshold,
            judge=judge,
            query=query,
            allow_no_claims=allow_no_claims,
        )
    )


def assert_no_hallucination(
    response: str,
    contexts: Sequence[str | Context],
    *,
    max_rate: float = 0.0,
    judge: Judge | None = None,
    query: str = "",
    allow_no_claims: bool = False,
) -> MetricResult:
    """Fail when more than `max_rate` of the response's claims have no support or are
    contradicted."""
    return _run(
        _check(
            _sample(response, contexts, query),
            judge,
            HallucinationRate(threshold=max_rate),
            f"hallucination rate {{score:.3f}} is above {max_rate:.2f}",
            allow_no_claims,
        )
    )


def _run(coroutine: Coroutine[Any, Any, MetricResult]) -> MetricResult:
    return run_sync(
        coroutine,
        inside_a_loop="inside a running event loop, use `await assert_faithful_async(...)`",
    )
