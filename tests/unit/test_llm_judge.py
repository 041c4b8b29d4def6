"""LLMJudge's batched mode, driven by FakeChatModel, a scripted fake provider.

The fake returns queued replies and records every request, so each test states exactly what
the "model" said and asserts what the judge did with it.
"""

import hashlib
from pathlib import Path

import pytest

import vera
from vera import ConfigError, JudgeResponseError, Verdict
from vera.judges import LLMJudge
from vera.providers import ChatResponse, ManagedChatModel, TruncatedOutputError
from vera.providers._cache import ResponseCache
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


def verdicts(*rows: tuple[int, str, int | None, str]) -> dict[str, object]:
    return {
        "verdicts": [
            {"claim": c, "verdict": v, "context": ctx, "quote": q, "reason": "r"}
            for c, v, ctx, q in rows
        ]
    }


async def test_batched_mode_is_two_calls_with_schema_and_prompt_version() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        CLAIMS,
        verdicts(
            (1, "CONTRADICTED", 2, "The refund window is 30 days."),
            (2, "SUPPORTED", 1, "Refunds are issued to the original card."),
        ),
    )
    judge = LLMJudge(fake)
    claims = await judge.extract_claims(RESPONSE, query="How long?")
    result = await judge.verify_claims(claims, CONTEXTS)
    assert len(fake.requests) == 2
    assert [c.span for c in claims] == [(0, 29), (30, 62)]
    assert [v.verdict for v in result] == [Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED]
    assert [v.context_index for v in result] == [1, 0]
    assert all(v.quote_found for v in result)
    extract, verify = fake.requests
    assert extract.prompt_version == "extract_claims/4" and extract.schema_name == "claims"
    assert verify.json_schema is not None and verify.temperature == 0.0
    prompt = verify.messages[-1].content
    # Contexts are shown with sentences numbered across them, for the judge to cite by number.
    assert "1 Refunds are issued to the original card.\n\n2 The refund window is 30 days." in prompt
    assert "1. The refund window is 60 days.\n2. Refunds go to the original card." in prompt
    # The static instructions come first, so provider prompt caching applies.
    assert verify.messages[0].role == "system" and prompt.index("<claims>\n") > prompt.index(
        "<contexts>\n"
    )


async def test_invalid_reply_is_reasked_once_with_the_error() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        verdicts((1, "banana", 1, "")),
        verdicts((1, "no", 2, "The refund window is 30 days.")),
    )
    judge = LLMJudge(fake)
    [verdict] = await judge.verify_claims([vera.Claim("c1", "60 days")], CONTEXTS)
    assert verdict.verdict is Verdict.CONTRADICTED
    retry = fake.requests[1].messages
    assert retry[-2].role == "assistant"
    assert "unknown verdict 'banana'" in retry[-1].content


async def test_invalid_twice_raises_judge_response_error() -> None:
    fake = FakeChatModel()
    fake.enqueue("not json at all", "still {not json")
    with pytest.raises(JudgeResponseError, match="invalid twice"):
        await LLMJudge(fake).verify_claims([vera.Claim("c1", "x")], CONTEXTS)


async def test_fenced_and_prose_wrapped_json_is_read() -> None:
    fake = FakeChatModel()
    fake.enqueue(ChatResponse(text='Sure! ```json\n{"claims": [{"number": 1, "text": "A."}]}\n```'))
    assert [c.text for c in await LLMJudge(fake).extract_claims("A.")] == ["A."]


async def test_missing_verdicts_are_reasked_alone_and_extras_dropped() -> None:
    fake = FakeChatModel()
    claims = [vera.Claim(f"c{i}", f"Refunds claim {i}") for i in (1, 2, 3)]
    card = CONTEXTS[0]
    fake.enqueue(
        verdicts((1, "yes", 1, card), (3, "idk", None, ""), (9, "yes", 1, card)),
        verdicts((1, "PARTIALLY_SUPPORTED", 1, card)),  # the re-ask numbers only claim 2, as 1
    )
    result = await LLMJudge(fake).verify_claims(claims, CONTEXTS)
    assert [v.verdict for v in result] == [
        Verdict.FULLY_SUPPORTED,
        Verdict.PARTIALLY_SUPPORTED,
        Verdict.NO_EVIDENCE,
    ]
    reask = fake.requests[1].messages[-1].content
    assert "1. Refunds claim 2" in reask and "claim 1" not in reask and "claim 3" not in reask


async def test_no_verdict_at_all_after_reask_is_an_error() -> None:
    fake = FakeChatModel()
    fake.enqueue(verdicts(), verdicts())
    claims = [vera.Claim("c1", "a"), vera.Claim("c2", "b")]
    with pytest.raises(JudgeResponseError, match=r"no verdict for claims \['c1', 'c2'\]"):
        await LLMJudge(fake).verify_claims(claims, CONTEXTS)


@pytest.mark.parametrize(
    ("quote", "context", "found", "index"),
    [
        ("the REFUND window   is 30 days", 2, True, 1),  # case and whitespace tolerated
        ("Refunds are issued ... original card", 1, True, 0),  # an ellipsis may elide
        ("The refund window is 30 days.", None, True, 1),  # uncited: found, and cited for you
        ("The refund window is 90 days.", 2, False, 1),  # invented
    ],
)
async def test_quotes_are_checked_against_the_cited_context(
    quote: str, context: int | None, found: bool, index: int
) -> None:
    fake = FakeChatModel()
    fake.enqueue(verdicts((1, "CONTRADICTED", context, quote)))
    claim = vera.Claim("c1", "The refund window is 60 days.")
    [verdict] = await LLMJudge(fake).verify_claims([claim], CONTEXTS)
    assert verdict.quote_found is found
    assert verdict.context_index == index
    assert verdict.reason.startswith("[quote not found") is (not found)


async def test_truncated_reply_splits_the_claims_into_smaller_calls() -> None:
    fake = FakeChatModel()
    claims = [vera.Claim(f"c{i}", f"Refunds claim {i}") for i in range(1, 5)]
    card, window = CONTEXTS
    fake.enqueue(
        TruncatedOutputError("cut off"),
        verdicts((1, "yes", 1, card), (2, "yes", 1, card)),
        verdicts((1, "no", 2, window), (2, "idk", None, "")),
    )
    result = await LLMJudge(fake).verify_claims(claims, CONTEXTS)
    assert [v.verdict.value for v in result] == [
        "FULLY_SUPPORTED",
        "FULLY_SUPPORTED",
        "CONTRADICTED",
        "NO_EVIDENCE",
    ]
    assert [
        r.messages[-1].content.count("\n", r.messages[-1].content.index("<claims>\n"))
        for r in fake.requests
    ] == [5, 3, 3]  # one line per claim, and the closing tag's


async def test_truncated_extraction_splits_the_response() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        TruncatedOutputError("cut off"),
        {"claims": [{"number": 1, "text": "The refund window is 60 days."}]},
        {"claims": [{"number": 1, "text": "Refunds go to the original card."}]},
    )
    claims = await LLMJudge(fake).extract_claims(RESPONSE)
    assert [c.id for c in claims] == ["c1", "c2"]
    assert "Refunds go" not in fake.requests[1].messages[-1].content


async def test_no_contexts_needs_no_call() -> None:
    fake = FakeChatModel()
    [verdict] = await LLMJudge(fake).verify_claims([vera.Claim("c1", "x")], [])
    assert verdict.verdict is Verdict.NO_EVIDENCE and fake.requests == []


def test_prompts_can_be_overridden_and_bad_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "verify_claims.toml").write_text(
        'version = "mine/7"\nsystem = "s"\nuser = "C: $contexts L: $claims"\n'
    )
    judge = LLMJudge(FakeChatModel(), prompts_dir=tmp_path)
    digest = hashlib.sha256((tmp_path / "verify_claims.toml").read_bytes()).hexdigest()[:12]
    assert judge.prompt_versions == {
        "extract_claims": "extract_claims/4",
        "verify_claims": f"mine/7+sha256:{digest}",
        "rate_relevance": "rate_relevance/2",
    }
    (tmp_path / "extract_claims.toml").write_text('version = "x"\nsystem = 3\n')
    with pytest.raises(ConfigError, match="missing string field"):
        LLMJudge(FakeChatModel(), prompts_dir=tmp_path)


def test_end_to_end_with_cache_second_run_makes_zero_calls(tmp_path: Path) -> None:
    sample = vera.Sample(id="s", response=RESPONSE, contexts=CONTEXTS)
    fake = FakeChatModel()
    fake.enqueue(CLAIMS, verdicts((1, "CONTRADICTED", 2, ""), (2, "yes", 1, CONTEXTS[0])))

    def run() -> vera.Report:
        model = ManagedChatModel(fake, cache=ResponseCache(tmp_path / "c.sqlite"))
        return vera.evaluate([sample], judge=LLMJudge(model))

    first, second = run(), run()
    assert len(fake.requests) == 2
    assert first.metrics == second.metrics == {"faithfulness": 0.5}
    assert first.judge == "fake:fake-model"
