"""The answer verdict: one rule for answers and conversation turns alike. Any claim with no
evidence or contradicted makes an answer unfaithful, whatever the mean of its claims' weights;
PARTIALLY_SUPPORTED counts by the judge's declared rule. It is what the badges, failing
lists, JUnit, the gate and the exit code read first."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pytest
from rich.console import Console

import vera
from vera import Report, Verdict
from vera._results import Outcome, answer_verdict, claims_verdict, sample_outcome
from vera._text import split_units
from vera._types import AnswerStatus, PartialRule
from vera.judges import OfflineJudge
from vera.render import render_html
from vera.render._console import print_summary
from vera.render._html import read_samples
from vera.render._junit import render_junit
from vera.render._markdown import render_markdown
from vera.testing import FakeJudge

WHITEBOX = "the report builder, on hand-made results; the text utilities"

F = Verdict.FULLY_SUPPORTED
P = Verdict.PARTIALLY_SUPPORTED
N = Verdict.NO_EVIDENCE
C = Verdict.CONTRADICTED

DESK = "Support is available by email at help@example.com, Monday to Friday, 9am to 5pm."
EMAIL = "You can email support at help@example.com, Monday to Friday, 9am to 5pm."
HOTLINE = "There is also a 24/7 phone hotline."
DESK_ROWS = [
    {"id": "desk-hotline", "query": "How can I reach support?", "contexts": [DESK]},
    {"id": "desk-email", "query": "How can I reach support?", "contexts": [DESK]},
]
DESK_ROWS[0]["response"] = f"{EMAIL} {HOTLINE}"
DESK_ROWS[1]["response"] = EMAIL
OFFLINE_PARTIAL_RULE = OfflineJudge.partial_rule
"""The offline judges' declared rule (a constant the project may flip)."""
RAGTRUTH = Path(__file__).parents[2] / "benchmarks" / "data" / "ragtruth_dev.jsonl"


def desk_report(**options: object) -> Report:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vera.GateWarning)
        return vera.evaluate(DESK_ROWS, **options)  # type: ignore[arg-type]


# The rule itself.
def test_one_invented_claim_beside_a_supported_one_is_unfaithful_at_a_mean_of_half() -> None:
    verdict = claims_verdict([F, N], ["Email us.", "There is a 24/7 hotline"], OFFLINE_PARTIAL_RULE)
    assert verdict.status is AnswerStatus.UNFAITHFUL
    assert verdict.passed is False
    assert verdict.reason == "1 of 2 claims has no evidence: 'There is a 24/7 hotline'"
    assert (verdict.claims, verdict.unsupported) == (2, 1)


def test_a_contradiction_fails_whatever_the_mean_and_the_reason_names_it_first() -> None:
    texts = ["a", "b", "c", "d", "e"]
    verdict = claims_verdict([F, F, F, N, C], texts, PartialRule.SUPPORTED)
    assert verdict.status is AnswerStatus.UNFAITHFUL
    assert verdict.reason == (
        "1 of 5 claims is contradicted: 'e'; 1 of 5 claims has no evidence: 'd'"
    )


@pytest.mark.parametrize(
    ("rule", "status"),
    [
        (PartialRule.SUPPORTED, AnswerStatus.FAITHFUL),
        (PartialRule.UNSUPPORTED, AnswerStatus.UNFAITHFUL),
    ],
)
def test_partial_support_counts_by_the_judges_rule(rule: PartialRule, status: AnswerStatus) -> None:
    verdict = claims_verdict([F, P], ["a", "b"], rule)
    assert verdict.status is status
    assert verdict.partial_rule is rule
    assert (
        "partly" in verdict.reason
        if status is AnswerStatus.UNFAITHFUL
        else "1 partially" in verdict.reason
    )


def test_no_claims_passes_and_is_said() -> None:
    verdict = claims_verdict([], [], PartialRule.UNSUPPORTED)
    assert verdict.status is AnswerStatus.NO_CLAIMS
    assert verdict.passed is True


def test_each_judge_declares_its_partial_rule() -> None:
    assert OfflineJudge().partial_rule is OFFLINE_PARTIAL_RULE
    assert OfflineJudge(learned=True).partial_rule is OFFLINE_PARTIAL_RULE
    assert FakeJudge({}).partial_rule is PartialRule.UNSUPPORTED
    cascade = vera.judges.CascadeJudge(OfflineJudge(learned=True), FakeJudge({}))
    assert cascade.partial_rule is OFFLINE_PARTIAL_RULE


# RAGTruth's human labels as claim verdicts, through the library's verdict.
def _sentence_verdicts(row: dict[str, object]) -> tuple[list[Verdict], list[str]]:
    """One claim per sentence of the response; a sentence overlapping a hallucinated span
    takes that span's kind (a conflict is CONTRADICTED, baseless information NO_EVIDENCE)."""
    response = str(row["response"])
    spans = row["hallucinated_spans"]
    assert isinstance(spans, list)
    verdicts, texts = [], []
    for unit in split_units(response):
        hits = [s for s in spans if s["start"] < unit.end and unit.start < s["end"]]
        kinds = {C if "Conflict" in s["label_type"] else N for s in hits}
        verdicts.append(C if C in kinds else N if kinds else F)
        texts.append(response[unit.start : unit.end])
    return verdicts, texts


@pytest.mark.slow
def test_ragtruth_dev_human_labels_as_claims_give_balanced_accuracy_of_at_least_095() -> None:
    from vera import Claim, ClaimVerdict, Sample
    from vera.metrics import ClaimAnalysis, create_metric

    rows = [json.loads(line) for line in RAGTRUTH.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1282
    faithfulness = create_metric("faithfulness")
    # label -> [right, total], by the answer verdict and by the mean of weights at 0.5.
    hits = {0: [0, 0], 1: [0, 0]}
    by_mean = {0: [0, 0], 1: [0, 0]}
    for row in rows:
        verdicts, texts = _sentence_verdicts(row)
        verdict = claims_verdict(verdicts, texts, PartialRule.UNSUPPORTED)
        said_unfaithful = verdict.status is AnswerStatus.UNFAITHFUL
        hits[row["label"]][0] += said_unfaithful == bool(row["label"])
        hits[row["label"]][1] += 1
        analysis = ClaimAnalysis(
            claims=tuple(Claim(f"c{i}", t) for i, t in enumerate(texts)),
            verdicts=tuple(ClaimVerdict(f"c{i}", v) for i, v in enumerate(verdicts)),
        )
        sample = Sample(id=row["id"], query="", contexts=row["contexts"], response=row["response"])
        failed = faithfulness.score(sample, analysis).passed is False
        by_mean[row["label"]][0] += failed == bool(row["label"])
        by_mean[row["label"]][1] += 1
    balanced = (hits[0][0] / hits[0][1] + hits[1][0] / hits[1][1]) / 2
    assert balanced >= 0.95, balanced
    # The defect: the mean at 0.5 passes most hallucinated answers, whose one invented
    # sentence sits among supported ones.
    mean_balanced = (by_mean[0][0] / by_mean[0][1] + by_mean[1][0] / by_mean[1][1]) / 2
    assert mean_balanced < 0.6, mean_balanced


# What a user sees first: the support-desk row that passed at 0.5.
def test_the_hotline_answer_at_half_fails_as_a_sample_and_the_other_passes() -> None:
    report = desk_report()
    hotline, email = report.sample("desk-hotline"), report.sample("desk-email")
    assert hotline.scores["faithfulness"] == 0.5
    assert hotline.results["faithfulness"].passed is True  # the mean alone still clears 0.5
    outcome = sample_outcome(hotline)
    assert outcome.outcome is Outcome.FAIL
    assert outcome.label == "fail: unfaithful answer"
    assert "1 of 2 claims has no evidence" in outcome.why
    assert sample_outcome(email).outcome is Outcome.PASS
    assert report.answers is not None
    assert (report.answers.faithful, report.answers.unfaithful) == (1, 1)
    assert report.answers.partial_rule is OFFLINE_PARTIAL_RULE
    assert report.to_dict()["answers"]["partial_rule"] == OFFLINE_PARTIAL_RULE.value
    assert report.answers.headline().startswith(
        "1 of 2 answers has an unsupported or contradicted claim"
    )


def test_the_console_lists_the_hotline_answer_as_failing_with_the_headline() -> None:
    report = desk_report()
    console = Console(width=200, record=True, file=io.StringIO(), color_system=None)
    print_summary(report, console, console)
    text = console.export_text()
    assert "Answers: 1 of 2 answers has an unsupported or contradicted claim" in text
    assert "Failing samples, worst first (1 failing)" in text
    assert f"desk-hotline · unfaithful answer: 1 of 2 claims has no evidence: '{HOTLINE}'" in text
    assert "desk-email" not in text


def test_markdown_and_junit_name_the_unfaithful_answer() -> None:
    report = desk_report()
    markdown = render_markdown(report)
    assert "**Answers: 1 of 2 answers has an unsupported" in markdown
    assert "`desk-hotline` unfaithful answer: 1 of 2 claims has no evidence" in markdown
    junit = render_junit(report)
    assert '<testsuite name="vera.answer_verdict" tests="2" failures="1"' in junit
    assert 'message="unfaithful answer: 1 of 2 claims has no evidence' in junit


def test_the_html_badge_fails_the_answer_and_warns_on_the_passing_metric() -> None:
    report = desk_report()
    html = render_html(report)
    assert "1 of 2 answers has an unsupported or contradicted claim" in html
    data = read_samples(html)
    (row,) = [i for i, r in enumerate(data["rows"]) if r[0] == "desk-hotline"]
    assert data["outcomes"][data["rows"][row][7]][0] == Outcome.FAIL.value
    (detail,) = [d for d in data["details"] if d["row"] == row]
    # The page's script shows a metric pass on a sample with "k" unsupported claims in amber;
    # NO_EVIDENCE counts, not only contradictions.
    assert detail["k"] == 1
    assert detail["m"][0][2] is True


# Answers and turns: one rule.
@pytest.mark.slow
def test_a_turn_and_an_answer_with_the_same_claims_get_the_same_verdict() -> None:
    script = {"It costs 20 dollars a month.": [("It costs 20", F), ("a month", P)]}
    answer = {
        "query": "Price?",
        "contexts": ["Pro costs 20."],
        "response": "It costs 20 dollars a month.",
    }
    conversation = {
        "messages": [
            {"role": "user", "content": "Price?"},
            {"role": "assistant", "content": answer["response"], "contexts": answer["contexts"]},
        ]
    }
    for rule, faithful in ((PartialRule.UNSUPPORTED, False), (PartialRule.SUPPORTED, True)):
        judge = FakeJudge(script)
        judge.partial_rule = rule
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", vera.GateWarning)
            alone = vera.evaluate([answer], judge=judge)
            turns = vera.evaluate([conversation], judge=judge)
        assert alone.samples[0].scores["faithfulness"] == 0.75
        assert alone.samples[0].verdict is not None
        assert alone.samples[0].verdict.passed is faithful
        (turn,) = turns.samples
        assert turn.verdict is not None and turn.verdict.passed is faithful
        assert turns.conversations is not None
        assert turns.conversations.faithful_turns == (1.0 if faithful else 0.0)


# Probability metrics.
def test_a_contradicted_claim_never_passes_through_faithfulness_probability() -> None:
    from vera import Claim, ClaimVerdict, Sample
    from vera.metrics import ClaimAnalysis, create_metric

    metric = create_metric("faithfulness_probability")
    sample = Sample(id="s", query="q", contexts=["c"], response="r")
    for verdict, passed in ((C, False), (N, False), (F, True)):
        analysis = ClaimAnalysis(
            claims=(Claim("c1", "r"),),
            verdicts=(ClaimVerdict("c1", verdict, entailment=0.5),),
        )
        result = metric.score(sample, analysis)
        assert result.score == 0.5
        assert result.passed is passed, verdict


# The gate.
@pytest.mark.slow
def test_vera_eval_exits_1_on_an_unfaithful_answer_unless_a_tolerance_allows_it(
    tmp_path: Path,
) -> None:
    from tests.support.cli import run_vera

    data = tmp_path / "desk.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in DESK_ROWS), encoding="utf-8")
    failed = run_vera(tmp_path, "eval", "-d", str(data), "--no-history")
    assert failed.returncode == 1, failed.stderr
    assert "unfaithful answers: 1 of 2 answers has" in failed.stderr
    assert "--max-unfaithful 0 allows 0" in failed.stderr
    for tolerance in ("1", "50%"):
        allowed = run_vera(
            tmp_path, "eval", "-d", str(data), "--no-history", "--max-unfaithful", tolerance
        )
        assert allowed.returncode == 0, allowed.stderr
    short = run_vera(tmp_path, "eval", "-d", str(data), "--no-history", "--max-unfaithful", "49%")
    assert short.returncode == 1


def test_the_gate_is_the_same_in_python() -> None:
    failed = vera.run_evaluation(DESK_ROWS, history=False)
    assert failed.exit_code == 1
    assert failed.gate_failures[0].startswith("unfaithful answers: 1 of 2")
    allowed = vera.run_evaluation(DESK_ROWS, history=False, max_unfaithful="50%")
    assert allowed.exit_code == 0
    assert allowed.plan.settings.max_unfaithful == "50%"
    with pytest.warns(vera.GateWarning, match="unfaithful answers"):
        vera.evaluate(DESK_ROWS, history=False)


def test_a_run_without_claims_has_no_answer_verdict_nor_its_gate() -> None:
    rows = [{**row, "reference": row["response"]} for row in DESK_ROWS]
    result = vera.run_evaluation(rows, ["answer_relevance"], history=False)
    assert result.report.answers is None
    assert all(r.verdict is None for r in result.report.samples)
    assert result.exit_code == 0


def test_an_errored_sample_has_an_error_verdict() -> None:
    from vera import SampleResult, SampleStatus

    errored = SampleResult(id="x", status=SampleStatus.ERROR, error="boom")
    verdict = answer_verdict(errored, PartialRule.UNSUPPORTED)
    assert verdict is not None and verdict.status is AnswerStatus.ERROR
    assert verdict.passed is None and verdict.reason == "boom"
