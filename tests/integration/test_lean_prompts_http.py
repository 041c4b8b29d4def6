"""Lean, cache-friendly judge prompts over real HTTP, with the real `openai` and `anthropic`
SDKs against a scripted server on 127.0.0.1: the judge cites sentence ids and VERA quotes the
sentence itself; calls on the same contexts share their prompt up to the claims, an override
prompt's too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.loopback import LoopbackServer, Recorded, Reply, ok_openai
from tests.support.scripted import scripted_anthropic, scripted_openai

from vera import Verdict
from vera.judges import LLMJudge
from vera.providers import ManagedChatModel
from vera.providers._anthropic import AnthropicChatModel
from vera.providers._cache import ResponseCache
from vera.providers._openai import OpenAIChatModel

WHITEBOX = "the providers' own clients, retries, cache and batches"

CONTEXTS = [
    "Refunds are issued to the original card. Refunds take 5 days.",
    "The refund window is 30 days. Returns need a receipt.",
]
RESPONSE = "The refund window is 60 days. Refunds go to the card."


def gpt(loopback: LoopbackServer, **options: Any) -> LLMJudge:
    model = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=loopback.openai_url, timeout=5)
    cache = options.pop("cache", None)
    return LLMJudge(ManagedChatModel(model, cache=cache), **options)


def reply(payload: Any) -> Reply:
    return ok_openai(json.dumps(payload))


def messages(request: Recorded) -> list[dict[str, Any]]:
    return list(request.json["messages"])


def shared_prefix(a: str, b: str) -> str:
    """The longest text both `a` and `b` start with."""
    end = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return a[:end]


async def test_cited_sentence_ids_become_exact_quotes(loopback: LoopbackServer) -> None:
    loopback.script(
        reply({"claims": ["The refund window is 60 days.", "Refunds go to the card."]}),
        reply(
            {
                "verdicts": [
                    {"claim": 1, "verdict": "CONTRADICTED", "sentence": "2.1", "reason": "30"},
                    {"claim": 2, "verdict": "FULLY_SUPPORTED", "sentence": "1.1"},
                ]
            }
        ),
    )
    claims, verdicts = await gpt(loopback).analyse(RESPONSE, CONTEXTS)
    assert [c.text for c in claims] == ["The refund window is 60 days.", "Refunds go to the card."]
    assert [(v.verdict, v.context_index, v.evidence, v.quote_found) for v in verdicts] == [
        (Verdict.CONTRADICTED, 1, "The refund window is 30 days.", True),
        (Verdict.FULLY_SUPPORTED, 0, "Refunds are issued to the original card.", True),
    ]
    prompt = messages(loopback.requests[1])[-1]["content"]
    assert "\n\n3 The refund window is 30 days.\n4 Returns need a receipt.\n" in prompt
    # The reply's schema asks for compact rows (claim, verdict, sentence number), not a copy
    # of the sentence.
    schema = loopback.requests[1].json["response_format"]["json_schema"]["schema"]
    assert schema["properties"] == {"v": {"type": "array"}} and "quote" not in json.dumps(schema)


async def test_a_sentence_that_was_not_shown_costs_the_citation_not_the_sample(
    loopback: LoopbackServer,
) -> None:
    loopback.script(
        reply({"claims": ["Refunds go to the card."]}),
        reply({"verdicts": [{"claim": 1, "verdict": "FULLY_SUPPORTED", "sentence": "3.1"}]}),
    )
    _, [verdict] = await gpt(loopback).analyse("Refunds go to the card.", CONTEXTS)
    assert loopback.request_count == 2  # no re-ask
    assert (verdict.verdict, verdict.evidence, verdict.quote_found) == (
        Verdict.NO_EVIDENCE,
        "",
        False,
    )
    assert "cited sentence '3.1' does not exist" in verdict.reason


async def test_calls_on_one_sample_share_the_prompt_up_to_the_claims(
    loopback: LoopbackServer,
) -> None:
    loopback.default = scripted_openai
    await gpt(loopback, mode="per_claim").analyse(RESPONSE, CONTEXTS)
    extract, first, second = loopback.requests
    assert messages(first)[0] == messages(second)[0]  # the same system message
    one, two = messages(first)[-1]["content"], messages(second)[-1]["content"]
    # Instructions, then the contexts: everything up to the claims repeats, so a provider's
    # prefix cache serves it; only the claim differs.
    assert shared_prefix(one, two).endswith("</contexts>\n\n<claims>\n1. ")
    assert one.index("<claims>\n") > one.rindex("4 Returns need a receipt.")
    # Across samples, the extraction prompt's instructions are the shared prefix.
    await gpt(loopback).extract_claims("Something else entirely.", query="Q")
    other = messages(loopback.requests[-1])[-1]["content"]
    assert shared_prefix(messages(extract)[-1]["content"], other).endswith("<question>\n")


async def test_an_override_prompt_is_cached_by_its_content(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    override = prompts / "verify_claims.toml"
    override.write_text(
        'version = "mine/1"\nsystem = "Check claims."\n'
        'user = """Judge each claim; cite sentence ids.\n\n<contexts>\n$contexts\n</contexts>'
        '\n\n<claims>\n$claims\n</claims>"""\n',
        encoding="utf-8",
    )
    loopback.default = scripted_openai
    cache = ResponseCache(tmp_path / "cache.sqlite")
    judge = gpt(loopback, mode="per_claim", prompts_dir=prompts, cache=cache)
    _, verdicts = await judge.analyse(RESPONSE, CONTEXTS)
    assert [v.evidence for v in verdicts] == [
        "The refund window is 30 days.",
        "Refunds are issued to the original card.",
    ]
    first, second = (messages(r)[-1]["content"] for r in loopback.requests[1:3])
    # The override's own order is kept: its instructions and contexts are the shared prefix.
    assert shared_prefix(first, second).endswith("</contexts>\n\n<claims>\n1. ")
    calls = loopback.request_count
    # The same override again: every reply from VERA's cache, no call.
    again = gpt(loopback, mode="per_claim", prompts_dir=prompts, cache=cache)
    await again.analyse(RESPONSE, CONTEXTS)
    assert loopback.request_count == calls
    # An edited override is another prompt: its verifications are asked anew.
    override.write_text(override.read_text().replace("Check claims.", "Check."), "utf-8")
    edited = gpt(loopback, mode="per_claim", prompts_dir=prompts, cache=cache)
    await edited.analyse(RESPONSE, CONTEXTS)
    assert loopback.request_count == calls + 2
    cache.close()


async def test_anthropic_sentence_ids_become_exact_quotes(loopback: LoopbackServer) -> None:
    loopback.default = scripted_anthropic
    model = AnthropicChatModel(
        "claude-haiku-4-5", api_key="k", base_url=loopback.anthropic_url, timeout=5
    )
    _, verdicts = await LLMJudge(ManagedChatModel(model)).analyse(RESPONSE, CONTEXTS)
    assert [(v.verdict, v.evidence, v.quote_found) for v in verdicts] == [
        (Verdict.CONTRADICTED, "The refund window is 30 days.", True),
        (Verdict.FULLY_SUPPORTED, "Refunds are issued to the original card.", True),
    ]


def claude(loopback: LoopbackServer, model: str = "claude-sonnet-4-5", **options: Any) -> LLMJudge:
    chat = AnthropicChatModel(model, api_key="k", base_url=loopback.anthropic_url, timeout=5)
    return LLMJudge(ManagedChatModel(chat), **options)


LONG = [" ".join(f"Fact {i} of the policy is stated here." for i in range(130))]  # ~5,000 chars


def breakpoints(request: Recorded) -> list[str]:
    """The text before each `cache_control` breakpoint of an Anthropic request."""
    marked = []
    system = request.json.get("system")
    if isinstance(system, list):
        marked += [b["text"] for b in system if "cache_control" in b]
    for message in request.json["messages"]:
        if isinstance(message["content"], list):
            marked += [b["text"] for b in message["content"] if "cache_control" in b]
    return marked


async def test_anthropic_breakpoint_after_contexts_that_are_sent_again(
    loopback: LoopbackServer,
) -> None:
    loopback.default = scripted_anthropic
    response = "Fact 1 of the policy is stated here. Fact 2 of the policy is stated here."
    await claude(loopback, mode="per_claim").analyse(response, LONG)
    first, second = loopback.requests[1:]
    # Both verifications mark the same prefix, instructions and contexts, and vary after it.
    assert breakpoints(first) == breakpoints(second)
    [prefix] = breakpoints(first)
    assert prefix.endswith("</contexts>") and "<claims>\n" not in prefix
    assert breakpoints(loopback.requests[0]) == []  # extraction: nothing long repeats


async def test_anthropic_marks_no_breakpoint_where_it_would_not_pay(
    loopback: LoopbackServer,
) -> None:
    loopback.default = scripted_anthropic
    response = "Fact 1 of the policy is stated here. Fact 2 of the policy is stated here."
    # One verification per sample: a cache write (1.25x input) would never be read.
    await claude(loopback).analyse(response, LONG)
    # Contexts sent again but too short for the model to cache (Haiku 4.5: 4,096 tokens).
    await claude(loopback, "claude-haiku-4-5", mode="per_claim").analyse(response, LONG)
    assert all(breakpoints(r) == [] for r in loopback.requests)


async def test_anthropic_override_prompt_keeps_its_breakpoints(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = scripted_anthropic
    long_system = "Check claims strictly. " * 200  # a long static prefix, worth caching
    (tmp_path / "verify_claims.toml").write_text(
        f'version = "mine/1"\nsystem = "{long_system}"\n'
        'user = """Judge each claim.\n<contexts>\n$contexts\n</contexts>\n<claims>\n$claims'
        '\n</claims>"""\n',
        encoding="utf-8",
    )
    response = "Fact 1 of the policy is stated here. Fact 2 of the policy is stated here."
    await claude(loopback, mode="per_claim", prompts_dir=tmp_path).analyse(response, LONG)
    system, contexts = breakpoints(loopback.requests[1])
    assert system == long_system
    assert contexts.startswith("Judge each claim.\n<contexts>\n[1]\n1.1 Fact 0")
    assert contexts.endswith("</contexts>")


async def test_long_contexts_are_quoted_instead_of_numbered(loopback: LoopbackServer) -> None:
    loopback.default = scripted_openai
    judge = gpt(loopback)
    long = [" ".join(f"Fact {i} of the policy is stated here." for i in range(300)), CONTEXTS[0]]
    _, verdicts = await judge.analyse("Refunds go to the card.", long)
    verify = loopback.requests[-1]
    fields = verify.json["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert "quote" in fields["items"]["properties"]  # copied quotes cost less than 300 ids
    assert "1.1 Fact 0" not in messages(verify)[-1]["content"]
    assert (
        verdicts[0].quote_found
        and verdicts[0].evidence == "Refunds are issued to the original card."
    )
    assert judge.prompt_versions["verify_claims_quoted"] == "verify_claims_quoted/3"
    # Short contexts: sentence ids, and the quoted prompt is not recorded where unused.
    short_judge = gpt(loopback)
    await short_judge.analyse("Refunds go to the card.", CONTEXTS)
    assert "verify_claims_quoted" not in short_judge.prompt_versions
