"""A finished run logged to an MLflow experiment (`vera eval --mlflow EXPERIMENT`).

One MLflow run per VERA run: its params (judge, metrics, pass marks and gates, the dataset and
its fingerprint), its metrics (each metric's mean and interval, the answer-verdict counts, the
exit code), the per-sample table (`vera_samples.json`, MLflow's Evaluation table) and the HTML
and JSON reports as artifacts. The tracking URI is MLflow's own (`MLFLOW_TRACKING_URI`, else
its default). The caller writes VERA's own reports first; any MLflow failure is one
`ConfigError` (exit 2) naming the tracking URI, with nothing of the run lost. Nothing secret is
logged: no base URL, key or header, only names the plan already shows in its reports.
"""

from __future__ import annotations

import importlib
import importlib.util
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from vera._run._engine import ExitCode, RunResult
from vera._types._errors import ConfigError
from vera._types._extras import install_hint
from vera._types._report import SampleResult
from vera.render._outputs import open_run_view, write_reports
from vera.render._run_view import RunView

SAMPLES_TABLE = "vera_samples.json"
_REPORTS = (("html", "vera_report.html"), ("json", "vera_report.json"))
_MAX_TAG = 5000
"""MLflow keeps a tag's value up to 8000 characters; a long gate message is cut before."""


def safe_uri(uri: str) -> str:
    """`uri` without the user and password a server URL may carry, for messages."""
    parts = urlsplit(uri)
    if parts.username is None and parts.password is None:
        return uri
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def require_mlflow(experiment: str) -> None:
    """`ConfigError` before the run, rather than after it, where MLflow is not installed or
    `experiment` names nothing."""
    if not experiment.strip():
        raise ConfigError("--mlflow: give the experiment's name, e.g. --mlflow vera")
    if importlib.util.find_spec("mlflow") is None:
        raise ConfigError(f"--mlflow needs MLflow: {install_hint('mlflow')}")


def _tracking() -> tuple[Any, str]:
    """MLflow's client class, and the tracking URI it reads (`MLFLOW_TRACKING_URI`)."""
    mlflow = importlib.import_module("mlflow")
    tracking = importlib.import_module("mlflow.tracking")
    return tracking.MlflowClient, str(mlflow.get_tracking_uri())


def log_run(result: RunResult, experiment: str, *, view: RunView | None = None) -> str:
    """Log `result` to the MLflow experiment named `experiment` (created if new); the MLflow
    run's id. `view` is the run's open view where the caller has one (`vera eval` does).

    Raises:
        ConfigError: MLflow is not installed, or the tracking store refused or could not be
            reached (the message names its URI, without credentials).
    """
    require_mlflow(experiment)
    client, uri = _tracking()
    if view is None:
        with open_run_view(result) as opened:
            return _logged(client, uri, result, experiment, opened)
    return _logged(client, uri, result, experiment, view)


def _logged(client: Any, uri: str, result: RunResult, experiment: str, view: RunView) -> str:
    run_id: str | None = None
    try:
        client = client(tracking_uri=uri)  # a URI of no known scheme fails here
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else client.create_experiment(experiment)
        created = client.create_run(experiment_id, run_name=_run_name(result), tags=_tags(result))
        run_id = created.info.run_id
        _log_figures(client, run_id, result)
        client.log_table(run_id, _table(view.sample_results()), SAMPLES_TABLE)
        with tempfile.TemporaryDirectory(prefix="vera-mlflow-") as folder:
            targets = [(fmt, Path(folder) / name) for fmt, name in _REPORTS]
            write_reports(view, targets)
            for _, path in targets:
                client.log_artifact(run_id, str(path))
        client.set_terminated(run_id, "FINISHED")
    except ConfigError:
        raise
    except Exception as exc:  # MLflow raises its own, requests', SQLAlchemy's or OSError
        if run_id is not None:
            _end_failed(client, run_id)
        raise ConfigError(
            f"--mlflow {experiment}: could not log the run to the MLflow tracking store at "
            f"{safe_uri(uri)} ({type(exc).__name__}: {_first_line(exc)}); VERA's own reports "
            "and history are written. Check MLFLOW_TRACKING_URI."
        ) from None
    return str(run_id)


def _end_failed(client: Any, run_id: str) -> None:
    """Mark a half-logged run failed, where the store still answers (best effort: the
    error that stopped the logging is the one to report)."""
    try:
        client.set_terminated(run_id, "FAILED")
    except Exception:  # the store that failed may fail again; the first error is reported
        return


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "no message"


def _run_name(result: RunResult) -> str:
    report = result.report
    return f"vera {report.dataset} · {report.judge}"


def _tags(result: RunResult) -> dict[str, str]:
    tags = {"vera.dataset": result.report.dataset, "vera.judge": result.report.judge}
    if result.run_id is not None:
        tags["vera.run_id"] = result.run_id  # the run in VERA's history: `vera view RUN_ID`
    if not result.gated:
        tags["vera.gate"] = "ungated"
    else:
        tags["vera.gate"] = "passed" if result.passed else "failed"
    if result.gate_failures:
        tags["vera.gate_failures"] = "; ".join(result.gate_failures)[:_MAX_TAG]
    return tags


def _params(result: RunResult) -> dict[str, str]:
    """The run's settings a comparison across runs needs: judge, metrics, pass marks, gates,
    dataset and fingerprint. Only names and numbers, never a URL, key or header."""
    report, plan = result.report, result.plan
    params = {
        "judge": report.judge,
        "metrics": ",".join(report.metric_summary),
        "dataset": report.dataset,
        "vera_version": report.vera_version,
        "pipeline": report.pipeline or "recorded answers",
        "max_unfaithful": str(plan.settings.max_unfaithful),
        "max_errors": str(plan.settings.max_errors),
        "gate_threshold": str(plan.threshold),
    }
    for name, summary in report.metric_summary.items():
        params[f"threshold.{name}"] = repr(summary.threshold)
    if report.fingerprint is not None:
        params["dataset_fingerprint"] = report.fingerprint.dataset
        params["plan_fingerprint"] = report.fingerprint.digest
    return params


def _metrics(result: RunResult) -> dict[str, float]:
    """Each metric's mean and interval and pass count, the answer verdicts, the counts and
    the exit code (a metric without a mean measured nothing and is left out, not logged 0)."""
    report = result.report
    figures: dict[str, float] = {"exit_code": float(result.exit_code)}
    figures["gate_passed"] = float(result.exit_code == ExitCode.OK)
    for name, summary in report.metric_summary.items():
        for key, value in (("", summary.mean), (".ci_low", summary.ci_low)):
            if value is not None:
                figures[name + key] = float(value)
        if summary.ci_high is not None:
            figures[f"{name}.ci_high"] = float(summary.ci_high)
        figures[f"{name}.passed"] = float(summary.passed)
        figures[f"{name}.failed"] = float(summary.failed)
    if report.answers is not None:
        for status in ("faithful", "unfaithful", "no_claims", "errors"):
            figures[f"answers.{status}"] = float(getattr(report.answers, status))
    counts = report.counts
    for key in ("total", "scored", "errors", "skipped", "invalid_rows"):
        figures[f"samples.{key}"] = float(getattr(counts, key))
    return figures


def _log_figures(client: Any, run_id: str, result: RunResult) -> None:
    entities = importlib.import_module("mlflow.entities")
    client.log_batch(
        run_id,
        metrics=[entities.Metric(k, v, 0, 0) for k, v in _metrics(result).items()],
        params=[entities.Param(k, v) for k, v in _params(result).items()],
    )


def _table(results: Iterable[SampleResult]) -> dict[str, list[Any]]:
    """One row per sample: its verdict and reason, each metric's score, its claims."""
    rows = list(results)
    metrics = sorted({name for row in rows for name in row.scores})
    table: dict[str, list[Any]] = {
        "id": [r.id for r in rows],
        "status": [r.status.value for r in rows],
        "verdict": [r.verdict.status.value if r.verdict else None for r in rows],
        "reason": [r.verdict.reason if r.verdict else r.error for r in rows],
        "claims": [len(r.claims) for r in rows],
        "unsupported_claims": [sum(c.verdict.unsupported for c in r.claims) for r in rows],
        "response": [r.response for r in rows],
        "category": [r.category for r in rows],
    }
    for name in metrics:
        table[name] = [r.scores.get(name) for r in rows]
    return table
