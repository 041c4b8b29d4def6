"""`verdict_changes`: the samples of two runs whose badge or claims' verdicts changed, paired
by id (samples) and by normalised text (claims), worst change first."""

from __future__ import annotations

from vera import ClaimRecord, SampleResult, SampleStatus, Verdict
from vera._results import ClaimChange, Outcome, ScoreChange, verdict_changes
from vera._results import _comparison as comparison
from vera.metrics import MetricResult, MetricStatus

WHITEBOX = "the outcome order that sorts changed samples"

F = Verdict.FULLY_SUPPORTED
P = Verdict.PARTIALLY_SUPPORTED
N = Verdict.NO_EVIDENCE
C = Verdict.CONTRADICTED


def claim(text: str, verdict: Verdict, index: int = 0) -> ClaimRecord:
    return ClaimRecord(
        id=f"c{index}",
        text=text,
        span=None,
        verdict=verdict,
        evidence="",
        context_index=None,
        reason="",
    )


def result(
    sample_id: str,
    claims: list[tuple[str, Verdict]],
    *,
    passed: bool | None = True,
    status: SampleStatus = SampleStatus.SCORED,
) -> SampleResult:
    records = tuple(claim(text, verdict, i) for i, (text, verdict) in enumerate(claims))
    gate = MetricResult(
        name="faithfulness",
        score=1.0 if passed else 0.0,
        passed=passed,
        status=MetricStatus.OK if passed is not None else MetricStatus.NOT_APPLICABLE,
        reason="",
        threshold=0.5,
    )
    return SampleResult(
        id=sample_id,
        status=status,
        results={"faithfulness": gate} if status is SampleStatus.SCORED else {},
        claims=records,
    )


def test_unchanged_samples_are_left_out_and_claims_pair_by_normalised_text() -> None:
    before = [
        result("same", [("Paris is in France.", F)]),
        result("moved", [("Paris is in France.", F), ("It has 2 million people.", P)]),
    ]
    after = [
        result("same", [("paris is in  France", F)]),  # case, spacing, final stop: one claim
        result("moved", [("Paris is in France", F), ("It has 2 million people", C)]),
    ]

    (change,) = verdict_changes(before, after)

    assert change.id == "moved"
    assert change.claims == (ClaimChange("It has 2 million people", P, C),)
    assert change.unchanged_claims == 1
    assert change.claims[0].kind == "changed"
    assert change.claim_shift == -2 and change.direction == "worse"


def test_claims_only_one_run_made_are_added_or_removed() -> None:
    before = [result("s", [("Old claim.", F), ("Kept claim.", F)])]
    after = [result("s", [("Kept claim.", F), ("New claim.", N)])]

    (change,) = verdict_changes(before, after)

    assert [(c.text, c.before, c.after, c.kind) for c in change.claims] == [
        ("New claim.", None, N, "added"),
        ("Old claim.", F, None, "removed"),
    ]
    # Neither has a verdict on both sides, so neither moves the sample's claims; the badge
    # moves, from a pass to a pass with an unsupported claim (NO_EVIDENCE warns too).
    assert change.claim_shift == 0
    assert change.after.outcome is Outcome.PASS_WITH_UNSUPPORTED
    assert change.direction == "worse"


def test_a_claim_stated_twice_pairs_twice_in_order() -> None:
    before = [result("s", [("Twice.", F), ("Twice.", P)])]
    after = [result("s", [("Twice.", F), ("Twice.", F), ("Twice.", C)])]

    (change,) = verdict_changes(before, after)

    assert [(c.before, c.after) for c in change.claims] == [(P, F), (None, C)]
    assert change.unchanged_claims == 1


def test_outcomes_before_and_after_come_from_the_report_badge() -> None:
    before = [result("s", [("A claim.", F)], passed=True)]
    after = [result("s", [("A claim.", C)], passed=False)]

    (change,) = verdict_changes(before, after)

    assert change.before.outcome is Outcome.PASS and change.before.label == "pass"
    assert change.after.outcome is Outcome.FAIL and change.after.label == "fail: faithfulness"
    assert change.shift < 0 and change.direction == "worse"


def test_a_badge_changed_by_the_threshold_alone_is_not_a_change() -> None:
    # Before: the same verdicts and score under a stricter threshold counted as "worse".
    before = [result("s", [("A claim.", P)], passed=True)]
    stricter = result("s", [("A claim.", P)], passed=True)
    gate = stricter.results["faithfulness"].model_copy(update={"passed": False, "threshold": 1.1})
    after = [stricter.model_copy(update={"results": {"faithfulness": gate}})]
    assert before[0].scores == after[0].scores

    assert verdict_changes(before, after) == []


def test_a_changed_score_alone_is_a_change() -> None:
    before = [result("s", [("A claim.", P)], passed=True)]
    moved = result("s", [("A claim.", P)], passed=True)
    gate = moved.results["faithfulness"].model_copy(update={"score": 0.75})
    after = [moved.model_copy(update={"results": {"faithfulness": gate}})]

    (change,) = verdict_changes(before, after)

    assert change.claims == () and change.unchanged_claims == 1
    assert change.scores == (ScoreChange("faithfulness", 1.0, 0.75),)
    assert change.direction == "changed"


def test_worst_change_first_pass_to_fail_leads_and_improvements_come_last() -> None:
    before = [
        result("better", [("x", C)], passed=False),
        result("claims-worse", [("x", F)], passed=False),
        result("to-error", [("x", F)], passed=True),
        result("pass-to-fail", [("x", F)], passed=True),
        result("warn-to-fail", [("x", F), ("y", C)], passed=True),
        result("claims-better", [("x", N)], passed=True),
    ]
    after = [
        result("better", [("x", F)], passed=True),
        result("claims-worse", [("x", N)], passed=False),
        result("to-error", [], status=SampleStatus.ERROR),
        result("pass-to-fail", [("x", C)], passed=False),
        result("warn-to-fail", [("x", C), ("y", C)], passed=False),
        result("claims-better", [("x", F)], passed=True),
    ]

    changes = verdict_changes(before, after)

    assert [c.id for c in changes] == [
        "pass-to-fail",
        "warn-to-fail",
        "to-error",
        "claims-worse",
        "claims-better",
        "better",
    ]
    assert [c.direction for c in changes] == ["worse"] * 4 + ["better"] * 2
    assert changes[2].after.outcome is Outcome.NOT_SCORED
    assert changes[1].before.outcome is Outcome.PASS_WITH_UNSUPPORTED


def test_samples_in_one_run_only_do_not_pair() -> None:
    before = [result("gone", [("x", F)]), result("both", [("x", F)])]
    after = [result("new", [("x", C)], passed=False), result("both", [("x", F)])]

    assert verdict_changes(before, after) == []


def test_every_outcome_is_ranked() -> None:
    # The ranking is keyed by the outcomes' values; a new outcome must be given a place.
    assert set(comparison._OUTCOME_GOODNESS) == {outcome.value for outcome in Outcome}
