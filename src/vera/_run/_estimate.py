"""`vera eval --dry-run`: what a run would cost, computed from its plan, before any call.

The dry run builds what the plan names (nothing is called) and walks every pass the run would
make: the system's and each baseline's. A pipeline's steps say what they would do
(`DryRunnable`): retrieval and the extractive generator run for real, since they are local and
free; an LLM generator counts one call and the extractive answer stands in for its text; a
revision counts one call whenever there is an answer; a verification step asks the judge for
its analysis. Then each answer's scoring is the sample's work plan (`vera._analysis.work_plan`,
the list the run executes), as `vera._analysis.planned_work` hands it to the judge's
`plan_calls`; an LLM judge counts by running its own code against a recording model
(`vera.judges._calls`), so the calls are the ones a run makes. Claims are counted with the
offline splitter (an LLM finds a similar number). Cache hits are not subtracted, so the figure
is an upper bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from vera._analysis._analysis import planned_work
from vera._plan._plan import RunPlan
from vera._results._turns import FAITHFULNESS
from vera._run._engine import Bindings, Components, build_components
from vera._types import Sample
from vera._types._results import Need
from vera.datasets._conversations import consistency_checks
from vera.judges._base import CallEstimate, JudgeWork, planned_calls
from vera.judges._offline._claims import extract_claims as split_claims
from vera.metrics._rubric import rubrics_of
from vera.pipelines._core import DryRunnable, Pipeline, RagState
from vera.providers._base import Usage
from vera.providers._cost import PriceTable
from vera.providers._http import missing_api_key


class PassEstimate(BaseModel):
    """One pass over the samples: the system's, or a baseline's."""

    model_config = ConfigDict(frozen=True)

    name: str
    samples: int
    generator_calls: int
    judge_calls: int
    uncounted_steps: tuple[str, ...] = ()
    """Steps of yours that cannot say what they cost; their calls are not counted."""


class RunEstimate(BaseModel):
    """Calls, tokens and dollars a run would take."""

    model_config = ConfigDict(frozen=True)

    judge: str
    samples: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    """None when the price of a model that would be called is unknown."""
    passes: tuple[PassEstimate, ...] = ()
    batch: bool = False
    """Priced at batch prices (`batch = true`): half the interactive ones."""
    missing_key: str | None = None
    """The variable the judge's model reads its API key from, when it is not set (the run
    would stop at its first call); None when a key is set or none is needed."""


def _dry_pipeline(
    pipeline: Pipeline, query: str
) -> tuple[RagState, CallEstimate, list[JudgeWork], list[str]]:
    """The state a pipeline would end in, its generator calls, the judge work of its steps and
    the steps that could not say what they cost."""
    state = RagState(query=query)
    calls = CallEstimate()
    work: list[JudgeWork] = []
    uncounted: list[str] = []
    for name, step in zip(pipeline.step_names, pipeline.steps, strict=True):
        if not isinstance(step, DryRunnable):
            uncounted.append(name)
            continue
        dry = step.dry_run(state)
        state = dry.state
        calls += CallEstimate(
            calls=dry.calls,
            prompt_tokens=dry.prompt_tokens,
            completion_tokens=dry.completion_tokens,
        )
        work.extend(w for w in dry.judge_work if isinstance(w, JudgeWork))
    return state, calls, work, uncounted


CONSISTENCY_PASS = "consistency check"
"""The name of the consistency pass's figures in `RunEstimate.passes`."""


def _consistency_pass(
    parts: Components, samples: Sequence[Sample]
) -> tuple[PassEstimate, CallEstimate] | None:
    """The consistency pass a run over conversation turns makes (see `run._engine`): each
    turn with an earlier one, judged again on faithfulness; None where the run makes none."""
    metric = next((m for m in parts.metrics if m.name == FAITHFULNESS), None)
    if parts.system is not None or metric is None:
        return None
    checks = consistency_checks(samples)
    if not checks:
        return None
    figures, _, judged = _estimate_pass(parts, None, checks, metric.needs)
    return figures.model_copy(update={"name": CONSISTENCY_PASS}), judged


def _estimate_pass(
    parts: Components, pipeline: Pipeline | None, samples: Sequence[Sample], needs: frozenset[Need]
) -> tuple[PassEstimate, CallEstimate, CallEstimate]:
    """One pass's figures, its generator calls and its judge calls."""
    generator = CallEstimate()
    work: list[JudgeWork] = []
    uncounted: set[str] = set()
    count = 0
    for sample in samples:
        scored = sample
        if pipeline is not None:
            if not sample.query.strip():
                continue
            state, calls, steps_work, missed = _dry_pipeline(pipeline, sample.query)
            generator += calls
            work += steps_work
            uncounted.update(missed)
            update = {"response": state.response or "", "contexts": state.contexts}
            scored = sample.model_copy(update=update)
        elif sample.response is None:
            continue
        count += 1
        work += planned_work(scored, needs, split_claims, rubrics_of(parts.metrics))
    judge = planned_calls(parts.judge, work)
    figures = PassEstimate(
        name=pipeline.name if pipeline is not None else "dataset responses",
        samples=count,
        generator_calls=generator.calls,
        judge_calls=judge.calls,
        uncounted_steps=tuple(sorted(uncounted)),
    )
    return figures, generator, judge


def estimated_cost(
    estimate: CallEstimate, spec: str | None, prices: PriceTable, *, batch: bool = False
) -> float | None:
    """What `estimate`'s calls to the model `spec` ("PROVIDER:MODEL") would cost; None when
    no price is known, 0 for no call; `batch`: at the provider's batch discount."""
    if estimate.calls == 0:
        return 0.0
    provider, _, model = (spec or "").partition(":")
    price = prices.lookup(provider, model)
    usage = Usage(
        prompt_tokens=estimate.prompt_tokens, completion_tokens=estimate.completion_tokens
    )
    return price.cost(usage, batch=batch) if price is not None else None


def estimate_plan(
    plan: RunPlan, bindings: Bindings | None = None, prices: PriceTable | None = None
) -> RunEstimate:
    """What running `plan` would cost: every pass, every generator and judge call, priced."""
    settings = plan.settings.model_copy(update={"cache": False, "history": False})
    parts = build_components(plan.model_copy(update={"settings": settings}), bindings)
    needs = frozenset[Need]().union(*(m.needs for m in parts.metrics))
    samples = list(parts.samples(plan.quick))
    passes = []
    generator = judge = CallEstimate()
    for pipeline in (parts.system, *parts.baselines.values()):
        figures, generated, judged = _estimate_pass(parts, pipeline, samples, needs)
        passes.append(figures)
        generator += generated
        judge += judged
    checked = _consistency_pass(parts, samples)
    if checked is not None:
        passes.append(checked[0])
        judge += checked[1]
    table, batch = prices or PriceTable(), plan.settings.batch
    costs = [
        estimated_cost(generator, plan.generator.spec, table, batch=batch),
        estimated_cost(judge, judge.model, table, batch=batch),
    ]
    total = generator + judge
    return RunEstimate(
        judge=parts.judge.spec,
        samples=passes[0].samples if passes else 0,
        calls=total.calls,
        prompt_tokens=total.prompt_tokens,
        completion_tokens=total.completion_tokens,
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        passes=tuple(passes),
        batch=plan.settings.batch,
        missing_key=missing_api_key(getattr(parts.judge, "model", None)),
    )
