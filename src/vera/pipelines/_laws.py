"""Seed 001's categorical laws, checked on a real pipeline over real queries.

- functor identity: `p.map(identity)` produces what `p` produces;
- functor composition: `p.map(f).map(g)` produces what `p.map(g ∘ f)` produces;
- natural transformation distribution: verification V commutes with mapping, the naturality
  square `p.map(f).then(V)` ≡ `p.then(V).map(f)` for an `f` that leaves answer and contexts
  alone. (Distribution over composition, `a.then(b).then(V)` ≡ `a.then(b.then(V))`, holds by
  construction: `then` flattens steps, so it is tested once in the unit tests, not per run.)

"Produces" compares `RagState.outcome()`: the answer, contexts and data, never the timings.
`vera eval --check-laws` runs these and the report carries the `categorical_tests` block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vera.pipelines._core import Pipeline, RagState, Step, identity

PASS, FAIL = "PASS", "FAIL"
LAWS = ("functor_identity", "functor_composition", "natural_transformation_distribution")


def _tag(state: RagState) -> RagState:
    """A pure map that touches only `data`, as a naturality witness must."""
    return state.evolve(data={**state.data, "law_tag": len(state.query)})


def _count(state: RagState) -> RagState:
    return state.evolve(data={**state.data, "law_count": len(state.contexts)})


def _compose(
    f: Callable[[RagState], RagState], g: Callable[[RagState], RagState]
) -> Callable[[RagState], RagState]:
    return lambda state: g(f(state))


async def check_laws(pipeline: Pipeline, verify: Step, queries: Sequence[str]) -> dict[str, str]:
    """Each law's verdict ("PASS" or "FAIL") on `pipeline` over `queries`.

    The pipeline should be deterministic (a temperature-0 or cached LLM, or offline steps);
    a law that fails on a nondeterministic pipeline says so about the pipeline, not the law.
    """
    results: dict[str, str] = {}
    pairs: dict[str, list[tuple[Pipeline, Pipeline]]] = {
        "functor_identity": [(pipeline.map(identity), pipeline)],
        "functor_composition": [
            (pipeline.map(_tag).map(_count), pipeline.map(_compose(_tag, _count)))
        ],
        "natural_transformation_distribution": [
            (pipeline.map(_tag).then(verify), pipeline.then(verify).map(_tag)),
        ],
    }
    for law, comparisons in pairs.items():
        holds = True
        for left, right in comparisons:
            for query in queries:
                a, b = await left.run(query), await right.run(query)
                if a.outcome() != b.outcome():
                    holds = False
                    break
            if not holds:
                break
        results[law] = PASS if holds else FAIL
    return results
