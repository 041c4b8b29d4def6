"""`CascadeJudge`: which claims reach the second judge, in what order, and what it reports."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from vera import (
    Bindings,
    Claim,
    ClaimVerdict,
    ConfigError,
    Report,
    RunEstimate,
    Sample,
    Settings,
    Verdict,
    estimate_plan,
    evaluate,
    load_settings,
)
from vera._plan import build_plan
from vera.datasets import open_dataset
from vera.judges import (
    BaseJudge,
    CascadeJudge,
    JudgeDescription,
    LLMJudge,
    OfflineJudge,
    Relevance,
    RelevanceVerdict,
    create_judge,
)
from vera.render._cascade import cascade_summary
from vera.render._markdown import render_markdown
from vera.testing import FakeChatModel

WHITEBOX = "the console's tables, panels and progress"


class FakeOfflineJudge(BaseJudge):
    """Claims are the sentences of a response; each claim's entailment is scripted by its text
    (None for no probability). Verdicts: supported from 0.5 up, else no evidence."""

    name = "fake-offline"

    def __init__(self, entailment: dict[str, float | None]) -> None:
        self.entailment = entailment
        self.verify_calls: list[list[str]] = []

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        texts = [t.strip() + "." for t in response.split(".") if t.strip()]
        return [Claim(f"c{i}", text) for i, text in enumerate(texts, start=1)]

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        self.verify_calls.append([c.id for c in claims])
        verdicts = []
        for claim in claims:
            p = self.entailment[claim.text]
            supported = p is not None and p >= 0.5
            verdict = Verdict.FULLY_SUPPORTED if supported else Verdict.NO_EVIDENCE
            verdicts.append(ClaimVerdict(claim.id, verdict, reason="offline said so", entailment=p))
        return verdicts


class RecordingJudge(BaseJudge):
    """A second judge that records the claims it is asked about and calls each CONTRADICTED."""

    name = "fake-llm"

    def __init__(self, *, relevance: bool = True) -> None:
        self.asked: list[list[tuple[str, str]]] = []
        self.relevance = relevance

    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        raise AssertionError("a cascade never asks its second judge for claims")

    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        self.asked.append([(c.id, c.text) for c in claims])
        # Answered in reverse: the cascade must pair verdicts by id, not by position.
        return [ClaimVerdict(c.id, Verdict.CONTRADICTED, reason="llm") for c in reversed(claims)]

    async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
        if not self.relevance:
            return await super().rate_relevance(query, texts)
        return [RelevanceVerdict(relevance=Relevance.RELEVANT, reason="second") for _ in texts]

    def describe(self) -> JudgeDescription:
        usage = {"calls": len(self.asked), "cost_usd": 0.5}
        return JudgeDescription(spec=self.spec, mode="recorded", usage=usage)


SCORES: dict[str, float | None] = {
    "Sure one.": 0.95,
    "Middle two.": 0.5,
    "Unknown three.": None,
    "Low four.": 0.1,
    "Edge high.": 0.9,
    "Edge low.": 0.2,
    "Just under.": 0.89,
    "Sure five.": 0.99,
    "Sure six.": 0.01,
}


def cascade(second: Any = None, **bounds: float) -> tuple[CascadeJudge, FakeOfflineJudge, Any]:
    first = FakeOfflineJudge(SCORES)
    second = second if second is not None else RecordingJudge()
    return CascadeJudge(first, second, **bounds), first, second


def judge_response(judge: CascadeJudge, response: str) -> list[ClaimVerdict]:
    async def run() -> list[ClaimVerdict]:
        claims = await judge.extract_claims(response)
        return await judge.verify_claims(claims, ["some context"])

    return asyncio.run(run())


def test_only_uncertain_claims_are_sent_and_order_is_kept() -> None:
    judge, first, second = cascade()
    response = "Sure one. Middle two. Unknown three. Low four. Edge high. Edge low. Just under."
    verdicts = judge_response(judge, response)
    assert second.asked == [
        [("c2", "Middle two."), ("c3", "Unknown three."), ("c7", "Just under.")]
    ]
    assert first.verify_calls == [["c1", "c2", "c3", "c4", "c5", "c6", "c7"]]
    assert [v.claim_id for v in verdicts] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    by_first = {"c1": 0.95, "c4": 0.1, "c5": 0.9, "c6": 0.2}  # bounds are inclusive
    for verdict in verdicts:
        if verdict.claim_id in by_first:
            assert verdict.entailment == by_first[verdict.claim_id]
            assert verdict.reason == "fake-offline: offline said so"
            assert verdict.verdict is not Verdict.CONTRADICTED
        else:
            assert verdict.verdict is Verdict.CONTRADICTED and verdict.entailment is None
            assert verdict.reason == "fake-llm: llm"


def test_a_sample_of_confident_claims_makes_no_second_call() -> None:
    judge, _, second = cascade()
    verdicts = judge_response(judge, "Sure five. Sure six. Sure one.")
    assert second.asked == []
    assert [v.verdict for v in verdicts] == [
        Verdict.FULLY_SUPPORTED,
        Verdict.NO_EVIDENCE,
        Verdict.FULLY_SUPPORTED,
    ]
    assert asyncio.run(judge.verify_claims([], ["x"])) == []  # no claims: no call to either
    assert judge.describe().to_details()["verifications"] == 1


def test_details_count_exactly() -> None:
    judge, _, _ = cascade()
    judge_response(judge, "Sure one. Middle two. Unknown three. Low four.")  # 2 of 4 sent
    judge_response(judge, "Sure five. Sure six.")  # none sent
    judge_response(judge, "Just under.")  # 1 of 1 sent
    details = judge.describe().to_details()
    assert {k: details[k] for k in details if k not in {"fake-llm", "usage"}} == {
        "first": "fake-offline",
        "second": "fake-llm",
        "low": 0.2,
        "high": 0.9,
        "claims": 7,
        "claims_sent": 3,
        "share_sent": 3 / 7,
        "verifications": 3,
        "verifications_sent": 2,
        # A judge that is not an LLMJudge counts one request per verify_claims call: only the
        # second sample, decided wholly offline, saved one.
        "calls_saved": 1,
    }
    assert details["fake-llm"] == {"mode": "recorded", "usage": {"calls": 2, "cost_usd": 0.5}}
    assert details["usage"] == details["fake-llm"]["usage"]
    assert judge.spec == "cascade(fake-offline → fake-llm)"
    assert cascade_summary(details) == (
        "Cascade: 3 of 7 claims (43%) sent to fake-llm; 1 LLM verification calls saved"
    )


@pytest.mark.parametrize(
    ("mode", "samples", "saved"),
    [("per_claim", 1, 4), ("per_claim", 3, 12), ("batched", 1, 1), ("batched", 2, 2)],
)
def test_calls_saved_follow_how_the_llm_judge_batches(mode: Any, samples: int, saved: int) -> None:
    llm = LLMJudge(FakeChatModel(), mode=mode, samples=samples)  # never called
    judge, _, _ = cascade(llm)
    judge_response(judge, "Sure one. Sure five. Sure six. Low four.")
    assert judge.describe().to_details()["calls_saved"] == saved
    assert judge.describe().to_details()["claims_sent"] == 0


def test_batched_saving_counts_requests_not_claims() -> None:
    llm = LLMJudge(FakeChatModel(), mode="batched", max_claims_per_call=2)
    judge, _, _ = cascade(llm)
    # Five confident claims need three requests of two; none is made.
    judge_response(judge, "Sure one. Sure five. Sure six. Low four. Edge high.")
    assert judge.describe().to_details()["calls_saved"] == 3


def test_bounds_decide_what_is_uncertain() -> None:
    judge, _, second = cascade(low=0.0, high=1.0)
    judge_response(judge, "Sure one. Sure six.")
    assert [[cid for cid, _ in call] for call in second.asked] == [["c1", "c2"]]
    with pytest.raises(ValueError, match="low <= high"):
        CascadeJudge(FakeOfflineJudge({}), RecordingJudge(), low=0.9, high=0.1)


def test_relevance_comes_from_the_second_judge_else_the_first() -> None:
    judge, _, _ = cascade()
    [rating] = asyncio.run(judge.rate_relevance("q", ["t"]))
    assert rating.reason == "second"

    class RatingOfflineJudge(FakeOfflineJudge):
        async def rate_relevance(self, query: str, texts: Sequence[str]) -> list[RelevanceVerdict]:
            return [RelevanceVerdict(relevance=Relevance.IRRELEVANT, reason="first")]

    from_first = CascadeJudge(RatingOfflineJudge({}), RecordingJudge(relevance=False))
    [rating] = asyncio.run(from_first.rate_relevance("q", ["t"]))
    assert rating.reason == "first"
    neither = CascadeJudge(FakeOfflineJudge({}), RecordingJudge(relevance=False))
    with pytest.raises(ConfigError, match="rate relevance"):
        asyncio.run(neither.rate_relevance("q", ["t"]))


def test_the_run_report_carries_the_cascade_details() -> None:
    judge, _, second = cascade()
    samples = [
        Sample(id="a", response="Sure one. Middle two.", contexts=["ctx"]),
        Sample(id="b", response="Sure five.", contexts=["ctx"]),
    ]
    report = evaluate(samples, judge=judge)
    assert report.judge == "cascade(fake-offline → fake-llm)"
    details = report.judge_details
    assert (details["claims"], details["claims_sent"], details["share_sent"]) == (3, 1, 1 / 3)
    assert details["calls_saved"] == 1 and len(second.asked) == 1
    again = Report.model_validate_json(report.to_json())
    line = "Cascade: 1 of 3 claims (33%) sent to fake-llm; 1 LLM verification calls saved"
    assert line in render_markdown(again)


@pytest.mark.slow
def test_registry_builds_offline_then_the_configured_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings(cascade_judge="openai:gpt-4o-mini", cascade_low=0.3, cascade_high=0.9)
    judge = create_judge("cascade", settings)
    assert isinstance(judge, CascadeJudge)
    assert isinstance(judge.first, OfflineJudge) and isinstance(judge.second, LLMJudge)
    assert (judge.low, judge.high) == (0.3, 0.9)
    assert judge.spec == "cascade(offline:learned → openai:gpt-4o-mini)"
    assert (Settings().cascade_low, Settings().cascade_high) == (0.2, 0.9)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (Settings(), "--judge cascade needs the judge for uncertain claims: --cascade-judge"),
        (Settings(cascade_judge="  "), "--cascade-judge"),
        (Settings(cascade_judge="cascade"), "cannot itself be cascade"),
        (
            Settings(cascade_judge="openai:m", cascade_low=0.9, cascade_high=0.5),
            r"--cascade-low \(0.9\) must not exceed --cascade-high \(0.5\)",
        ),
    ],
)
def test_registry_refuses_a_cascade_that_cannot_work(settings: Settings, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_judge("cascade", settings)


def test_cascade_settings_come_from_vera_toml(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text(
        'judge = "cascade"\ncascade-judge = "openai:gpt-4o-mini"\ncascade-high = 0.9\n'
    )
    settings = load_settings(directory=tmp_path, environ={})
    assert (settings.judge, settings.cascade_judge) == ("cascade", "openai:gpt-4o-mini")
    assert (settings.cascade_low, settings.cascade_high) == (0.2, 0.9)
    (tmp_path / "vera.toml").write_text("cascade-low = 1.5\n")
    with pytest.raises(ConfigError, match="cascade_low"):
        load_settings(directory=tmp_path, environ={})


@pytest.mark.slow
def test_dry_run_estimates_count_only_verification_for_a_cascade() -> None:
    rows = [Sample(id="a", response="Paris is in France. It is big.", contexts=["Paris."])]

    def estimate(**settings: Any) -> RunEstimate:
        plan = build_plan(settings=Settings(history=False, **settings))
        return estimate_plan(plan, Bindings(data=open_dataset(rows)))

    plain = estimate(judge="openai:gpt-4o-mini")
    cascade_only = estimate(judge="cascade", cascade_judge="openai:gpt-4o-mini")
    assert (plain.calls, cascade_only.calls) == (2, 1)  # no extraction call in a cascade
    assert cascade_only.prompt_tokens < plain.prompt_tokens
    assert cascade_only.judge == "cascade(offline:learned → openai:gpt-4o-mini)"
