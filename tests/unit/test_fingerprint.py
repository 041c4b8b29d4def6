"""A run's fingerprint: what must match for two runs' scores to be compared, said field by
field when it does not."""

from collections.abc import Sequence

from vera.datasets import InMemoryDataset
from vera.judges import create_judge
from vera.metrics import create_metric
from vera.plan import Settings, build_plan
from vera.run import run_fingerprint
from vera.types import RegressionCheck, RunFingerprint

ROWS = [
    {"id": "a", "query": "How long is the refund window?", "response": "30 days.",
     "contexts": ["The refund window is 30 days."], "reference": "30 days"},
    {"id": "b", "query": "Who signs?", "response": "The buyer.", "contexts": ["The buyer signs."]},
]  # fmt: skip


def _fingerprint(
    rows: Sequence[dict[str, object]] = ROWS,
    *,
    judge: str = "offline",
    metrics: Sequence[str] = ("faithfulness",),
    threshold: float | None = None,
) -> RunFingerprint:
    settings = Settings(judge=judge)
    plan = build_plan(metrics=list(metrics), threshold=threshold, settings=settings)
    built = [create_metric(m.name, **m.options) for m in plan.metrics]
    return run_fingerprint(
        plan, InMemoryDataset(list(rows)), create_judge(judge, settings), built, None
    )


def test_new_answers_to_the_same_questions_keep_the_fingerprint() -> None:
    answered_again = [{**row, "response": "Something else.", "contexts": ["x"]} for row in ROWS]
    assert _fingerprint(answered_again).digest == _fingerprint().digest


def test_what_was_asked_judged_scored_or_gated_changes_it_and_is_named() -> None:
    base = _fingerprint()
    other_question = [{**ROWS[0], "query": "How long is the return window?"}, ROWS[1]]
    changed = {
        "dataset": _fingerprint(other_question),
        "judge": _fingerprint(judge="offline:learned"),
        "metrics": _fingerprint(metrics=("faithfulness", "hallucination_rate")),
        "thresholds": _fingerprint(threshold=0.8),
    }
    for field, other in changed.items():
        assert other.digest != base.digest
        lines = base.differences(other)
        # --threshold is also each metric's pass mark, so it changes the metrics' field too.
        assert len(lines) == (2 if field == "thresholds" else 1), lines
        assert any(line.startswith(f"{field}: ") and " (this run) vs " in line for line in lines)
    assert base.differences(base) == []
    assert len(base.differences(None)) == 5  # a run stored before fingerprints


def test_the_regression_check_says_what_it_compared_with() -> None:
    nothing = RegressionCheck(compared_with=None, fingerprint="abc", history="runs.sqlite")
    assert "nothing was compared" in nothing.describe() and "runs.sqlite" in nothing.describe()
    same = RegressionCheck(compared_with="run-1", fingerprint="abc")
    assert same.describe() == "Regression: compared with run run-1 (fingerprint abc, the same plan)"
    other = RegressionCheck(
        compared_with="run-1", fingerprint="abc", differences=("judge: a (this run) vs b",)
    )
    assert "a different plan: judge: a (this run) vs b" in other.describe()
