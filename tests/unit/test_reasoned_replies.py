"""The reasoned prompts (`--judge-replies reasoned`, the default for a model served on this
machine): a small model restates each claim and says what the context says about it before its
verdict, and VERA takes the evidence from the sentence the reason quotes or names. Driven by
FakeChatModel, a scripted fake provider: each test states what the "model" said."""

from __future__ import annotations

import pytest

import vera
from vera import Settings, Verdict
from vera.judges import LLMJudge, create_judge
from vera.testing import FakeChatModel

CONTEXTS = [
    "Refunds are issued to the original card. Refunds take 5 days.",
    "The refund window is 30 days. Returns need a receipt.",
]
CLAIMS = [
    vera.Claim("c1", "The refund window is 60 days."),
    vera.Claim("c2", "Refunds take 5 days."),
    vera.Claim("c3", "Returns need a receipt."),
]


def _entry(claim: int, reason: str, verdict: str) -> dict[str, object]:
    return {
        "claim": claim,
        "statement": CLAIMS[claim - 1].text,
        "reason": reason,
        "verdict": verdict,
    }


async def test_the_reasoned_prompt_asks_for_named_fields_over_dotted_ids() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {
            "verdicts": [
                _entry(1, "Sentence 2.1 says the refund window is 30 days.", "CONTRADICTED"),
                _entry(2, "The context states that Refunds take 5 days.", "SUPPORTED"),
                _entry(3, "It follows from the context.", "SUPPORTED"),
            ]
        }
    )
    judge = LLMJudge(fake, replies="reasoned")
    first, second, third = await judge.verify_claims(CLAIMS, CONTEXTS)
    request = fake.requests[0]
    assert request.json_schema is not None and request.json_schema["required"] == ["verdicts"]
    assert request.prompt_version == "verify_claims/reasoned-1"
    assert "\n2.1 The refund window is 30 days." in request.messages[-1].content
    # Named: the sentence's id in the reason; quoted: its words. Either is its evidence.
    assert (first.verdict, first.evidence) == (
        Verdict.CONTRADICTED,
        "The refund window is 30 days.",
    )
    assert (second.verdict, second.evidence) == (Verdict.FULLY_SUPPORTED, "Refunds take 5 days.")
    # A reason that neither quotes nor names a sentence: VERA locates the one sentence that
    # holds the claim's words, and says so.
    assert (third.verdict, third.evidence) == (Verdict.FULLY_SUPPORTED, "Returns need a receipt.")
    assert "evidence located by VERA" in third.reason
    assert judge.prompt_versions["verify_claims"] == "verify_claims/reasoned-1"


async def test_a_supported_claim_no_sentence_holds_has_no_evidence() -> None:
    fake = FakeChatModel()
    invented = vera.Claim("c9", "Refunds need a manager's written approval.")
    fake.enqueue(
        {
            "verdicts": [
                {"claim": 1, "reason": "It follows from the context.", "verdict": "SUPPORTED"}
            ]
        }
    )
    (verdict,) = await LLMJudge(fake, replies="reasoned").verify_claims([invented], CONTEXTS)
    assert (verdict.verdict, verdict.quote_found) == (Verdict.NO_EVIDENCE, False)


async def test_a_compact_row_that_cites_nothing_is_never_located() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, None, "yes"]]})
    (verdict,) = await LLMJudge(fake).verify_claims(CLAIMS[2:], CONTEXTS)
    assert verdict.verdict is Verdict.NO_EVIDENCE


async def test_a_quoted_sentence_that_shares_nothing_with_its_claim_supports_nothing() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {"verdicts": [_entry(1, "The context states that Returns need a receipt.", "SUPPORTED")]}
    )
    (verdict,) = await LLMJudge(fake, replies="reasoned").verify_claims(CLAIMS[1:2], CONTEXTS)
    assert verdict.verdict is Verdict.NO_EVIDENCE
    assert "shares nothing with the claim" in verdict.reason


async def test_long_contexts_keep_their_ids_in_the_reasoned_prompt() -> None:
    # The compact prompt switches to quotes for long contexts and few claims (docs/cost.md);
    # a small model on a local server quotes worse than it cites, so the ids stay.
    long_context = " ".join(f"Clause {n} sets fee number {n} at {n} dollars." for n in range(80))
    for replies, version in (
        ("compact", "verify_claims_quoted/3"),
        ("reasoned", "verify_claims/reasoned-1"),
    ):
        fake = FakeChatModel()
        fake.enqueue({"verdicts": [_entry(1, "Sentence 1.3 says so.", "NO_EVIDENCE")]})
        await LLMJudge(fake, replies=replies).verify_claims(CLAIMS[:1], [long_context])
        assert fake.requests[0].prompt_version == version


def test_auto_asks_a_model_on_this_machine_for_reasoned_replies_and_any_other_for_compact() -> None:
    local = create_judge("openai:qwen", Settings(judge_base_url="http://127.0.0.1:8080/v1"))
    ollama = create_judge("ollama:qwen2.5", Settings())
    hosted = create_judge("openai:gpt-4o-mini", Settings())
    chosen = create_judge(
        "openai:qwen",
        Settings(judge_base_url="http://127.0.0.1:8080/v1", judge_replies="compact"),
    )
    replies = [getattr(judge, "replies", None) for judge in (local, ollama, hosted, chosen)]
    assert replies == ["reasoned", "reasoned", "compact", "compact"]


def test_an_unknown_reply_style_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown replies 'verbose'"):
        LLMJudge(FakeChatModel(), replies="verbose")  # type: ignore[arg-type]


def test_rubric_items_ride_on_compact_verification_calls_only() -> None:
    # A small model asked in the reasoned prompts gets one question a call.
    assert LLMJudge(FakeChatModel(), replies="compact").rides_rubrics
    assert not LLMJudge(FakeChatModel(), replies="reasoned").rides_rubrics
