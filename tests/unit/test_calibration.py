"""Calibration against human labels: PPI++ intervals that cover the truth, agreement figures,
the recommended threshold, and the report block from labelled samples."""

from __future__ import annotations

import io
import json
import random
import statistics
from pathlib import Path

import pytest
from rich.console import Console

import vera
from vera import DatasetRowError, Sample
from vera._stats import CalibrationTally, ValueCounts, corrected_mean, wilson_interval
from vera.render import render_html
from vera.render._calibration import calibration_lines
from vera.render._console import print_summary
from vera.render._markdown import render_markdown

WHITEBOX = "the statistics formulas"

TRUE_SHARE = 0.3


def _biased_judge(rng: random.Random, unfaithful: bool) -> float:
    """A judge that misses a fifth of the unfaithful and wrongly flags a tenth of the
    faithful: its own share is biased (0.3·0.8 + 0.7·0.1 = 0.31, and it varies by draw)."""
    if unfaithful:
        return float(rng.random() < 0.8)
    return float(rng.random() < 0.1)


def _trial(rng: random.Random, labelled: int, unlabelled: int) -> tuple[float, float, float]:
    truth = [rng.random() < TRUE_SHARE for _ in range(labelled)]
    predicted = [_biased_judge(rng, y) for y in truth]
    others = ValueCounts(_biased_judge(rng, rng.random() < TRUE_SHARE) for _ in range(unlabelled))
    found = corrected_mean([float(y) for y in truth], predicted, others)
    assert found is not None
    covered = float(found.ci_low <= TRUE_SHARE <= found.ci_high)
    return (
        covered,
        found.ci_high - found.ci_low,
        found.labels_only_ci_high - found.labels_only_ci_low,
    )


@pytest.mark.slow
def test_the_95_interval_covers_the_truth_in_at_least_93_percent_of_1000_trials() -> None:
    rng = random.Random(2026)
    trials = [_trial(rng, labelled=150, unlabelled=2000) for _ in range(1000)]
    coverage = statistics.fmean(t[0] for t in trials)
    assert coverage >= 0.93, coverage
    # A judge that predicts the labels well narrows the interval below the labels-only one.
    assert statistics.fmean(t[1] for t in trials) < 0.85 * statistics.fmean(t[2] for t in trials)


def test_a_useless_judge_falls_back_to_the_labels_alone() -> None:
    rng = random.Random(5)
    truth = [float(rng.random() < 0.4) for _ in range(300)]
    noise = [float(rng.random() < 0.5) for _ in range(300)]
    others = ValueCounts(float(rng.random() < 0.5) for _ in range(3000))
    found = corrected_mean(truth, noise, others)
    assert found is not None
    assert found.power_tuning < 0.2  # λ near 0: the judge's prediction carries no weight
    width = found.ci_high - found.ci_low
    assert width <= (found.labels_only_ci_high - found.labels_only_ci_low) * 1.05


def test_without_unlabelled_samples_the_estimate_is_the_labels() -> None:
    found = corrected_mean([1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0], ValueCounts())
    assert found is not None
    assert found.power_tuning == 0.0
    assert found.estimate == found.labels_only_estimate == 0.5
    assert found.judge_only_estimate == 0.75
    assert corrected_mean([], [], ValueCounts()) is None


def test_the_tally_gives_agreement_and_a_threshold_that_separates_the_labels() -> None:
    tally = CalibrationTally()
    # Faithful responses score 0.9+, unfaithful ones 0.6 or less; the judge's own threshold
    # (0.5) lets the 0.6 one through.
    for score, passed, faithful in [
        (1.0, True, True), (0.95, True, True), (0.9, True, True),
        (0.6, True, False), (0.4, False, False), (0.2, False, False),
    ]:  # fmt: skip
        tally.add(faithful, score, passed)
    tally.add(None, 0.3, False)
    tally.add(True, None, None)  # labelled but errored
    found = tally.calibration()
    assert found is not None
    assert (found.labelled, found.labelled_unscored, found.unlabelled) == (6, 1, 1)
    agreement = found.agreement
    assert (agreement["tp"], agreement["fp"], agreement["fn"], agreement["tn"]) == (2, 0, 1, 3)
    assert agreement["balanced_accuracy"] == pytest.approx((2 / 3 + 1) / 2)
    assert found.auroc == 1.0  # the score ranks every unfaithful below every faithful
    threshold = found.recommended_threshold
    assert threshold is not None
    assert threshold.threshold == pytest.approx(0.75)  # between 0.6 and 0.9
    assert threshold.balanced_accuracy == 1.0
    assert CalibrationTally().calibration() is None


def test_a_labelled_run_reports_calibration() -> None:
    samples = [
        Sample(
            id="copied",
            response="The Eiffel Tower is in Paris.",
            contexts=("The Eiffel Tower is in Paris, France.",),
            human_faithful=True,
        ),
        Sample(
            id="invented",
            response="The Eiffel Tower is in Rome and was built in 1999.",
            contexts=("The Eiffel Tower is in Paris, France. It was built in 1889.",),
            human_faithful=False,
        ),
        Sample(
            id="unlabelled",
            response="The Eiffel Tower is in Paris.",
            contexts=("The Eiffel Tower is in Paris, France.",),
        ),
    ]
    report = vera.evaluate(samples, metrics=["faithfulness"])
    calibration = report.calibration
    assert calibration is not None
    assert (calibration.labelled, calibration.unlabelled) == (2, 1)
    assert calibration.agreement["accuracy"] == 1.0
    assert report.sample("copied").human_faithful is True
    assert calibration.unfaithful_share is not None
    assert calibration.unfaithful_share.labels_only_estimate == 0.5
    assert vera.evaluate(samples[2:], metrics=["faithfulness"]).calibration is None


def test_the_terminal_markdown_and_html_show_calibration() -> None:
    samples = [
        Sample(id=f"s{i}", response="Paris is in France.", contexts=(context,), human_faithful=ok)
        for i, (context, ok) in enumerate(
            [("Paris is in France.", True), ("Rome is in Italy.", False)] * 3
        )
    ]
    report = vera.evaluate(samples, metrics=["faithfulness"])
    out = Console(file=io.StringIO(), width=200)
    print_summary(report, out, Console(file=io.StringIO()))
    terminal = out.file.getvalue()  # type: ignore[attr-defined]
    assert "Calibration against 6 human labels" in terminal
    assert "Unfaithful share: judge alone 0.500 → corrected 0.500" in terminal
    markdown = render_markdown(report)
    assert "**Calibration against 6 human labels (faithfulness; 0 unlabelled samples)**" in markdown
    assert "- Recommended threshold:" in markdown
    page = render_html(report)
    assert '<section id="calibration"' in page and "Cohen&#39;s kappa" in page


def test_labels_without_the_faithfulness_metric_say_what_to_run() -> None:
    samples = [Sample(id="a", response="x", contexts=("x",), human_faithful=True)]
    report = vera.evaluate(samples, metrics=["answer_relevance"])
    assert report.calibration is not None and report.calibration.labelled_unscored == 1
    assert "--metrics faithfulness" in render_markdown(report)


def test_claim_verdicts_a_person_gave_are_compared_with_the_judges(tmp_path: Path) -> None:
    rows = [
        {
            "id": "a",
            "response": "The Eiffel Tower is in Paris. It was built in 1999.",
            "contexts": ["The Eiffel Tower is in Paris. It was built in 1889."],
            "human_faithful": False,
            "human_claims": [
                {"text": "the Eiffel Tower is in  Paris", "verdict": "fully supported"},
                {"text": "It was built in 1999.", "verdict": "NO_EVIDENCE"},
                {"text": "A claim the judge never made.", "verdict": "NO_EVIDENCE"},
            ],
        }
    ]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    claims = vera.evaluate(str(path)).calibration.claims  # type: ignore[union-attr]
    assert claims is not None
    assert (claims.claims, claims.unmatched, claims.accuracy) == (2, 1, 0.5)
    assert claims.per_verdict["FULLY_SUPPORTED"].both == 1
    assert claims.per_verdict["NO_EVIDENCE"].model_dump() == {
        "human": 1, "judge": 0, "both": 0, "precision": 0.0, "recall": 0.0,
    }  # fmt: skip
    assert "Claims a person labelled: 2 compared (1 not stated by the judge)" in render_markdown(
        vera.evaluate(str(path))
    )


def test_a_claim_verdict_that_is_no_verdict_names_the_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    row = {
        "id": "a",
        "response": "x",
        "contexts": ["x"],
        "human_claims": [{"text": "x", "verdict": "maybe"}],
    }
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(
        DatasetRowError,
        match=r"line 1, field 'human_claims\[0\]\.verdict'.*fully_supported.*got 'maybe'",
    ):
        list(vera.load_dataset(path))


def _labelled(*labels: bool) -> list[Sample]:
    return [
        Sample(id=f"s{i}", response="Paris is in France.", contexts=("Paris is in France.",),
               human_faithful=ok)
        for i, ok in enumerate(labels)
    ]  # fmt: skip


def test_one_label_gives_a_wide_interval_and_a_warning_not_certainty() -> None:
    # Before: one label gave a 95 % interval of 1.000 to 1.000, and no warning.
    calibration = vera.evaluate(_labelled(True), metrics=["faithfulness"]).calibration
    assert calibration is not None and calibration.mean_faithfulness is not None
    found = calibration.mean_faithfulness
    assert found.labels_only_estimate == 1.0
    assert (round(found.labels_only_ci_low, 3), found.labels_only_ci_high) == (0.207, 1.0)
    assert (found.ci_low, found.ci_high) == (found.labels_only_ci_low, found.labels_only_ci_high)
    lines = "\n".join(calibration_lines(calibration))
    assert "Warning: only 1 labelled sample: below 30 the intervals are wide" in lines
    assert "Warning: every labelled sample is faithful" in lines
    assert "1.000 to 1.000" not in lines and "0.000 to 0.000" not in lines


def test_labels_of_one_class_never_give_a_zero_width_interval() -> None:
    # Before: labels of one class gave 0.000 to 0.000 (the normal approximation's zero variance).
    for n in (1, 2, 5, 29, 30, 200):
        found = corrected_mean([0.0] * n, [0.0] * n, ValueCounts([0.0, 1.0] * 10))
        assert found is not None
        assert found.labels_only_ci_low == 0.0 < found.labels_only_ci_high
        assert found.ci_low < found.ci_high
        assert found.ci_low >= 0.0 and found.ci_high <= 1.0


def test_the_wilson_interval_matches_its_textbook_values() -> None:
    # 0 of 10: 0.000 to 0.278; 5 of 10: 0.237 to 0.763 (Wilson, z = 1.96).
    assert [round(x, 3) for x in wilson_interval(0, 10)] == [0.0, 0.278]
    assert [round(x, 3) for x in wilson_interval(5, 10)] == [0.237, 0.763]
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_enough_labels_of_both_classes_carry_no_warning() -> None:
    calibration = vera.evaluate(_labelled(*[True, False] * 15), metrics=["faithfulness"])
    assert calibration.calibration is not None
    assert calibration.calibration.warnings == ()
    few = vera.evaluate(_labelled(*[True, False] * 14), metrics=["faithfulness"]).calibration
    assert few is not None
    assert [w.split(":")[0] for w in few.warnings] == ["only 28 labelled samples"]


def test_auroc_ranks_by_faithfulness_probability_where_every_labelled_sample_has_it() -> None:
    # Faithfulness ties the two half-supported responses (0.5 each); the probability that every
    # claim holds tells them apart, and ranks the unfaithful one lower.
    rows = [(1.0, 0.95, True), (0.5, 0.45, True), (0.5, 0.2, False), (0.0, 0.1, False)]
    tally = CalibrationTally()
    for score, probability, faithful in rows:
        tally.add(faithful, score, score >= 0.5, probability)
    found = tally.calibration()
    assert found is not None
    assert found.ranked_by == "faithfulness_probability" and found.auroc == 1.0
    # Without it for every labelled sample (an LLM judge), faithfulness ranks, ties and all.
    plain = CalibrationTally()
    for score, probability, faithful in rows:
        plain.add(faithful, score, score >= 0.5, None if score == 0.0 else probability)
    found = plain.calibration()
    assert found is not None
    assert found.ranked_by == "faithfulness" and found.auroc == pytest.approx(7 / 8)


def test_a_labelled_run_with_both_metrics_ranks_by_the_probability() -> None:
    samples = [
        Sample(
            id=name,
            response=response,
            contexts=("The Eiffel Tower is in Paris, France. It was built in 1889.",),
            human_faithful=faithful,
        )
        for name, response, faithful in [
            ("copied", "The Eiffel Tower is in Paris.", True),
            ("invented", "The Eiffel Tower is in Rome and was built in 1999.", False),
        ]
    ]
    both = vera.evaluate(samples, metrics=["faithfulness", "faithfulness_probability"])
    assert both.calibration is not None
    assert both.calibration.ranked_by == "faithfulness_probability"
    alone = vera.evaluate(samples, metrics=["faithfulness"])
    assert alone.calibration is not None and alone.calibration.ranked_by == "faithfulness"
    # Every renderer's block (the terminal's, Markdown's, HTML's) says which score ranked.
    assert "(ranked by faithfulness_probability)" in "\n".join(calibration_lines(both.calibration))
    assert "(ranked by faithfulness)" in "\n".join(calibration_lines(alone.calibration))
