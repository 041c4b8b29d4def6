"""The compact judge replies (docs/cost.md): verdict rows with one-letter codes and flat
sentence numbers, and claims by reference to the answer's numbered sentences. Driven by
FakeChatModel, a scripted fake provider: each test states what the "model" said and asserts
what the judge did with it. Today's named-field replies stay valid (an override prompt asks
for them), and an invalid compact reply is asked again once with what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vera
from vera import ConfigError, JudgeResponseError, Verdict
from vera.judges import LLMJudge
from vera.providers import ChatResponse
from vera.testing import FakeChatModel

CONTEXTS = [
    "Refunds are issued to the original card. Refunds take 5 days.",
    "The refund window is 30 days. Returns need a receipt.",
]
CLAIMS = [
    vera.Claim("c1", "The refund window is 60 days."),
    vera.Claim("c2", "Refunds take 5 days."),
]
RESPONSE = "The refund window is 60 days. It goes to the card, within 5 days."


async def test_verdict_rows_become_verdicts_quoting_the_cited_sentence() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "C", 3, "30 days, not 60"], [2, "F", 2]]})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (first.verdict, first.context_index, first.evidence, first.reason) == (
        Verdict.CONTRADICTED,
        1,
        "The refund window is 30 days.",
        "30 days, not 60",
    )
    assert (second.verdict, second.context_index, second.evidence) == (
        Verdict.FULLY_SUPPORTED,
        0,
        "Refunds take 5 days.",
    )
    assert first.quote_found and second.quote_found
    # The request carried the compact schema: rows under "v", nothing spelled out per cell.
    assert fake.requests[0].json_schema == {
        "type": "object",
        "properties": {"v": {"type": "array"}},
        "required": ["v"],
    }


@pytest.mark.parametrize(
    "rows",
    [
        # As verify_claims/6 asks: [claim, sentence, verdict word, reason only for false].
        [[1, 3, "false", "30 days, not 60"], [2, 2, "yes"]],
        # The reason before the verdict, and a JSON boolean where a reason goes.
        [[1, 3, "30 days, not 60", "false"], [2, 2, "yes", True]],
        # The same rows run together in one list.
        [1, 3, "false", "30 days, not 60", 2, 2, "yes"],
        # "true" for yes beside the asked "false", the reason before the verdict.
        [[1, 3, "30 days, not 60", "false"], [2, 2, None, "true"]],
    ],
)
async def test_verdict_words_are_read_wherever_the_row_puts_them(rows: list[object]) -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": rows})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert len(fake.requests) == 1  # read as it came, no re-ask
    assert (first.verdict, first.evidence, first.reason) == (
        Verdict.CONTRADICTED,
        "The refund window is 30 days.",
        "30 days, not 60",
    )
    assert (second.verdict, second.evidence) == (Verdict.FULLY_SUPPORTED, "Refunds take 5 days.")


async def test_a_row_without_a_verdict_costs_its_claim_not_the_sample() -> None:
    # Qwen2.5-Coder-1.5B once put the prompt's own words where claim 2's verdict goes.
    fake = FakeChatModel()
    copied = [1, 3, "do the sentences say this?", "no information"]
    fake.enqueue({"v": [copied, [2, 2, "yes"]]}, {"v": [[1, 3, "false", "30 days, not 60"]]})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert second.verdict is Verdict.FULLY_SUPPORTED
    assert (first.verdict, first.reason) == (Verdict.CONTRADICTED, "30 days, not 60")
    asked_again = fake.requests[1].messages[-1].content.split("<claims>")[1]
    assert asked_again.split() == ["1.", *CLAIMS[0].text.split(), "</claims>"]


async def test_a_no_evidence_row_needs_no_sentence_and_named_codes_are_read_too() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "N", None], [2, "partially_supported", "1.2", "only the days"]]})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (first.verdict, first.evidence) == (Verdict.NO_EVIDENCE, "")
    assert (second.verdict, second.evidence) == (
        Verdict.PARTIALLY_SUPPORTED,
        "Refunds take 5 days.",
    )


async def test_the_named_fields_reply_is_still_valid() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {
            "verdicts": [
                {"claim": 1, "verdict": "CONTRADICTED", "sentence": "2.1", "reason": "30"},
                {"claim": 2, "verdict": "FULLY_SUPPORTED", "sentence": 2},
            ]
        }
    )
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (first.verdict, first.evidence) == (
        Verdict.CONTRADICTED,
        "The refund window is 30 days.",
    )
    assert (second.verdict, second.evidence) == (Verdict.FULLY_SUPPORTED, "Refunds take 5 days.")


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ([1, "X", 2], "unknown verdict 'X' in [1, 'X', 2]; a verdict is one of yes, partly"),
        ([1], "each entry must be a row [claim, sentence number, verdict, reason], got [1]"),
    ],
)
async def test_a_reply_of_invalid_rows_is_asked_again_once_with_what_is_wrong(
    row: list[object], problem: str
) -> None:
    # One row that cannot be read beside others costs its claim (below); none read, the reply.
    fake = FakeChatModel()
    fake.enqueue({"v": [row]}, {"v": [[1, "C", 3, "30"], [2, "F", 2]]})
    first, _ = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert first.verdict is Verdict.CONTRADICTED and first.evidence.startswith("The refund")
    reask = fake.requests[1].messages
    assert reask[-2].role == "assistant"
    assert problem in reask[-1].content


async def test_an_invalid_row_twice_is_a_judge_error() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "X", 2]]}, {"v": [[1, "X", 2]]})
    with pytest.raises(JudgeResponseError, match=r"invalid twice.*unknown verdict 'X'"):
        await LLMJudge(fake).verify_claims(CLAIMS[:1], CONTEXTS)


async def test_a_sentence_that_does_not_exist_costs_the_citation_not_the_sample() -> None:
    # The small model's copy of the prompt's example: sentence 7 of a context with 4.
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "F", 7], [2, "F", 2]]})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert len(fake.requests) == 1  # not asked again
    assert (first.verdict, first.evidence, first.quote_found) == (Verdict.NO_EVIDENCE, "", False)
    assert "cited sentence '7' does not exist" in first.reason
    assert second.verdict is Verdict.FULLY_SUPPORTED


async def test_a_cited_sentence_that_shares_nothing_with_its_claim_supports_nothing() -> None:
    # "Refunds take 5 days." cited for a claim about receipts: a fabricated citation.
    fake = FakeChatModel()
    claims = [vera.Claim("c1", "Returns need a receipt."), vera.Claim("c2", "Refunds take 5 days.")]
    fake.enqueue({"v": [[1, "F", 2], [2, "F", "Refunds take 5 days."]]})
    first, second = await LLMJudge(fake).verify_claims(claims, CONTEXTS)
    assert (first.verdict, first.quote_found) == (Verdict.NO_EVIDENCE, False)
    assert "shares nothing with the claim" in first.reason
    # Cited by its text instead of its number: resolved to that sentence, and it supports.
    assert (second.verdict, second.evidence, second.context_index) == (
        Verdict.FULLY_SUPPORTED,
        "Refunds take 5 days.",
        0,
    )


async def test_a_missing_claim_is_asked_again_alone_and_an_unknown_one_dropped() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "F", 2], [7, "F", 1]]}, {"v": [[1, "N", None]]})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert [first.verdict, second.verdict] == [Verdict.FULLY_SUPPORTED, Verdict.NO_EVIDENCE]
    reask = fake.requests[1].messages[-1].content
    assert "1. Refunds take 5 days." in reask and "60 days" not in reask


async def test_a_claim_still_missing_costs_that_claim_and_no_verdict_at_all_is_an_error() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "F", 2]]}, {"v": []})
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert first.verdict is Verdict.FULLY_SUPPORTED
    assert second.verdict is Verdict.NO_EVIDENCE and "no verdict" in second.reason
    fake.enqueue({"v": []}, {"v": []})
    with pytest.raises(JudgeResponseError, match=r"no verdict for claims \['c1', 'c2'\]"):
        await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)


# Claims by reference ---------------------------------------------------------------------


async def test_a_sentence_number_expands_to_the_exact_sentence_of_the_answer() -> None:
    fake = FakeChatModel()
    fake.enqueue({"claims": [1, "The refund goes to the card.", "It takes 5 days."]})
    claims = await LLMJudge(fake).extract_claims(RESPONSE, query="Refunds?")
    assert [c.text for c in claims] == [
        "The refund window is 60 days.",
        "The refund goes to the card.",
        "It takes 5 days.",
    ]
    # The reference is a slice of the answer, located exactly.
    assert claims[0].span == (0, 29) and RESPONSE[0:29] == claims[0].text
    sent = fake.requests[0].messages[-1].content
    assert (
        "<answer>\n1 The refund window is 60 days.\n2 It goes to the card, within 5 days.\n"
        "</answer>" in sent
    )


async def test_a_numbered_line_copied_whole_is_the_sentence_without_its_number() -> None:
    # A model may copy the line it was shown ("2 It goes to ...") instead of citing 2; a
    # number before text that is not that sentence is the claim's own text.
    fake = FakeChatModel()
    fake.enqueue({"claims": ["2 It goes to the card, within 5 days.", "1 It takes 5 days."]})
    claims = await LLMJudge(fake).extract_claims(RESPONSE)
    assert [c.text for c in claims] == ["It goes to the card, within 5 days.", "1 It takes 5 days."]
    assert claims[0].span == (30, len(RESPONSE))


async def test_an_out_of_range_reference_is_an_invalid_reply_asked_again() -> None:
    fake = FakeChatModel()
    fake.enqueue({"claims": [1, 3]}, {"claims": [1, 2]})
    claims = await LLMJudge(fake).extract_claims(RESPONSE)
    assert [c.text for c in claims] == [
        "The refund window is 60 days.",
        "It goes to the card, within 5 days.",
    ]
    reask = fake.requests[1].messages[-1].content
    assert "claim 3 refers to sentence 3, but the answer has sentences 1 to 2" in reask


async def test_an_out_of_range_reference_twice_is_a_judge_error() -> None:
    fake = FakeChatModel()
    fake.enqueue({"claims": [0]}, {"claims": [5]})
    with pytest.raises(JudgeResponseError, match=r"invalid twice.*refers to sentence 5"):
        await LLMJudge(fake).extract_claims(RESPONSE)


async def test_single_call_rows_take_references_and_texts() -> None:
    fake = FakeChatModel()
    fake.enqueue({"claims": [[1, "C", 3, "30, not 60"], ["The refund goes to the card.", "F", 1]]})
    claims, verdicts = await LLMJudge(fake, mode="single_call").analyse(RESPONSE, CONTEXTS)
    assert [c.text for c in claims] == [
        "The refund window is 60 days.",
        "The refund goes to the card.",
    ]
    assert [(v.verdict, v.evidence) for v in verdicts] == [
        (Verdict.CONTRADICTED, "The refund window is 30 days."),
        (Verdict.FULLY_SUPPORTED, "Refunds are issued to the original card."),
    ]
    assert fake.requests[0].prompt_version == "single_call/5"


# Prompt files of your own ---------------------------------------------------------------


def _override(folder: Path, extra: str = "") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "verify_claims.toml").write_text(
        f'version = "mine/1"\n{extra}system = "Check. Never instructions."\n'
        'user = """Judge each claim.\n\n<contexts>\n$contexts\n</contexts>\n\n'
        '<claims>\n$claims\n</claims>"""\n',
        encoding="utf-8",
    )
    return folder


async def test_a_prompt_of_your_own_gets_the_named_fields_and_dotted_ids(tmp_path: Path) -> None:
    fake = FakeChatModel()
    fake.enqueue({"verdicts": [{"claim": 1, "verdict": "CONTRADICTED", "sentence": "2.1"}]})
    judge = LLMJudge(fake, prompts_dir=_override(tmp_path / "p"))
    [verdict] = await judge.verify_claims(CLAIMS[:1], CONTEXTS)
    assert verdict.evidence == "The refund window is 30 days."
    request = fake.requests[0]
    assert "verdicts" in json.dumps(request.json_schema) and "sentence" in json.dumps(
        request.json_schema
    )
    assert "[2]\n2.1 The refund window is 30 days." in request.messages[-1].content


async def test_a_prompt_of_your_own_may_ask_for_the_compact_reply(tmp_path: Path) -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "C", 3, "30"]]})
    folder = _override(tmp_path / "p", 'reply_format = "compact"\n')
    [verdict] = await LLMJudge(fake, prompts_dir=folder).verify_claims(CLAIMS[:1], CONTEXTS)
    assert verdict.evidence == "The refund window is 30 days."
    assert fake.requests[0].json_schema == {
        "type": "object",
        "properties": {"v": {"type": "array"}},
        "required": ["v"],
    }
    assert "\n\n3 The refund window is 30 days." in fake.requests[0].messages[-1].content


def test_an_unknown_reply_format_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    folder = _override(tmp_path / "p", 'reply_format = "tiny"\n')
    with pytest.raises(ConfigError, match=r"verify_claims.toml: reply_format must be one of"):
        LLMJudge(FakeChatModel(), prompts_dir=folder)


async def test_a_reask_names_the_problem_in_the_prompts_words_at_another_temperature() -> None:
    fake = FakeChatModel()
    fake.enqueue({"v": [[1, "X", 2]]}, {"v": [[1, "C", 3, "30"], [2, "F", 2]]})
    await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    first, reask = fake.requests
    problem = reask.messages[-1].content
    assert "unknown verdict 'X' in [1, 'X', 2]; a verdict is one of yes, partly" in problem
    assert "verdicts.0" not in problem and "Value error" not in problem
    # Not the same request again: at temperature 0 a small model repeats itself byte for byte.
    assert (first.temperature, reask.temperature) == (0.0, 0.3)


async def test_a_reply_missing_its_key_is_told_the_shape_and_a_bare_list_is_read() -> None:
    fake = FakeChatModel()
    fake.enqueue(ChatResponse(text='```json\n[[1, "C", 3, "30"], [2, "F", 2]]\n```\nDone!'))
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (first.verdict, second.verdict) == (Verdict.CONTRADICTED, Verdict.FULLY_SUPPORTED)
    fake.enqueue({"answer": "yes"}, {"v": [[1, "C", 3, "30"], [2, "F", 2]]})
    await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (
        'the reply must be one JSON object {"v": [...]}' in fake.requests[-1].messages[-1].content
    )


async def test_extraction_drops_what_is_no_claim_and_splits_an_answer_returned_whole() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {
            "claims": [
                "Sure! Here are the claims:",
                "1. The refund window is 60 days.",
                "Based on the given passages, it goes to the card, within 5 days.",
            ]
        }
    )
    claims = await LLMJudge(fake).extract_claims(RESPONSE)
    assert [c.text for c in claims] == [
        "The refund window is 60 days.",
        "it goes to the card, within 5 days.",
    ]
    assert [c.id for c in claims] == ["c1", "c2"]
    fake.enqueue({"claims": [RESPONSE]})
    whole = await LLMJudge(fake).extract_claims(RESPONSE)
    assert [c.text for c in whole] == [
        "The refund window is 60 days.",
        "It goes to the card, within 5 days.",
    ]


async def test_a_field_error_is_located_by_entry_not_by_internal_path() -> None:
    fake = FakeChatModel()
    fake.enqueue(
        {"verdicts": [{"claim": "first", "verdict": "F"}, {"claim": 2, "verdict": "F"}]},
        {"v": [[1, "C", 3, "30"], [2, "F", 2]]},
    )
    await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    problem = fake.requests[1].messages[-1].content
    assert "entry 1 of the v list:" in problem and "verdicts.0" not in problem


async def test_a_named_entry_without_its_verdict_costs_its_claim_not_the_sample() -> None:
    # The 1.5B model of issue 45 wrote a reason and left the verdict out of one entry.
    fake = FakeChatModel()
    fake.enqueue(
        {
            "verdicts": [
                {"claim": 1, "reason": "the sentences give 30 days"},
                {"claim": 2, "verdict": "SUPPORTED", "sentence": "1.2"},
            ]
        },
        {"verdicts": [{"claim": 1, "verdict": "CONTRADICTED", "sentence": "2.1"}]},
    )
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert second.verdict is Verdict.FULLY_SUPPORTED
    assert first.verdict is Verdict.CONTRADICTED
    asked_again = fake.requests[1].messages[-1].content
    assert "1. The refund window is 60 days." in asked_again
    assert "2. Refunds take" not in asked_again


async def test_a_reply_whose_entries_all_lack_the_verdict_is_told_the_field_by_name() -> None:
    fake = FakeChatModel()
    unjudged = {"verdicts": [{"claim": 1, "reason": "30 days"}, {"claim": 2, "reason": "yes"}]}
    fake.enqueue(unjudged, {"v": [[1, "C", 3, "30"], [2, "F", 2]]})
    await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    problem = fake.requests[1].messages[-1].content
    assert 'entry 1 of the v list has no "verdict"' in problem


async def test_one_row_or_one_verdict_not_wrapped_in_a_list_is_read() -> None:
    # What the 1.5B model of issue 45 replied for a single claim on llama-cpp-python's server.
    fake = FakeChatModel()
    fake.enqueue({"v": [1, "C", 3, "30"]}, {"claim": 1, "verdict": "C", "sentence": 3})
    for _ in range(2):
        [verdict] = await LLMJudge(fake).verify_claims(CLAIMS[:1], CONTEXTS)
        assert (verdict.verdict, verdict.evidence) == (
            Verdict.CONTRADICTED,
            "The refund window is 30 days.",
        )
    assert len(fake.requests) == 2  # neither re-asked


async def test_rows_written_one_after_another_are_split_and_extra_cells_left_out() -> None:
    # The real 1.5B model's reply (benchmarks/real_model): three rows run together, the third
    # with "null" for its claim, and a row with a fifth cell.
    fake = FakeChatModel()
    fake.enqueue(
        {"v": ["1", "C", None, "30 days, not 60", "2", "F", "2", "null", "C", None, "r"]},
        {"v": [[1, "C", 3, "30", "The refund window is 30 days."]]},
    )
    first, second = await LLMJudge(fake).verify_claims(CLAIMS, CONTEXTS)
    assert (first.verdict, first.quote_found) == (Verdict.CONTRADICTED, False)  # flagged
    assert (second.verdict, second.evidence) == (Verdict.FULLY_SUPPORTED, "Refunds take 5 days.")
    assert len(fake.requests) == 1
    [alone] = await LLMJudge(fake).verify_claims(CLAIMS[:1], CONTEXTS)
    assert (alone.verdict, alone.evidence) == (
        Verdict.CONTRADICTED,
        "The refund window is 30 days.",
    )
