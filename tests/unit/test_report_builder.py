"""`ReportBuilder`: a run's aggregates from results one at a time, whatever order they finish
in, and the same report `build_report` gives from a list."""

import random

import vera
from vera._results import ReportBuilder, build_report

WHITEBOX = "the report builder, on hand-made results"


def _aggregates(report: vera.Report) -> dict[str, object]:
    data = report.to_dict()
    # What the run adds around the aggregates: which samples, when, and what it measured.
    for key in ("samples", "timestamp", "fingerprint", "regression"):
        data.pop(key, None)
    return data


def test_the_order_results_arrive_in_does_not_change_the_report() -> None:
    kept = vera.evaluate("example", metrics=["faithfulness", "hallucination_rate"])
    thresholds = {name: s.threshold for name, s in kept.metric_summary.items()}
    lower = [name for name, s in kept.metric_summary.items() if not s.higher_is_better]
    shuffled = list(kept.samples)
    random.Random(7).shuffle(shuffled)
    builder = ReportBuilder(thresholds, lower_is_better=lower)
    for result in shuffled:
        builder.add(result)
    streamed = builder.build(dataset=kept.dataset, judge=kept.judge, version=kept.vera_version,
                             judge_details=kept.judge_details)  # fmt: skip
    assert streamed.samples == ()
    assert _aggregates(streamed) == _aggregates(kept)
    rebuilt = build_report(
        dataset=kept.dataset, judge=kept.judge, version=kept.vera_version,
        judge_details=kept.judge_details, thresholds=thresholds, results=kept.samples,
        lower_is_better=lower,
    )  # fmt: skip
    assert rebuilt.samples == kept.samples
    assert _aggregates(rebuilt) == _aggregates(kept)
