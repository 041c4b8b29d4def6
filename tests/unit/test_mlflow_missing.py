"""Without the `mlflow` extra, the MLflow integration says how to install it, and `--mlflow`
says so before the run rather than after it. MLflow is made absent for the test by
`sys.modules` (None there is how Python marks a module that cannot be imported), so this runs
with or without the extra installed."""

from __future__ import annotations

import sys

import pytest

import vera
from vera import ConfigError
from vera.integrations.mlflow import faithfulness_scorer, log_run

HINT = "pip install 'vera-eval[mlflow]'"


@pytest.fixture
def no_mlflow(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "mlflow" or m.startswith("mlflow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mlflow", None)


def test_a_scorer_without_mlflow_names_the_extra(no_mlflow: None) -> None:
    with pytest.raises(ConfigError, match=r"pip install 'vera-eval\[mlflow\]'"):
        faithfulness_scorer()


def test_run_evaluation_with_mlflow_stops_before_the_run_without_it(no_mlflow: None) -> None:
    evaluated: list[str] = []
    with pytest.raises(ConfigError) as raised:
        vera.run_evaluation("example", mlflow="vera", progress=lambda r: evaluated.append(r.id))
    assert HINT in str(raised.value)
    assert "--mlflow" in str(raised.value)
    assert evaluated == []  # nothing was judged for a run that could not be logged


def test_log_run_without_mlflow_names_the_extra(no_mlflow: None) -> None:
    result = vera.run_evaluation("example", quick=True)
    with pytest.raises(ConfigError, match=r"vera-eval\[mlflow\]"):
        log_run(result, "vera")


def test_an_empty_experiment_name_is_refused_before_the_run() -> None:
    evaluated: list[str] = []
    with pytest.raises(ConfigError, match="experiment's name"):
        vera.run_evaluation("example", mlflow=" ", progress=lambda r: evaluated.append(r.id))
    assert evaluated == []
    result = vera.run_evaluation("example", quick=True)
    with pytest.raises(ConfigError, match="experiment's name"):
        log_run(result, "  ")
