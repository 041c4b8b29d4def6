"""`vera eval --mlflow EXPERIMENT` and `run_evaluation(mlflow=...)` against a real local SQLite
tracking store, read back with MLflow's own client: params, metrics, the per-sample table and
the reports are there, the exit code is the run's gate, and a store that cannot be reached is
exit 2 with VERA's own reports written first."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_vera
from tests.support.extras import without

pytest.importorskip("mlflow", reason=without("mlflow"))

from mlflow.tracking import MlflowClient

import vera
from vera import ConfigError

pytestmark = pytest.mark.slow

_QUIET = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One SQLite store for the module: MLflow builds its tables once, in seconds."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as patch:
        # A SQLite store keeps artifacts in ./mlruns of the working directory: the test's own.
        patch.chdir(folder)
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        for key, value in _QUIET.items():
            patch.setenv(key, value)
        yield uri


def _closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _only_run(client: Any, experiment: str) -> Any:
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r} was created"
    runs = client.search_runs([found.experiment_id])
    assert len(runs) == 1
    return runs[0]


def test_vera_eval_mlflow_logs_params_metrics_table_and_reports(store: str, tmp_path: Path) -> None:
    done = run_vera(
        tmp_path,
        "eval",
        "--dataset",
        "example",
        "--metric",
        "faithfulness",
        "--metric",
        "hallucination_rate",
        "-o",
        "report.json",
        "--mlflow",
        "vera-example",
        MLFLOW_TRACKING_URI=store,
        **_QUIET,
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert done.returncode in (0, 1), done.stderr
    client = MlflowClient(tracking_uri=store)
    run = _only_run(client, "vera-example")
    assert f"run {run.info.run_id}" in done.stdout
    params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
    assert params["judge"] == report["judge"] == "offline"
    assert params["metrics"] == "faithfulness,hallucination_rate"
    assert params["dataset_fingerprint"] == report["fingerprint"]["dataset"]
    assert params["threshold.faithfulness"] == repr(
        report["metric_summary"]["faithfulness"]["threshold"]
    )
    assert metrics["faithfulness"] == pytest.approx(report["metrics"]["faithfulness"])
    assert metrics["answers.unfaithful"] == report["answers"]["unfaithful"]
    assert metrics["answers.faithful"] == report["answers"]["faithful"]
    assert metrics["exit_code"] == done.returncode
    assert tags["vera.gate"] == ("passed" if done.returncode == 0 else "failed")
    names = {f.path for f in client.list_artifacts(run.info.run_id)}
    assert {"vera_report.html", "vera_report.json", "vera_samples.json"} <= names
    logged = json.loads(
        Path(
            client.download_artifacts(run.info.run_id, "vera_report.json", str(tmp_path))
        ).read_text()
    )
    assert logged["metrics"] == report["metrics"]
    table = client.load_table(
        run.info.experiment_id, "vera_samples.json", run_ids=[run.info.run_id]
    )
    assert len(table) == report["counts"]["total"]
    by_id = {row["id"]: row for _, row in table.iterrows()}
    for sample in report["samples"]:
        assert by_id[sample["id"]]["verdict"] == sample["verdict"]["status"]
        assert by_id[sample["id"]]["faithfulness"] == pytest.approx(
            sample["scores"]["faithfulness"]
        )


def test_the_exit_code_is_the_gate_s_with_mlflow_too(store: str, tmp_path: Path) -> None:
    """The example's planted hallucinations fail the answer-verdict gate (exit 1); allowing
    them all passes it (exit 0): MLflow logging changes neither."""
    failed = run_vera(
        tmp_path, "eval", "--dataset", "example", "--mlflow", "gate-failed",
        MLFLOW_TRACKING_URI=store, **_QUIET,
    )  # fmt: skip
    allowed = run_vera(
        tmp_path, "eval", "--dataset", "example", "--max-unfaithful", "100%",
        "--mlflow", "gate-passed", MLFLOW_TRACKING_URI=store, **_QUIET,
    )  # fmt: skip
    assert (failed.returncode, allowed.returncode) == (1, 0), failed.stderr + allowed.stderr
    client = MlflowClient(tracking_uri=store)
    assert _only_run(client, "gate-failed").data.tags["vera.gate"] == "failed"
    assert _only_run(client, "gate-failed").data.metrics["exit_code"] == 1
    assert _only_run(client, "gate-passed").data.tags["vera.gate"] == "passed"
    assert _only_run(client, "gate-passed").data.params["max_unfaithful"] == "100%"


def test_an_unreachable_server_is_exit_2_after_the_reports_are_written(tmp_path: Path) -> None:
    server = f"http://vera-user:s3cret-pass@127.0.0.1:{_closed_port()}"
    done = run_vera(
        tmp_path, "eval", "--dataset", "example", "-o", "report.json", "--html", "report.html",
        "--mlflow", "vera", MLFLOW_TRACKING_URI=server, **_QUIET,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "could not log the run to the MLflow tracking store" in done.stderr
    assert "127.0.0.1" in done.stderr
    assert "s3cret-pass" not in done.stderr + done.stdout
    assert json.loads((tmp_path / "report.json").read_text())["counts"]["total"] == 28
    assert (tmp_path / "report.html").stat().st_size > 0


def test_run_evaluation_logs_to_mlflow_and_a_bad_uri_is_a_config_error(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cret-pass"
    result = vera.run_evaluation(
        "example",
        mlflow="from-python",
        max_unfaithful="100%",
        judge_base_url=f"http://user:{secret}@127.0.0.1:9/v1",  # a URL with credentials
    )
    client = MlflowClient(tracking_uri=store)
    run = _only_run(client, "from-python")
    assert run.data.metrics["samples.total"] == result.report.counts.total
    assert run.data.params["plan_fingerprint"] == result.report.fingerprint.digest
    logged = [*run.data.params.values(), *run.data.tags.values()]
    for name in ("vera_report.json", "vera_report.html"):
        path = client.download_artifacts(run.info.run_id, name, str(tmp_path))
        logged.append(Path(path).read_text(encoding="utf-8"))
    assert not [text for text in logged if secret in text]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuchscheme://nowhere")
    report = tmp_path / "report.json"
    with pytest.raises(ConfigError, match="nosuchscheme"):
        vera.run_evaluation("example", mlflow="from-python", reports={"json": report})
    assert report.exists()  # written before MLflow was called


def test_a_blank_experiment_is_exit_2_before_anything_is_evaluated(tmp_path: Path) -> None:
    done = run_vera(tmp_path, "eval", "--dataset", "example", "--mlflow", " ", **_QUIET)
    assert done.returncode == 2
    assert "--mlflow: give the experiment's name" in done.stderr
    assert "Evaluated" not in done.stderr  # refused before the run, not after it
