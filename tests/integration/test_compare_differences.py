"""`vera compare` and `vera view`'s compare page say when two runs were not measured alike
(judge, metrics, thresholds), and count a sample as changed only when its verdicts or scores
changed: two runs that differ by their threshold alone change no sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from vera import RunStore, Settings, cli, create_app, run_plan
from vera._plan import DatasetRef, build_plan
from vera._results import run_differences, verdict_changes

WHITEBOX = "the report builder, on hand-made results"


def stored(path: Path, *, judge: str, metrics: list[str], threshold: float | None) -> str:
    settings = Settings(judge=judge, history_path=path, cache=False)
    plan = build_plan(
        dataset=DatasetRef(source="example"),
        metrics=metrics,
        settings=settings,
        threshold=threshold,
    )
    run_id = run_plan(plan).run_id
    assert run_id is not None
    return run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """The example judged by offline at threshold 0.5, then at 0.9 (the same verdicts and
    scores), then by offline:learned with one more metric."""
    path = tmp_path_factory.mktemp("compare") / "runs.sqlite"
    loose = stored(path, judge="offline", metrics=["faithfulness"], threshold=0.5)
    strict = stored(path, judge="offline", metrics=["faithfulness"], threshold=0.9)
    other = stored(
        path,
        judge="offline:learned",
        metrics=["faithfulness", "hallucination_rate"],
        threshold=0.5,
    )
    return path, loose, strict, other


def test_a_threshold_alone_changes_no_sample_and_is_named(
    runs: tuple[Path, str, str, str],
) -> None:
    path, loose, strict, _ = runs
    store = RunStore(path, read_only=True)
    before, after = store.report(loose), store.report(strict)
    # The badges differ (some samples pass at 0.5 and fail at 0.9) ...
    passed = [
        before.metric_summary["faithfulness"].passed,
        after.metric_summary["faithfulness"].passed,
    ]
    assert passed[0] > passed[1]
    # ... but no verdict or score moved, so no sample changed.
    assert verdict_changes(before.samples, after.samples) == []
    # --threshold is each metric's pass mark and a gate: both are named.
    assert run_differences(before, after) == [
        "The metric thresholds differ: faithfulness A ≥ 0.5, B ≥ 0.9 (a sample's pass or fail "
        "may differ by the threshold alone)",
        "The gates differ: A --threshold 0.5, gates {}; B --threshold 0.9, gates {}",
    ]

    page = TestClient(create_app(path)).get(f"/compare?a={loose}&b={strict}").text
    assert 'id="run-differences"' in page
    assert "The metric thresholds differ: faithfulness A ≥ 0.5, B ≥ 0.9 (" in page
    assert 'id="no-changes"' in page and '<article class="change' not in page

    result = CliRunner().invoke(cli.app, ["compare", loose, strict, "--history", str(path)])
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "warning: The metric thresholds differ: faithfulness A ≥ 0.5, B ≥ 0.9 (" in said
    assert "0 samples changed a claim's verdict or a score: 0 worse, 0 better" in result.stdout


def test_judges_and_metrics_that_differ_are_named(runs: tuple[Path, str, str, str]) -> None:
    path, loose, _, other = runs
    store = RunStore(path, read_only=True)
    found = run_differences(store.report(loose), store.report(other))
    assert found == [
        "The judges differ: A offline; B offline:learned",
        "The metrics differ: only B measured hallucination_rate",
    ]
    page = TestClient(create_app(path)).get(f"/compare?a={loose}&b={other}").text
    for line in found:
        assert line in page
    changes = verdict_changes(store.report(loose).samples, store.report(other).samples)
    assert changes and all(c.claims or c.scores for c in changes)
    moved = next(c for c in changes if c.scores)
    block = page.split(f'data-sample-id="{moved.id}"')[1].split("</article>")[0]
    assert 'data-role="scores"' in block and moved.scores[0].metric in block

    result = CliRunner().invoke(cli.app, ["compare", loose, other, "--history", str(path)])
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    for line in found:
        assert line in said
    assert f"{len(changes)} samples changed a claim's verdict or a score" in result.stdout


def test_runs_measured_alike_have_no_differences(runs: tuple[Path, str, str, str]) -> None:
    path, loose, _, _ = runs
    store = RunStore(path, read_only=True)
    report = store.report(loose)
    assert run_differences(report, report) == []


def test_a_run_stored_before_fingerprints_is_compared_by_its_report(
    runs: tuple[Path, str, str, str],
) -> None:
    path, loose, _, other = runs
    store = RunStore(path, read_only=True)
    old = store.report(loose).model_copy(update={"fingerprint": None})
    assert run_differences(old, store.report(other)) == [
        "The judges differ: A offline; B offline:learned",
        "The metrics differ: only B measured hallucination_rate",
        "A stored no fingerprint (a run from before fingerprints): only the judges and the "
        "metrics were compared, not the test sets, systems or gates",
    ]
