"""VERA's metrics as MLflow GenAI scorers, for `mlflow.genai.evaluate(data=..., scorers=[...])`.

Each scorer judges one row's answer claim by claim and returns one MLflow `Feedback`: its value
the pass/fail as a yes/no rating (VERA's answer verdict for faithfulness: any claim with no
evidence or contradicted fails the answer, whatever the mean), so MLflow's own
`EvaluationResult.passed` and its mean of yes answers read it as they read DeepEval's; the
score, the verdict and every claim with its verdict and evidence in the metadata; a rationale
made from the claims ("1 of 3 claims has no evidence: ..."). MLflow is imported only here, when
a scorer is built; its objects stay behind `Any` at this boundary, so `mypy src` passes without
the extra.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from vera._analysis._analysis import analyse_sample
from vera._results._answers import claims_verdict
from vera._types import Sample
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera._types._results import ClaimAnalysis, MetricResult
from vera.datasets._fields import ALIASES, FALLBACK_CONTEXT_KEY, RowProblem, normalise_row
from vera.judges._base import Judge, as_judge, partial_rule
from vera.judges._registry import create_judge
from vera.metrics._base import Metric
from vera.metrics._registry import create_metric

INSTALL_HINT = install_hint("mlflow")
FRAMEWORK = "vera"
SCORER_PREFIX = "vera_"
"""A scorer's name is the metric's behind this, so its columns (`vera_faithfulness/value`)
stand apart from MLflow's own and other frameworks' of the same metric."""

# MLflow's own names for the row's parts (its built-in judges read these), mapped onto VERA's
# fields before VERA's aliases (`vera.datasets._fields.ALIASES`) read the rest.
_MLFLOW_NAMES = {
    "request": "query",
    "expected_response": "reference",
    "retrieved_context": "contexts",
}
_READ = frozenset(name for names in ALIASES.values() for name in names) | {FALLBACK_CONTEXT_KEY}
T = TypeVar("T")


class _JudgeLoop:
    """One event loop, on a daemon thread of its own, for every VERA scorer's judge calls.

    MLflow calls scorers from several worker threads at once. A judge's HTTP client and its
    limits on calls in flight bind to the event loop they first run in: a loop per call would
    share them across loops, and a call waiting on a limit another loop holds waits forever
    (an LLM judge hung there). One loop keeps them in one place and the calls concurrent; a
    caller inside a running loop of its own (Jupyter) is served too.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="vera-mlflow-judge", daemon=True
                )
                thread.start()
                self._loop = loop
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()


_JUDGE_LOOP = _JudgeLoop()


def _mlflow() -> dict[str, Any]:
    """The MLflow pieces a scorer needs, or `ConfigError` saying how to install them."""
    try:
        return {
            "scorer": importlib.import_module("mlflow.genai.scorers").scorer,
            "entities": importlib.import_module("mlflow.entities"),
            "traces": importlib.import_module("mlflow.genai.utils.trace_utils"),
        }
    except ImportError:
        raise ConfigError(f"VERA's MLflow scorers need MLflow: {INSTALL_HINT}") from None


def scorer_for(
    metric: str | Metric = "faithfulness",
    *,
    judge: str | Judge | None = None,
    threshold: float | None = None,
    name: str | None = None,
) -> Any:
    """One VERA metric as an MLflow scorer (an `mlflow.genai.scorers.Scorer`).

    Args:
        metric: a metric name (`vera metrics` lists them) or a metric object.
        judge: a judge name ("offline", "openai:gpt-4o-mini", ...) or object; default the
            offline judge, which needs no key.
        threshold: the metric's pass mark (names only; an object carries its own).
        name: the scorer's name in MLflow; default `vera_` and the metric's name.

    Raises:
        ConfigError: MLflow is not installed, or an unknown metric or judge name.
    """
    mlflow = _mlflow()
    chosen = _metric(metric, threshold)
    verifier = _judge(judge)
    source = _source(mlflow["entities"], verifier)
    traces = mlflow["traces"]

    def score(
        *,
        inputs: Any = None,
        outputs: Any = None,
        expectations: Any = None,
        trace: Any = None,
    ) -> Any:
        sample = _sample(inputs, outputs, expectations, trace, traces)
        analysis = _JUDGE_LOOP.run(analyse_sample(sample, verifier, chosen.needs))
        result = chosen.score(sample, analysis)
        return mlflow["entities"].Feedback(
            **_assessment(chosen, result, analysis, verifier), source=source
        )

    scorer: Callable[..., Any] = mlflow["scorer"]
    return scorer(score, name=name or SCORER_PREFIX + chosen.name)


def scorers(
    *metrics: str | Metric,
    judge: str | Judge | None = None,
    threshold: float | None = None,
) -> list[Any]:
    """A scorer per metric (default faithfulness), all with one judge: `scorer_for` each."""
    verifier = _judge(judge)
    return [
        scorer_for(metric, judge=verifier, threshold=threshold)
        for metric in metrics or ("faithfulness",)
    ]


def _metric(metric: str | Metric, threshold: float | None) -> Metric:
    if isinstance(metric, str):
        return create_metric(metric, **({} if threshold is None else {"threshold": threshold}))
    return metric


def _judge(judge: str | Judge | None) -> Judge:
    if judge is None:
        return create_judge("offline")
    return create_judge(judge) if isinstance(judge, str) else as_judge(judge)


def _source(entities: Any, judge: Judge) -> Any:
    """Who judged: code for the offline judge (rules and a small model, no LLM), else an LLM
    judge named by its spec."""
    kind = "CODE" if judge.spec.startswith("offline") else "LLM_JUDGE"
    return entities.AssessmentSource(source_type=kind, source_id=f"vera:{judge.spec}")


def _sample(inputs: Any, outputs: Any, expectations: Any, trace: Any, traces: Any) -> Sample:
    """The row as a VERA `Sample`: MLflow's `inputs`, `outputs` and `expectations` read by the
    field names `vera eval` reads (a bare string is the query, the response); the contexts
    from the trace's retriever spans where the row names none."""
    row: dict[str, Any] = {}
    for part, bare in ((inputs, "query"), (outputs, "response"), (expectations, None)):
        if isinstance(part, Mapping):
            row.update(_fields(part))
        elif isinstance(part, str) and bare is not None:
            row[bare] = part
    if not any(name in row for name in (*ALIASES["contexts"], FALLBACK_CONTEXT_KEY)):
        found = traces.extract_retrieval_context_from_trace(trace)
        row["contexts"] = [_passage(chunk) for chunks in found.values() for chunk in chunks]
    try:
        values = normalise_row(row).values
    except RowProblem as problem:
        raise ConfigError(f"an MLflow row's field {problem.field!r}: {problem.problem}") from None
    values.pop("metadata", None)
    return Sample(id=str(values.pop("id", "mlflow")), **values)


def _fields(part: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `part` that VERA reads, MLflow's own names under VERA's."""
    found = {key: value for key, value in part.items() if key in _READ}
    for key, field in _MLFLOW_NAMES.items():
        if key in part and field not in found:
            value = part[key]
            found[field] = _passages(value) if field == "contexts" else value
    return found


def _passages(value: Any) -> Any:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_passage(item) for item in value]
    return value


def _passage(chunk: Any) -> Any:
    """MLflow's retrieved document (`{"content": ..., "doc_uri": ...}`) as a VERA context."""
    if isinstance(chunk, Mapping) and "content" in chunk:
        return {"text": str(chunk["content"]), "source": chunk.get("doc_uri")}
    return chunk


def _assessment(
    metric: Metric, result: MetricResult, analysis: ClaimAnalysis, judge: Judge
) -> dict[str, Any]:
    """The `Feedback`'s value, rationale and metadata. Faithfulness passes by the answer
    verdict (as `vera eval` gates it); another metric by its own pass mark. A metric that does
    not apply to the row (no reference to compare with) gives no value, and says why."""
    verdict = claims_verdict(
        [v.verdict for v in analysis.verdicts],
        [c.text for c in analysis.claims],
        partial_rule(judge),
    )
    by_verdict = metric.name == "faithfulness"
    passed = verdict.passed if by_verdict else result.passed
    rationale = verdict.reason if by_verdict else result.reason
    if result.score is not None:
        rationale += f" ({metric.name} {result.score:.2f})"
    claims = [
        {
            "text": claim.text,
            "verdict": found.verdict.value,
            "evidence": found.evidence,
            "reason": found.reason,
        }
        for claim, found in zip(analysis.claims, analysis.verdicts, strict=True)
    ]
    # MLflow keeps metadata as strings: the claims as JSON, to be read back with json.loads.
    metadata = {
        "mlflow.scorer.framework": FRAMEWORK,
        "score": "" if result.score is None else repr(result.score),
        "threshold": repr(result.threshold),
        "verdict": verdict.status.value,
        "judge": judge.spec,
        "claims": json.dumps(claims, ensure_ascii=False),
    }
    value = None if passed is None else ("yes" if passed else "no")
    return {"value": value, "rationale": rationale, "metadata": metadata}
