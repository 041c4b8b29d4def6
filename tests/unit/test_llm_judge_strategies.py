"""LLMJudge's parts: each mode's strategy, picked by `Mode`, and the parts a replica or an
unpickled judge (Ray) gets of its own."""

import pickle
from typing import Any

import pytest

from vera import Verdict
from vera.judges import LLMJudge
from vera.judges._modes import MODES
from vera.providers import ChatRequest
from vera.testing import FakeChatModel

WHITEBOX = "which strategy object the judge dispatches each mode to (vera.judges._modes)"

RESPONSE = "The refund window is 60 days. Refunds go to the original card."
CONTEXTS = ["Refunds are issued to the original card.", "The refund window is 30 days."]
CLAIMS = [
    {"number": 1, "text": "The refund window is 60 days."},
    {"number": 2, "text": "Refunds go to the original card."},
]


def answer(request: ChatRequest) -> dict[str, Any]:
    """Every claim supported by context 1, whatever the prompt."""
    name = request.schema_name
    if name == "truths":
        return {"truths": [{"context": n, "text": t} for n, t in enumerate(CONTEXTS, start=1)]}
    if name == "claims" and request.prompt_version.startswith("single_call"):
        verdict = {"verdict": "FULLY_SUPPORTED", "context": 1, "quote": CONTEXTS[0]}
        return {"claims": [{**claim, **verdict} for claim in CLAIMS]}
    if name == "claims":
        return {"claims": CLAIMS}
    # Numbers past the claims a call asks (one, in per_claim mode) are dropped by the judge.
    verdict = {"verdict": "FULLY_SUPPORTED", "context": 1, "quote": CONTEXTS[0]}
    return {"verdicts": [{"claim": n, **verdict} for n in (1, 2)]}


def asked(fake: FakeChatModel) -> list[str]:
    return [r.prompt_version.split("/")[0] for r in fake.requests]


@pytest.mark.parametrize("mode", MODES)
async def test_each_mode_is_judged_by_its_own_strategy_with_the_prompts_it_declares(
    mode: str,
) -> None:
    fake = FakeChatModel(respond=answer)
    judge = LLMJudge(fake, mode=mode)  # type: ignore[arg-type]
    strategy = judge._strategy
    assert strategy.mode == mode
    others = {type(LLMJudge(fake, mode=m)._strategy) for m in MODES if m != mode}  # type: ignore[arg-type]
    assert type(strategy) not in others
    claims, verdicts = await judge.analyse(RESPONSE, CONTEXTS)
    assert claims
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED] * len(claims)
    assert set(asked(fake)) <= set(strategy.prompt_names)


async def test_a_replica_asks_its_own_model_and_remembers_nothing_of_the_original() -> None:
    first, second = FakeChatModel(respond=answer), FakeChatModel(respond=answer)
    judge = LLMJudge(first, mode="truths")
    await judge.analyse(RESPONSE, CONTEXTS)
    await judge.verify_matrix([], CONTEXTS)
    twin = judge.replica(second)
    await twin.analyse(RESPONSE, CONTEXTS)
    # The truths the original asked for are not the twin's: it asks for them itself.
    assert asked(second) == ["extract_claims", "extract_truths", "verify_claims"]
    assert len(first.requests) == 3
    await judge.analyse(RESPONSE, CONTEXTS)
    assert asked(first)[3:] == ["extract_claims", "verify_claims"]


async def test_an_unpickled_judge_asks_its_own_copy_of_the_model() -> None:
    fake = FakeChatModel(respond=answer)
    judge = LLMJudge(fake, mode="batched")
    copy = pickle.loads(pickle.dumps(judge))
    _, verdicts = await copy.analyse(RESPONSE, CONTEXTS)
    assert [v.verdict for v in verdicts] == [Verdict.FULLY_SUPPORTED] * 2
    assert fake.requests == []
    assert copy.prompt_versions == judge.prompt_versions
