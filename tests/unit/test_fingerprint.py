"""A run's fingerprint: what must match for two runs' scores to be compared, said field by
field when it does not."""

from collections.abc import Sequence

from vera import Settings
from vera._plan import build_plan
from vera._run import run_fingerprint
from vera._types import MeasuredPlan, RegressionCheck, RunFingerprint, describe_differences
from vera.datasets._inmemory import InMemoryDataset
from vera.judges import create_judge
from vera.metrics import create_metric

WHITEBOX = "the engine's own parts"

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
    said = {
        "dataset": ["The test sets differ: this run sha256:"],
        "judge": ["The judges differ: this run offline; the compared run offline:learned"],
        "metrics": ["The metrics differ: only the compared run measured hallucination_rate"],
        # --threshold is also each metric's pass mark, so it changes the metrics' field too.
        "thresholds": [
            "The metric thresholds differ: faithfulness this run ≥ 0.5, the compared run ≥ 0.8 "
            "(a sample's pass or fail may differ by the threshold alone)",
            "The gates differ: this run --threshold none, gates {}; the compared run "
            "--threshold 0.8, gates {}",
        ],
    }
    for field, other in changed.items():
        assert other.digest != base.digest
        lines = base.differences(other)
        assert len(lines) == len(said[field]), lines
        assert all(line.startswith(start) for line, start in zip(lines, said[field], strict=True))
    assert base.differences(base) == []
    assert base.differences(None) == [  # a run stored before fingerprints
        "the compared run has no fingerprint (it was stored before fingerprints), so whether it "
        "measured the same dataset, judge, metrics, pipeline and thresholds is unknown"
    ]


def test_a_metrics_text_that_does_not_read_as_rules_is_compared_whole() -> None:
    odd = MeasuredPlan(judge="offline", metrics="a metric, written freely")
    rules = MeasuredPlan(judge="offline", metrics={"faithfulness": "≥ 0.5"})
    assert describe_differences(odd, rules) == [
        "The metrics differ: A a metric, written freely; B {'faithfulness': '≥ 0.5'}"
    ]
    assert describe_differences(odd, odd) == []
    # A part one side does not know (a run stored before fingerprints) is not compared.
    assert describe_differences(rules, MeasuredPlan("offline", rules.metrics, "sha256:x")) == []


def test_the_regression_check_says_what_it_compared_with() -> None:
    nothing = RegressionCheck(compared_with=None, fingerprint="abc", history="runs.sqlite")
    assert "nothing was compared" in nothing.describe() and "runs.sqlite" in nothing.describe()
    same = RegressionCheck(compared_with="run-1", fingerprint="abc")
    assert same.describe() == "Regression: compared with run run-1 (fingerprint abc, the same plan)"
    judges = "The judges differ: this run a; the compared run b"
    other = RegressionCheck(compared_with="run-1", fingerprint="abc", differences=(judges,))
    assert f"a different plan: {judges}" in other.describe()
