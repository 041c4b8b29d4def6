"""Which sentences the offline judge treats as claims about the world."""

import pytest

from vera.judges import OfflineJudge
from vera.judges._offline import is_about_sources

WHITEBOX = "the offline judge's own parts"


@pytest.mark.parametrize(
    "sentence",
    [
        "The provided documents do not specify a non-solicitation period for employees.",
        "The retrieved abstract says nothing about training compute.",
        "There is no information about the liability cap.",
        "I don't know the answer to that.",
        "The sources disagree.",
        "The two sources reach opposite conclusions.",
        "The context doesn't mention any uptime guarantee.",
    ],
)
def test_statements_about_the_sources_are_not_claims(sentence: str) -> None:
    assert is_about_sources(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The documents say the fee is $50.",
        "The contract does not include a renewal fee.",
        "The supplier does not provide warranties.",
        "Okafor et al. report a drop from 18.2% to 11.5%.",
    ],
)
def test_statements_about_the_world_stay_claims(sentence: str) -> None:
    assert not is_about_sources(sentence)


async def test_an_abstaining_answer_has_no_claims_and_one_fact_keeps_its_own() -> None:
    judge = OfflineJudge()
    assert (
        await judge.extract_claims("The provided documents do not specify a notice period.") == []
    )
    claims = await judge.extract_claims(
        "The documents do not specify a notice period. The fee is 50 dollars."
    )
    assert [c.text for c in claims] == ["The fee is 50 dollars."]
