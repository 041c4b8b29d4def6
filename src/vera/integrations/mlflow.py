"""VERA in MLflow: its metrics as scorers for `mlflow.genai.evaluate`, and a finished run
logged to an MLflow experiment (`vera eval --mlflow EXPERIMENT`). Needs the `mlflow` extra.

    import mlflow
    from vera.integrations.mlflow import faithfulness_scorer, scorers

    mlflow.genai.evaluate(data=rows, scorers=[faithfulness_scorer(), *scorers("relevance")])

See docs/integrations-mlflow.md.
"""

from __future__ import annotations

from typing import Any

from vera.integrations._mlflow_run import log_run
from vera.integrations._mlflow_scorers import scorer_for, scorers
from vera.judges._base import Judge

__all__ = ["faithfulness_scorer", "log_run", "scorers"]


def faithfulness_scorer(*, judge: str | Judge | None = None, name: str | None = None) -> Any:
    """VERA's faithfulness as an MLflow scorer: yes when the answer verdict is faithful (no
    claim without evidence or contradicted), the score and claims in its metadata. The judge
    defaults to the offline judge."""
    return scorer_for("faithfulness", judge=judge, name=name)
