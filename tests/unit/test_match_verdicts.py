import pytest

from vera import Claim, ClaimVerdict, JudgeResponseError
from vera.judges._base import match_verdicts

WHITEBOX = "the verdict matcher every judge's reply passes through"

CLAIMS = [Claim("c1", "a"), Claim("c2", "b"), Claim("c3", "c")]


def test_verdicts_are_returned_in_claim_order() -> None:
    verdicts = [ClaimVerdict("c3", "yes"), ClaimVerdict("c1", "no"), ClaimVerdict("c2", "idk")]
    assert [v.claim_id for v in match_verdicts(CLAIMS, verdicts)] == ["c1", "c2", "c3"]


@pytest.mark.parametrize(
    ("verdict_ids", "message"),
    [
        (["c1", "c2"], r"no verdict for claim ids \['c3'\]"),
        (["c1", "c2", "c3", "c4"], r"verdicts for unknown claim ids \['c4'\]"),
        (["c1", "c2", "c9"], "no verdict for claim ids"),
        (["c1", "c1", "c2", "c3"], "two verdicts for claim id 'c1'"),
    ],
)
def test_mismatched_ids_raise(verdict_ids: list[str], message: str) -> None:
    verdicts = [ClaimVerdict(cid, "SUPPORTED") for cid in verdict_ids]
    with pytest.raises(JudgeResponseError, match=message):
        match_verdicts(CLAIMS, verdicts)


def test_duplicate_claim_ids_raise() -> None:
    with pytest.raises(JudgeResponseError, match="duplicate ids"):
        match_verdicts([Claim("c1", "a"), Claim("c1", "b")], [ClaimVerdict("c1", "yes")])


def test_non_verdict_objects_raise() -> None:
    with pytest.raises(JudgeResponseError, match="ClaimVerdict objects"):
        match_verdicts(CLAIMS[:1], [{"claim_id": "c1", "verdict": "yes"}])  # type: ignore[list-item]
