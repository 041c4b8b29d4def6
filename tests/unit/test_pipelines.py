"""Pipelines: composition, per-step records, verification, and seed 001's laws.

Judges here are fakes: FakeJudge scripts verdicts per claim text, FakeChatModel scripts an LLM.
"""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vera import Context
from vera._baselines import VERIFY_ABSTENTION, Verify
from vera.judges import LLMJudge
from vera.pipelines import Pipeline, RagState, check_laws, identity
from vera.providers import ManagedChatModel, Price, PriceTable
from vera.providers._cost import CostLedger
from vera.testing import FakeChatModel, FakeJudge

WHITEBOX = "the baselines' own parts"


async def retrieve(state: RagState) -> RagState:
    return state.evolve(contexts=(Context(text=f"About {state.query}.", id="d1"),))


async def answer(state: RagState) -> RagState:
    return state.evolve(response=f"{state.query} is true. The moon is cheese.")


async def test_then_runs_steps_in_order_and_records_each() -> None:
    pipeline = Pipeline.of(retrieve).then(answer)
    state = await pipeline.run("Paris")
    assert state.response == "Paris is true. The moon is cheese."
    assert [r.name for r in state.trace] == ["retrieve", "answer"]
    assert all(r.latency_ms >= 0 for r in state.trace)
    assert state.latency_ms == sum(r.latency_ms for r in state.trace)
    assert pipeline.step_names == ("retrieve", "answer")  # the pipeline itself is unchanged


def fake_judge() -> FakeJudge:
    """A fake judge: the first sentence is supported, the cheese claim has no evidence."""
    script = {
        "Paris is true. The moon is cheese.": [
            ("Paris is true.", "FULLY_SUPPORTED"),
            ("The moon is cheese.", "NO_EVIDENCE"),
        ],
        "Paris is true.": [("Paris is true.", "FULLY_SUPPORTED")],
    }
    return FakeJudge(script)


async def test_verify_drops_unsupported_claims_flags_or_abstains() -> None:
    dropped = await Pipeline.of(retrieve).then(answer).then(Verify(fake_judge())).run("Paris")
    assert dropped.response == "Paris is true."
    assert dropped.data["unsupported_claims"] == ("The moon is cheese.",)
    flagged = (
        await Pipeline.of(retrieve)
        .then(answer)
        .then(Verify(fake_judge(), action="flag"))
        .run("Paris")
    )
    assert flagged.response == "Paris is true. The moon is cheese."
    assert flagged.data["unsupported_claims"] == ("The moon is cheese.",)
    # At threshold 0 a partly supported claim stays, but never one the judge finds unsupported,
    # whatever probability it gives; nothing grounded at all makes the step abstain.
    partly = FakeJudge(
        {
            "Paris is true. The moon is cheese.": [
                ("Paris is true.", "FULLY_SUPPORTED"),
                ("The moon is cheese.", "PARTIALLY_SUPPORTED"),
            ]
        }
    )
    loose = Pipeline.of(retrieve).then(answer).then(Verify(partly, threshold=0.0))
    assert (await loose.run("Paris")).response == "Paris is true. The moon is cheese."
    still = Pipeline.of(retrieve).then(answer).then(Verify(fake_judge(), threshold=0.0))
    assert (await still.run("Paris")).response == "Paris is true."
    nothing = FakeJudge({"Paris is true. The moon is cheese.": [("Paris is true.", "no")]})
    abstained = await Pipeline.of(retrieve).then(answer).then(Verify(nothing)).run("Paris")
    assert abstained.response == VERIFY_ABSTENTION and abstained.abstained


async def test_each_step_records_its_own_judge_calls_and_cost() -> None:
    fake = FakeChatModel()  # a fake LLM: two replies, 100 prompt tokens each
    fake.enqueue(
        {"claims": [{"number": 1, "text": "Paris is true."}]},
        {"verdicts": [{"claim": 1, "verdict": "FULLY_SUPPORTED"}]},
    )
    ledger = CostLedger(PriceTable({"fake:fake-model": Price(input=1000, output=0)}))
    judge = LLMJudge(ManagedChatModel(fake, ledger=ledger))
    state = await Pipeline.of(retrieve).then(answer).then(Verify(judge)).run("Paris")
    records = {r.name: r for r in state.trace}
    assert (records["answer"].judge_calls, records["verify@0.80"].judge_calls) == (0, 2)
    assert records["verify@0.80"].cost_usd == pytest.approx(0.2)


async def test_distribution_over_composition_holds_by_construction() -> None:
    verify = Verify(fake_judge())
    left = Pipeline.of(retrieve).then(answer).then(verify)
    right = Pipeline.of(retrieve).then(Pipeline.of(answer).then(verify))
    assert left.step_names == right.step_names
    assert (await left.run("Paris")).outcome() == (await right.run("Paris")).outcome()


# Pure steps to build random pipelines from, for the property tests.
def _suffix(state: RagState) -> RagState:
    return state.evolve(response=(state.response or "") + " Indeed.")


def _upper(state: RagState) -> RagState:
    return state.evolve(query=state.query.upper())


def _count(state: RagState) -> RagState:
    return state.evolve(data={**state.data, "n": len(state.response or "")})


PURE = {"suffix": _suffix, "upper": _upper, "count": _count}


def build(names: list[str]) -> Pipeline:
    pipeline = Pipeline.of(retrieve).then(answer)
    for name in names:
        pipeline = pipeline.map(PURE[name], name=name)
    return pipeline


pipelines = st.lists(st.sampled_from(sorted(PURE)), max_size=4)
queries = st.text(alphabet="abcdefgh ", min_size=1, max_size=12)


@settings(max_examples=30, deadline=None)
@given(pipelines, queries, st.sampled_from(sorted(PURE)), st.sampled_from(sorted(PURE)))
async def test_functor_laws_hold_for_any_pipeline(
    names: list[str], query: str, f: str, g: str
) -> None:
    p = build(names)
    base = (await p.run(query)).outcome()
    assert (await p.map(identity).run(query)).outcome() == base
    composed = p.map(lambda s: PURE[g](PURE[f](s)))
    assert (await p.map(PURE[f]).map(PURE[g]).run(query)).outcome() == (
        await composed.run(query)
    ).outcome()


async def test_check_laws_passes_a_deterministic_pipeline_and_fails_a_noisy_one() -> None:
    verify = Verify(FakeJudge({}), action="flag")

    async def no_claims(state: RagState) -> RagState:
        return state.evolve(response="")

    quiet = Pipeline.of(retrieve).then(no_claims)
    verdicts = await check_laws(quiet, verify, ["a", "b"])
    assert verdicts == dict.fromkeys(
        ("functor_identity", "functor_composition", "natural_transformation_distribution"),
        "PASS",
    )
    counter = itertools.count()

    async def noisy(state: RagState) -> RagState:  # a different answer on every run
        return state.evolve(response="", data={"run": next(counter)})

    failing = await check_laws(Pipeline.of(retrieve).then(noisy), verify, ["a"])
    assert set(failing.values()) == {"FAIL"}


def test_a_pipeline_answers_each_query_and_the_report_keeps_its_steps() -> None:
    import vera

    async def failing(state: RagState) -> RagState:
        if state.query == "boom":
            raise RuntimeError("generator down")
        return state

    pipeline = Pipeline.of(retrieve).then(failing).then(answer).renamed("demo")
    samples = [vera.Sample(id="a", query="Paris"), vera.Sample(id="b", query="boom")]
    report = vera.evaluate(samples, judge=fake_judge(), pipeline=pipeline)
    assert report.pipeline == "demo"
    good, bad = report.samples
    assert good.status.value == "scored" and good.scores["faithfulness"] == 0.5
    assert [s.name for s in good.steps] == ["retrieve", "failing", "answer"]
    assert good.latency_ms == pytest.approx(sum(s.latency_ms for s in good.steps))
    assert bad.status.value == "error" and "generator down" in (bad.error or "")
