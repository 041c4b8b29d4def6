"""LLMJudge's modes (per_claim, truths, single_call), `samples=k` voting and cost labels.

Driven by FakeChatModel, a fake provider that calls nothing: each test scripts what the "model"
says and asserts how many calls the judge made and what it did with the replies.
"""

import re
from typing import Any

import pytest

import vera
from vera import Verdict
from vera.judges import LLMJudge
from vera.judges._voting import majority_verdicts
from vera.providers import ChatRequest, ManagedChatModel, Price, PriceTable, TruncatedOutputError
from vera.providers._cache import ResponseCache
from vera.providers._cost import CostLedger
from vera.testing import FakeChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

RESPONSE = "The refund window is 60 days. Refunds go to the original card."
CONTEXTS = ["Refunds are issued to the original card.", "The refund window is 30 days."]
CLAIMS = {
    "claims": [
        {"number": 1, "text": "The refund window is 60 days."},
        {"number": 2, "text": "Refunds go to the original card."},
    ]
}
TRUTHS = {
    "truths": [
        {"context": 1, "text": "Refunds are issued to the original card."},
        {"context": 2, "text": "The refund window is 30 days."},
    ]
}


def claims_asked(request: ChatRequest) -> list[str]:
    """The numbered claims a verification prompt lists."""
    listing = request.messages[-1].content.split("<claims>\n", 1)[1]
    return re.findall(r"^\d+\. (.*)$", listing, flags=re.MULTILINE)


def fake_model_answer(request: ChatRequest) -> dict[str, Any]:
    """A fake model that knows this test's two claims: 60 days is contradicted, the card is
    supported. It answers every prompt kind the judge sends."""
    name = request.prompt_version.split("/")[0]
    if name == "extract_claims":
        return CLAIMS
    if name == "extract_truths":
        return TRUTHS
    if name == "single_call":
        return {
            "claims": [
                {**CLAIMS["claims"][0], "verdict": "CONTRADICTED", "context": 2,
                 "quote": "The refund window is 30 days."},
                {**CLAIMS["claims"][1], "verdict": "FULLY_SUPPORTED", "context": 1,
                 "quote": "Refunds are issued to the original card."},
            ]
        }  # fmt: skip
    rows = []
    for number, claim in enumerate(claims_asked(request), start=1):
        if "60 days" in claim:
            rows.append({"claim": number, "verdict": "CONTRADICTED", "context": 2,
                         "quote": "The refund window is 30 days."})  # fmt: skip
        else:
            rows.append({"claim": number, "verdict": "FULLY_SUPPORTED", "context": 1,
                         "quote": "Refunds are issued to the original card."})  # fmt: skip
    return {"verdicts": rows}


EXPECTED = [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]


def kinds(fake: FakeChatModel) -> list[str]:
    return [r.prompt_version.split("/")[0] for r in fake.requests]


async def test_per_claim_mode_is_one_call_per_claim_after_extraction() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    claims, verdicts = await LLMJudge(fake, mode="per_claim").analyse(RESPONSE, CONTEXTS)
    assert kinds(fake) == ["extract_claims", "verify_claims", "verify_claims"]
    assert [claims_asked(r) for r in fake.requests[1:]] == [[c.text] for c in claims]
    assert [v.verdict for v in verdicts] == EXPECTED
    assert [v.claim_id for v in verdicts] == ["c1", "c2"]


async def test_truths_mode_verifies_against_truths_and_reuses_them_per_context_set() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    judge = LLMJudge(fake, mode="truths")
    _, first = await judge.analyse(RESPONSE, CONTEXTS)
    assert kinds(fake) == ["extract_claims", "extract_truths", "verify_claims"]
    assert [v.verdict for v in first] == EXPECTED
    # Quotes are still checked against the contexts themselves.
    assert [(v.context_index, v.quote_found) for v in first] == [(1, True), (0, True)]
    verify_prompt = fake.requests[2].messages[-1].content
    assert "\n\n2 The refund window is 30 days.\n" in verify_prompt

    await judge.analyse("Refunds go to the original card.", CONTEXTS)
    assert kinds(fake)[3:] == ["extract_claims", "verify_claims"]  # truths reused
    await judge.analyse(RESPONSE, [*CONTEXTS, "A third passage."])
    assert kinds(fake)[5:] == ["extract_claims", "extract_truths", "verify_claims"]


async def test_truths_mode_context_without_truths_is_shown_as_such() -> None:
    fake = FakeChatModel()
    fake.enqueue(CLAIMS, {"truths": [TRUTHS["truths"][1]]}, {"verdicts": []}, {"verdicts": []})
    with pytest.raises(vera.JudgeResponseError):
        await LLMJudge(fake, mode="truths").analyse(RESPONSE, CONTEXTS)
    prompt = fake.requests[2].messages[-1].content
    assert "<contexts>\n1 (this context states no facts)\n" in prompt


def test_truths_are_asked_once_for_concurrent_samples_with_the_same_contexts() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    samples = [vera.Sample(id=f"s{i}", response=RESPONSE, contexts=CONTEXTS) for i in range(6)]
    report = vera.evaluate(samples, judge=LLMJudge(fake, mode="truths"), concurrency=6)
    assert kinds(fake).count("extract_truths") == 1
    assert kinds(fake).count("extract_claims") == kinds(fake).count("verify_claims") == 6
    assert report.metrics == {"faithfulness": 0.5}


async def test_a_failed_truths_call_is_not_cached() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    fake.enqueue(CLAIMS, "not json", "still not json")
    judge = LLMJudge(fake, mode="truths")
    with pytest.raises(vera.JudgeResponseError, match="invalid twice"):
        await judge.analyse(RESPONSE, CONTEXTS)
    _, verdicts = await judge.analyse(RESPONSE, CONTEXTS)
    assert [v.verdict for v in verdicts] == EXPECTED
    assert kinds(fake).count("extract_truths") == 3


async def test_single_call_mode_is_one_call_and_verdicts_are_checked() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    claims, verdicts = await LLMJudge(fake, mode="single_call").analyse(
        RESPONSE, CONTEXTS, query="Refunds?"
    )
    assert kinds(fake) == ["single_call"]
    assert [c.span for c in claims] == [(0, 29), (30, 62)]
    assert [v.verdict for v in verdicts] == EXPECTED
    assert all(v.quote_found for v in verdicts)
    prompt = fake.requests[0].messages[-1].content
    assert (
        prompt.index("<contexts>\n")
        < prompt.index("<question>\nRefunds?\n</question>")
        < prompt.index("<answer>\n1 The refund window is 60 days.\n2 Refunds go to")
    )


async def test_single_call_cut_off_falls_back_to_the_two_step_prompts() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    # A real adapter raises TruncatedOutputError for a reply stopped at max_tokens.
    fake.enqueue(TruncatedOutputError("the reply was cut off at max_tokens"))
    _, verdicts = await LLMJudge(fake, mode="single_call").analyse(RESPONSE, CONTEXTS)
    assert kinds(fake) == ["single_call", "extract_claims", "verify_claims"]
    assert [v.verdict for v in verdicts] == EXPECTED


def test_every_mode_gives_the_same_score_through_the_runner() -> None:
    sample = vera.Sample(id="s", response=RESPONSE, contexts=CONTEXTS)
    scores = {}
    for mode in ("batched", "per_claim", "truths", "single_call"):
        fake = FakeChatModel(respond=fake_model_answer)
        report = vera.evaluate([sample], judge=LLMJudge(fake, mode=mode))
        scores[mode] = (report.metrics["faithfulness"], len(fake.requests))
        assert report.judge_details["mode"] == mode
    assert scores == {
        "batched": (0.5, 2),
        "per_claim": (0.5, 3),
        "truths": (0.5, 3),
        "single_call": (0.5, 1),
    }


def test_unknown_mode_and_bad_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        LLMJudge(FakeChatModel(), mode="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="samples"):
        LLMJudge(FakeChatModel(), samples=0)


def verdicts_reply(*names: str) -> dict[str, object]:
    # Each claim cites the sentence about it: 2.1 (the window), 1.1 (the card).
    cited = ("2.1", "1.1")
    return {
        "verdicts": [
            {"claim": n, "verdict": v, "sentence": cited[n - 1]}
            for n, v in enumerate(names, start=1)
        ]
    }


async def test_samples_take_the_majority_and_report_agreement() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        CLAIMS,
        verdicts_reply("CONTRADICTED", "FULLY_SUPPORTED"),
        verdicts_reply("NO_EVIDENCE", "FULLY_SUPPORTED"),
        verdicts_reply("CONTRADICTED", "FULLY_SUPPORTED"),
    )
    judge = LLMJudge(fake, samples=3, temperature=0.7)
    _, verdicts = await judge.analyse(RESPONSE, CONTEXTS)
    assert [v.verdict for v in verdicts] == EXPECTED
    assert [v.agreement for v in verdicts] == [pytest.approx(2 / 3), 1.0]
    assert [r.draw for r in fake.requests] == [0, 0, 1, 2]
    assert {r.temperature for r in fake.requests} == {0.7}


def test_majority_tie_goes_to_the_less_supported_verdict() -> None:
    draws = [
        [vera.ClaimVerdict("c1", "FULLY_SUPPORTED", "quote a")],
        [vera.ClaimVerdict("c1", "NO_EVIDENCE")],
    ]
    [voted] = majority_verdicts(draws)
    assert voted.verdict is Verdict.NO_EVIDENCE and voted.agreement == 0.5
    single = majority_verdicts([[vera.ClaimVerdict("c1", "yes")]])
    assert single[0].agreement is None
    with pytest.raises(ValueError, match="same claims"):
        majority_verdicts([[vera.ClaimVerdict("c1", "yes")], [vera.ClaimVerdict("c2", "yes")]])


def test_draws_are_separate_cache_entries_and_agreement_reaches_the_report(tmp_path: Any) -> None:
    fake = FakeChatModel()
    fake.enqueue(
        CLAIMS,
        verdicts_reply("CONTRADICTED", "FULLY_SUPPORTED"),
        verdicts_reply("CONTRADICTED", "NO_EVIDENCE"),
        verdicts_reply("CONTRADICTED", "FULLY_SUPPORTED"),
    )
    sample = vera.Sample(id="s", response=RESPONSE, contexts=CONTEXTS)

    def run() -> vera.Report:
        model = ManagedChatModel(fake, cache=ResponseCache(tmp_path / "c.sqlite"))
        return vera.evaluate([sample], judge=LLMJudge(model, samples=3, temperature=0.7))

    first = run()
    second = run()
    assert len(fake.requests) == 4  # the re-run is served from the cache, draw by draw
    assert first.judge_details["agreement"] == {
        "claims": 2,
        "mean": pytest.approx((1 + 2 / 3) / 2),
        "unanimous": 0.5,
    }
    assert [c.agreement for c in second.samples[0].claims] == [1.0, pytest.approx(2 / 3)]
    assert first.metrics == second.metrics


def test_cost_is_booked_per_prompt() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    model = ManagedChatModel(fake)
    sample = vera.Sample(id="s", response=RESPONSE, contexts=CONTEXTS)
    report = vera.evaluate([sample], judge=LLMJudge(model, mode="truths"))
    by_label = report.judge_details["usage"]["by_label"]
    assert {k: v["calls"] for k, v in by_label.items()} == {
        "extract_claims": 1,
        "extract_truths": 1,
        "verify_claims": 1,
    }
    assert by_label["verify_claims"]["prompt_tokens"] == 100


def test_spent_budget_stops_the_run_and_keeps_finished_samples() -> None:
    fake = FakeChatModel(respond=fake_model_answer)
    # Each fake call books 100 prompt tokens; at $1000 per million that is $0.10 a call.
    ledger = CostLedger(PriceTable({"fake:fake-model": Price(input=1000, output=0)}), max_cost=0.15)
    judge = LLMJudge(ManagedChatModel(fake, ledger=ledger))
    samples = [vera.Sample(id=f"s{i}", response=RESPONSE, contexts=CONTEXTS) for i in range(4)]
    report = vera.evaluate(samples, judge=judge, concurrency=1)
    assert [r.status.value for r in report.samples] == ["scored", "skipped", "skipped", "skipped"]
    assert len(fake.requests) == 2
    assert report.stopped is not None and report.stopped.planned is True
    assert "budget of $0.1500 is spent" in report.stopped.reason
    assert report.metrics == {"faithfulness": 0.5}


async def test_relevance_is_one_call_and_missing_ratings_are_reasked() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {"ratings": [{"text": 1, "relevance": "RELEVANT", "reason": "on topic"},
                     {"text": 3, "relevance": "not relevant"}]},
        {"ratings": [{"text": 1, "relevance": "partially relevant"}]},
    )  # fmt: skip
    ratings = await LLMJudge(fake).rate_relevance("Refund window?", ["a", "b", "c"])
    assert [r.relevance.value for r in ratings] == [
        "RELEVANT",
        "PARTIALLY_RELEVANT",
        "IRRELEVANT",
    ]
    assert ratings[0].reason == "on topic"
    assert kinds(fake) == ["rate_relevance", "rate_relevance"]
    second = fake.requests[1].messages[-1].content
    assert "[1] b" in second and "[2]" not in second  # only the missing text, renumbered


async def test_unknown_relevance_label_is_reasked_then_an_error() -> None:
    fake = FakeChatModel()
    fake.enqueue({"ratings": [{"text": 1, "relevance": "MAYBE"}]}, "no")
    with pytest.raises(vera.JudgeResponseError, match="invalid twice"):
        await LLMJudge(fake).rate_relevance("q", ["a"])
    assert "MAYBE" in fake.requests[1].messages[-1].content
