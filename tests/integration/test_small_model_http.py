"""The LLM judge against a loopback server that answers like the 1.5B model of issue 45 did on
llama-cpp-python's server: `response_format` json_schema refused with HTTP 500, JSON in code
fences with prose around it, a bare list where an object was asked for, the prompt's old
example row copied onto claim 1, sentences cited by their text, "Sure!" and list numbers in
the claims, a long answer returned as one claim (`tests.support.scripted.SmallModel`). Every
sample must be scored, without a re-ask, and no citation that proves nothing may support."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from tests.support.loopback import LoopbackServer, refusing_json_schema
from tests.support.scripted import SmallModel

import vera
from vera import Claim, ClaimVerdict, Verdict
from vera.datasets import bundled_path
from vera.judges import LLMJudge
from vera.providers import ManagedChatModel
from vera.providers._openai import OpenAIChatModel
from vera.providers._retry import RetryPolicy

WHITEBOX = "the providers' own clients, retries, cache and batches"


def example_rows(count: int) -> list[vera.Sample]:
    path = bundled_path("example")
    assert path is not None
    return list(vera.load_dataset(path))[:count]


def words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"\w+", text.lower()) if len(w) > 3 or w.isdigit()}


def shares_a_word(claim: str, evidence: str) -> bool:
    return bool(words(claim) & words(evidence))


async def no_wait(_: float) -> None:
    return None


def judge_for(loopback: LoopbackServer, mode: str) -> LLMJudge:
    model = OpenAIChatModel("qwen2.5-coder-1.5b", base_url=loopback.openai_url, timeout=5)
    managed = ManagedChatModel(model, retry=RetryPolicy(max_attempts=3), sleep=no_wait)
    return LLMJudge(managed, mode=mode)  # type: ignore[arg-type]


def reasks(loopback: LoopbackServer) -> int:
    return sum("not valid" in str(r.json["messages"][-1]["content"]) for r in loopback.requests)


async def analysed(
    loopback: LoopbackServer, model: SmallModel, response: str, contexts: list[str]
) -> tuple[list[Claim], list[ClaimVerdict]]:
    """`response` judged in batched mode by `model` behind a server that refuses json_schema
    (its one warning, about falling back, silenced)."""
    loopback.default = refusing_json_schema(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return await judge_for(loopback, "batched").analyse(response, contexts)


@pytest.mark.parametrize("mode", ["batched", "single_call"])
async def test_every_example_sample_is_scored_without_a_reask(
    loopback: LoopbackServer, mode: str
) -> None:
    loopback.default = refusing_json_schema(SmallModel())
    judge = judge_for(loopback, mode)
    samples = example_rows(10)
    judged: list[tuple[Any, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for sample in samples:
            judged.append(
                await judge.analyse(sample.response, sample.context_texts, query=sample.query)
            )
    refused = [str(w.message) for w in caught if "refused response_format" in str(w.message)]
    assert len(refused) == 1  # learnt once, said once
    calls_per_sample = 2 if mode == "batched" else 1
    assert loopback.request_count == 1 + calls_per_sample * len(samples)
    assert reasks(loopback) == 0
    for sample, (claims, verdicts) in zip(samples, judged, strict=True):
        assert claims and len(claims) == len(verdicts)
        for claim, verdict in zip(claims, verdicts, strict=True):
            # No pleasantry, list number or whole answer is a claim.
            assert not re.match(r"(sure|\d+\.\s)", claim.text, flags=re.IGNORECASE)
            assert claim.text != sample.response or "." not in sample.response.rstrip(".")
            if verdict.verdict is Verdict.FULLY_SUPPORTED:
                assert verdict.quote_found and shares_a_word(claim.text, verdict.evidence)


async def test_the_copied_example_row_never_supports_an_unrelated_claim(
    loopback: LoopbackServer,
) -> None:
    claims, verdicts = await analysed(
        loopback,
        SmallModel(),
        "Invoices are issued annually in advance. Late fees are 2%.",
        ["Unpaid amounts accrue interest. Invoices are issued monthly. Fees are due."],
    )
    # Claim 1 got [1, "F", 7]: there is no sentence 7, and the citation alone is lost.
    first = verdicts[0]
    assert (first.verdict, first.quote_found) == (Verdict.NO_EVIDENCE, False)
    assert "cited sentence '7' does not exist" in first.reason
    # Claim 2 cited a sentence by its text: read as that sentence.
    assert claims[1].text == "Late fees are 2%."
    assert verdicts[1].evidence == "Fees are due."


async def test_a_long_answer_returned_whole_is_split_into_its_sentences(
    loopback: LoopbackServer,
) -> None:
    loopback.default = refusing_json_schema(SmallModel(whole_from=3))
    response = "Refunds take 5 days. They go to the card. Support answers within a day."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        claims = await judge_for(loopback, "batched").extract_claims(response)
    assert [c.text for c in claims] == [
        "Refunds take 5 days.",
        "They go to the card.",
        "Support answers within a day.",
    ]
    assert all(c.span is not None for c in claims)


async def test_verdict_words_with_a_reason_on_every_row_are_read_as_meant(
    loopback: LoopbackServer,
) -> None:
    # verify_claims/6 asks a verdict word (the model read the letter C as "consistent"); the
    # model put a reason on every row, and a JSON boolean where claim 1's reason goes.
    _, verdicts = await analysed(
        loopback,
        SmallModel(verdict_words=True),
        "Refunds take 5 days. Returns are accepted within 60 days.",
        ["Refunds take 5 days to process. Returns are accepted within 30 days."],
    )
    assert reasks(loopback) == 0
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED, Verdict.CONTRADICTED]
    assert verdicts[0].evidence == "Refunds take 5 days to process."
    assert verdicts[1].evidence == "Returns are accepted within 30 days."
    assert "sentence 2" in verdicts[1].reason


async def test_a_claim_copied_where_the_sentence_goes_cites_the_sentence_it_rewords(
    loopback: LoopbackServer,
) -> None:
    # Asked for the deciding sentence by its number or its words, the model wrote the claim's
    # own words there: each names the one sentence it is a close copy of, which VERA quotes.
    _, verdicts = await analysed(
        loopback,
        SmallModel(copies_claims=True),
        "Refunds are processed in 5 days. Returns are accepted within 60 days.",
        ["Refunds take 5 days to process. Returns are accepted within 30 days."],
    )
    assert reasks(loopback) == 0
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED, Verdict.CONTRADICTED]
    assert [v.evidence for v in verdicts] == [
        "Refunds take 5 days to process.",
        "Returns are accepted within 30 days.",
    ]
    assert verdicts[1].reason == "the sentence says 30 days"


async def test_a_copied_claim_close_to_no_sentence_supports_nothing(
    loopback: LoopbackServer,
) -> None:
    # The same reply where no sentence holds most of the claim's words: no citation, so the
    # "true" is NO_EVIDENCE, never FULLY_SUPPORTED.
    _, verdicts = await analysed(
        loopback,
        SmallModel(copies_claims=True),
        "Refunds reach the card by courier within 5 days.",
        ["Refunds take 5 days to process. Returns are accepted within 30 days."],
    )
    assert [v.verdict for v in verdicts] == [Verdict.NO_EVIDENCE]
    assert verdicts[0].evidence == ""


def test_a_judge_on_loopback_asks_in_the_reasoned_prompts_and_reads_what_the_model_wrote(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default (--judge-replies auto) for a judge on this machine; no flag, no proxy.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    loopback.default = refusing_json_schema(SmallModel(reasons=True, whole_from=9))
    samples = example_rows(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = vera.evaluate(
            samples,
            ["faithfulness"],
            "openai:qwen2.5-coder-1.5b",
            judge_base_url=loopback.openai_url,
            cache=False,
            history=False,
            concurrency=1,
        )
    assert report.judge_details["prompt_versions"]["verify_claims"] == "verify_claims/reasoned-1"
    asked = [str(r.json["messages"][-1]["content"]) for r in loopback.requests]
    assert any('"statement" (the claim, copied)' in text for text in asked)
    assert all(s.status.value == "scored" for s in report.samples), report.samples
    verdicts = [c for s in report.samples for c in s.claims]
    supported = [v for v in verdicts if v.verdict is Verdict.FULLY_SUPPORTED]
    # Every verdict that supports has the sentence its reason quoted or named as evidence.
    assert supported and all(v.quote_found and v.evidence for v in supported)
    # The one entry without a verdict cost its claim a second call, not the sample.
    alone = [t for t in asked if "That reply was not valid" not in t and "\n1. " in t]
    assert reasks(loopback) == 0 and len(alone) > len(samples)
