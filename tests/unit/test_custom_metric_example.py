"""The custom-metric example in docs/ works as documented."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import vera
from vera.metrics import create_metric
from vera.metrics._registry import METRICS
from vera.testing import FakeJudge

WHITEBOX = "the registry's own table, to take a test's metric out again"

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "custom_metric.py"


def test_the_example_metric_scores_and_registers() -> None:
    spec = importlib.util.spec_from_file_location("custom_metric", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        assert METRICS["numeric_claims"] is module.NumericClaims
        judge = FakeJudge({"r": [("It costs $5.", "yes"), ("It is red.", "yes")]})  # a fake
        sample = vera.Sample(id="s", response="r", contexts=["c"])
        report = vera.evaluate([sample], [create_metric("numeric_claims")], judge)
        assert report.metrics == {"numeric_claims": 0.5}
        assert report.samples[0].results["numeric_claims"].claim_weights == {"c1": 1.0, "c2": 0.0}
    finally:
        METRICS.pop("numeric_claims", None)


@pytest.mark.slow
def test_the_example_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "'numeric_claims':" in done.stdout and "'faithfulness':" in done.stdout
