"""Gates: thresholds from flags and vera.toml, per category, latency, and noise-aware drops."""

from pathlib import Path

from vera import Report, SampleResult, SampleStatus, load_settings
from vera._results import GateConfig, build_report, gate_failures, regression_failures
from vera.metrics import MetricResult, MetricStatus

WHITEBOX = "the report builder, on hand-made results"


def report(scores: dict[str, float], *, latency: float | None = None) -> Report:
    results = [
        SampleResult(
            id=sid,
            status=SampleStatus.SCORED,
            category="fact" if i % 2 else "unanswerable",
            latency_ms=latency,
            scores={"faithfulness": score},
            results={
                "faithfulness": MetricResult(
                    name="faithfulness", score=score, passed=score >= 0.5,
                    status=MetricStatus.OK, reason="", threshold=0.5,
                )
            },
        )
        for i, (sid, score) in enumerate(scores.items())
    ]  # fmt: skip
    return build_report(
        dataset="d", judge="j", version="v", thresholds={"faithfulness": 0.5}, results=results
    )


def test_gates_from_vera_toml_by_metric_category_and_latency(tmp_path: Path) -> None:
    (tmp_path / "vera.toml").write_text(
        "[gates]\nfaithfulness = 0.9\nlatency_p95_ms = 100\n"
        "[gates.categories.unanswerable]\nfaithfulness = 0.95\n"
        "[gates.categories.missing]\nfaithfulness = 0.5\n"
    )
    config = load_settings(directory=tmp_path, environ={}).gates
    assert config.metrics == {"faithfulness": 0.9} and config.latency_p95_ms == 100
    failures = gate_failures(report({"a": 1.0, "b": 0.8}, latency=250.0), config)
    assert len(failures) == 2
    text = "\n".join(failures)
    assert "faithfulness: mean 0.900" not in text  # 0.9 meets 0.9
    assert "faithfulness [missing]: no scored sample in this category" in text
    assert "latency p95: 250 ms is above 100 ms" in text
    assert "[unanswerable]" not in text  # a = 1.0 meets 0.95
    assert gate_failures(report({"a": 1.0, "b": 1.0}), GateConfig()) == []
    unknown = gate_failures(report({"a": 1.0}), GateConfig.model_validate({"recall": 0.5}))
    assert unknown == ["recall: gated in vera.toml but not computed (add -m recall)"]


def test_a_real_drop_fails_and_noise_does_not() -> None:
    before = report({f"s{i}": 1.0 for i in range(40)})
    dropped = report({f"s{i}": 0.5 if i % 2 else 1.0 for i in range(40)})
    [line] = regression_failures(dropped, before, "run-1")
    assert line.startswith("faithfulness: 1.000 -> 0.750 against run run-1 (change -0.250")
    noisy = report({f"s{i}": (1.0 if i % 2 else 0.5) if i < 4 else 1.0 for i in range(40)})
    wobble = report({f"s{i}": (0.5 if i % 2 else 1.0) if i < 4 else 1.0 for i in range(40)})
    assert regression_failures(wobble, noisy, "run-1") == []  # same mean, swapped samples
    better = report({f"s{i}": 1.0 for i in range(40)})
    assert regression_failures(better, dropped, "run-1") == []  # improvements never fail
