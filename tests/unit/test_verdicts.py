import pytest
from hypothesis import given
from hypothesis import strategies as st

from vera import ClaimVerdict, JudgeResponseError, Verdict

SPELLINGS = {
    # VERA's own names
    "FULLY_SUPPORTED": Verdict.FULLY_SUPPORTED,
    "PARTIALLY_SUPPORTED": Verdict.PARTIALLY_SUPPORTED,
    "NO_EVIDENCE": Verdict.NO_EVIDENCE,
    "CONTRADICTED": Verdict.CONTRADICTED,
    # seed 000 (RagaliQ)
    "SUPPORTED": Verdict.FULLY_SUPPORTED,
    "NOT_ENOUGH_INFO": Verdict.NO_EVIDENCE,
    # seed 003 (eval-ruby)
    "NOT SUPPORTED": Verdict.NO_EVIDENCE,
    # seed 002 (Axion)
    "CONTRADICTORY": Verdict.CONTRADICTED,
    # seed 004 (DeepEval-style)
    "yes": Verdict.FULLY_SUPPORTED,
    "no": Verdict.CONTRADICTED,
    "idk": Verdict.NO_EVIDENCE,
}


@pytest.mark.parametrize(("spelling", "expected"), SPELLINGS.items())
def test_every_seed_spelling_parses(spelling: str, expected: Verdict) -> None:
    assert Verdict.parse(spelling) is expected


@given(
    spelling=st.sampled_from(sorted(SPELLINGS)),
    casing=st.lists(st.booleans(), min_size=30, max_size=30),
    pad=st.sampled_from(["", " ", "\t", "\n "]),
)
def test_case_and_padding_do_not_matter(spelling: str, casing: list[bool], pad: str) -> None:
    mixed = "".join(c.upper() if up else c.lower() for c, up in zip(spelling, casing, strict=False))
    assert Verdict.parse(pad + mixed + pad) is SPELLINGS[spelling]


@pytest.mark.parametrize("garbage", ["maybe", "", "SUPPORTEDD", "true-ish", "1"])
def test_unknown_verdicts_raise(garbage: str) -> None:
    with pytest.raises(JudgeResponseError, match="unknown verdict"):
        Verdict.parse(garbage)


def test_non_string_verdict_raises() -> None:
    with pytest.raises(JudgeResponseError):
        Verdict.parse(0.7)


def test_claim_verdict_parses_spellings_and_rejects_garbage() -> None:
    assert ClaimVerdict("c1", "Contradictory").verdict is Verdict.CONTRADICTED
    with pytest.raises(JudgeResponseError):
        ClaimVerdict("c1", "probably")
