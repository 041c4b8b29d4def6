"""`work_plan`: one list of judge work, executed by the run and priced by the dry run."""

from collections.abc import Sequence

import pytest

from vera import Claim, ClaimVerdict, Sample, Verdict
from vera._analysis import WorkItem, analyse_sample, planned_work, work_plan
from vera.judges import BaseJudge, JudgeWork, LLMJudge, Relevance, RelevanceVerdict
from vera.judges._calls import RecordingChatModel
from vera.judges._offline import extract_claims as split_claims
from vera.metrics import Need

WHITEBOX = "the work plan"

SAMPLE = Sample(
    id="s",
    query="Where is Paris?",
    response="Paris is in France. It has about two million people.",
    contexts=["Paris is the capital of France.", "Lyon is a city in France."],
    reference="Paris is in France.",
)


class LoggingJudge(BaseJudge):
    """An explicit fake: it splits with the offline splitter, supports every claim, rates every
    text relevant, and logs each request in the terms the dry run prices (`JudgeWork`)."""

    name = "logging"

    def __init__(self) -> None:
        self.asked: list[JudgeWork] = []

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        claims = split_claims(response)
        texts = tuple(c.text for c in claims)
        self.asked.append(JudgeWork(kind="extract", text=response, query=query or "", claims=texts))
        return claims

    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        claims = split_claims(response)
        texts = tuple(c.text for c in claims)
        work = JudgeWork(
            kind="analyse", text=response, query=query or "", contexts=tuple(contexts), claims=texts
        )
        self.asked.append(work)
        return claims, [ClaimVerdict(c.id, Verdict.FULLY_SUPPORTED) for c in claims]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        texts = tuple(c.text for c in claims)
        self.asked.append(JudgeWork(kind="verify", claims=texts, contexts=tuple(contexts)))
        return [ClaimVerdict(c.id, Verdict.FULLY_SUPPORTED) for c in claims]

    async def verify_matrix(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[list[ClaimVerdict]]:
        texts = tuple(c.text for c in claims)
        self.asked.append(JudgeWork(kind="verify_matrix", claims=texts, contexts=tuple(contexts)))
        return [[ClaimVerdict(c.id, Verdict.NO_EVIDENCE) for _ in contexts] for c in claims]

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        self.asked.append(JudgeWork(kind="rate_relevance", query=query, texts=tuple(texts)))
        return [RelevanceVerdict(relevance=Relevance.RELEVANT) for _ in texts]


async def test_the_run_and_the_dry_run_read_one_work_plan_for_claims_and_relevance() -> None:
    needs = frozenset({Need.CLAIMS, Need.RELEVANCE})
    plan = work_plan(SAMPLE, needs)
    assert plan == (
        WorkItem(kind="analyse", of=("response",), against="contexts"),
        WorkItem(kind="rate_relevance"),
    )
    judge = LoggingJudge()
    done = await analyse_sample(SAMPLE, judge, needs)
    # The run asked the judge for exactly the plan's items, and the dry run prices exactly
    # what the run asked.
    assert [w.kind for w in judge.asked] == [item.kind for item in plan]
    assert judge.asked == planned_work(SAMPLE, needs, split_claims)
    assert len(done.claims) == 2 and done.context_relevance is not None


NEEDS = [
    frozenset({Need.CLAIMS}),
    frozenset({Need.RELEVANCE}),
    frozenset({Need.REFERENCE_IN_RESPONSE}),
    frozenset({Need.REFERENCE_IN_CONTEXTS}),
    frozenset({Need.CHUNK_ENTAILMENT}),
    frozenset({Need.CLAIMS, Need.REFERENCE_IN_RESPONSE, Need.REFERENCE_IN_CONTEXTS}),
    frozenset(Need),
]


@pytest.mark.parametrize("needs", NEEDS, ids=lambda n: "+".join(sorted(x.value for x in n)))
async def test_the_dry_run_prices_every_request_the_run_makes(needs: frozenset[Need]) -> None:
    judge = LoggingJudge()
    await analyse_sample(SAMPLE, judge, needs)
    priced = planned_work(SAMPLE, needs, split_claims)
    key = JudgeWork.model_dump_json
    assert sorted(map(key, judge.asked)) == sorted(map(key, priced))
    assert {item.kind for item in work_plan(SAMPLE, needs)} >= {w.kind for w in judge.asked}


def test_no_need_plans_no_work() -> None:
    assert work_plan(SAMPLE, frozenset()) == ()
    assert planned_work(SAMPLE, frozenset(), split_claims) == []


async def test_the_recording_model_answers_every_request_validly_inside_a_running_loop() -> None:
    # Counting runs the judge's own code; a cascade counts while a run's loop is running.
    model = RecordingChatModel("openai", "m")
    judge = LLMJudge(model, mode="truths", samples=2, max_claims_per_call=1)
    work = planned_work(SAMPLE, frozenset(Need), split_claims)
    counted = judge.plan_calls(work)
    assert counted.model == "openai:m" and counted.prompt_tokens > 0 < counted.completion_tokens
    assert model.requests == []  # counting used a replica; the judge's own model saw nothing
    await judge.analyse(SAMPLE.response or "", SAMPLE.context_texts)
    # truths once, then 2 claims x 2 draws, one claim a call, after one extraction.
    assert [r.schema_name for r in model.requests].count("verdicts") == 4
    assert len(model.requests) == 1 + 1 + 4
