"""`vera._store.compare_runs`: two stored runs compared in one pass over their results paired
in SQL, keeping only the top changes; the same figures, changes and lines as comparing the
two whole reports in memory (`compare_reports`, `verdict_changes`, `most_changed`)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vera import (
    ClaimRecord,
    ConfigError,
    Report,
    RunStore,
    SampleResult,
    SampleStatus,
    Verdict,
    cli,
    compare_runs,
)
from vera._plan import build_plan
from vera._results import (
    build_report,
    compare_paired,
    compare_reports,
    most_changed,
    pairs_in_memory,
    run_differences,
    verdict_changes,
)
from vera.metrics import MetricResult, MetricStatus

WHITEBOX = "the report builder, on hand-made results; the history's batch journal and schema"

VERDICTS = list(Verdict)


def result(sample_id: str, score: float, verdicts: list[Verdict]) -> SampleResult:
    claims = tuple(
        ClaimRecord(
            id=f"c{i}", text=f"claim {i} of {sample_id}", span=None, verdict=verdict,
            evidence="", context_index=None, reason="",
        )
        for i, verdict in enumerate(verdicts)
    )  # fmt: skip
    metric = MetricResult(
        name="faithfulness", score=score, passed=score >= 0.5, status=MetricStatus.OK,
        reason="", threshold=0.5,
    )  # fmt: skip
    return SampleResult(
        id=sample_id,
        status=SampleStatus.SCORED,
        scores={"faithfulness": score},
        results={"faithfulness": metric},
        claims=claims,
    )


def results(shift: int, count: int) -> list[SampleResult]:
    """`count` samples whose verdicts (and so scores) depend on `shift`: some move worse, some
    better, many not at all, by different amounts, so ties in size are broken by id."""
    found = []
    for i in range(count):
        moved = shift * (i % 5 - 2) if i % 3 == 0 else 0
        verdicts = [VERDICTS[(i + moved + k) % 4] for k in range(3)]
        score = sum(v is Verdict.FULLY_SUPPORTED for v in verdicts) / 3
        found.append(result(f"s{i:03d}", score, verdicts))
    return found


def stored(store: RunStore, samples: list[SampleResult], *, dataset: str = "d") -> str:
    run_id = store.start(dataset, build_plan())
    for position, sample in enumerate(samples):
        store.add_result(run_id, position, sample)
    store.finish(run_id, report(samples, dataset))
    return run_id


def report(samples: list[SampleResult], dataset: str = "d") -> Report:
    return build_report(
        dataset=dataset, judge="j", version="v", thresholds={"faithfulness": 0.5},
        results=samples,
    )  # fmt: skip


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[RunStore, str, str, Report, Report]:
    store = RunStore(tmp_path / "h.sqlite")
    # A sample only one run has pairs with nothing; B's samples are stored in another order.
    a_samples = results(0, 60)
    b_samples = [*reversed(results(1, 60)[:-3]), result("zz", 1.0, [])]
    a, b = stored(store, a_samples), stored(store, b_samples)
    return store, a, b, report(a_samples), report(b_samples)


def test_stored_runs_compare_as_their_whole_reports_do(
    two_runs: tuple[RunStore, str, str, Report, Report],
) -> None:
    store, a, b, before, after = two_runs
    compared = compare_runs(store, a, b, top=4, changes=7).comparison
    every = verdict_changes(before.samples, after.samples)
    assert compared.metrics == compare_reports(after, before)
    assert compared.metrics["faithfulness"].paired_samples == 57
    assert compared.changed == len(every) > 7
    assert compared.worse == sum(c.direction == "worse" for c in every) > 0
    assert compared.better == sum(c.direction == "better" for c in every) > 0
    assert list(compared.changes) == every[:7]
    assert compared.moved_lines() == most_changed(before, after, 4)
    assert compared.moved > 4


def test_the_kept_changes_do_not_depend_on_the_order_of_the_pairs(
    two_runs: tuple[RunStore, str, str, Report, Report],
) -> None:
    _, _, _, before, after = two_runs
    pairs = list(pairs_in_memory(after, before))
    forward = compare_paired(after, before, pairs, top=3, changes=5)
    backward = compare_paired(after, before, pairs[::-1], top=3, changes=5)
    assert forward.changes == backward.changes and forward.moves == backward.moves
    nothing_kept = compare_paired(after, before, pairs, top=0, changes=0)
    assert nothing_kept.changes == () and nothing_kept.moves == ()
    assert nothing_kept.changed == forward.changed and nothing_kept.moved == forward.moved
    assert nothing_kept.moved_lines() == most_changed(before, after, 0)


class WholeReportsRefused(RunStore):
    """A store that fails where a comparison would read a run's samples whole."""

    def report(self, run_id: str, *, samples: bool = True) -> Report:
        assert not samples, "a whole report was read"
        return super().report(run_id, samples=False)

    def iter_results(self, run_id: str, *, batch: int = 500) -> Any:
        raise AssertionError("a run's results were read unpaired")


def test_a_comparison_reads_aggregates_and_pairs_never_a_whole_run(
    two_runs: tuple[RunStore, str, str, Report, Report], tmp_path: Path
) -> None:
    _, a, b, before, after = two_runs
    compared = compare_runs(WholeReportsRefused(tmp_path / "h.sqlite"), a, b, top=2)
    assert compared.before.samples == () and compared.after.samples == ()
    assert compared.comparison.metrics == compare_reports(after, before)
    assert compared.comparison.changes == ()  # none asked for
    assert compared.paired and compared.differences == run_differences(before, after)


def test_a_report_stored_whole_by_an_earlier_version_pairs_its_own_samples(
    two_runs: tuple[RunStore, str, str, Report, Report], tmp_path: Path
) -> None:
    _, a, b, before, after = two_runs
    with closing(sqlite3.connect(tmp_path / "h.sqlite")) as db, db:
        db.execute("UPDATE runs SET report = ? WHERE id = ?", (before.to_json(indent=None), a))
        db.execute("DELETE FROM results WHERE run_id = ?", (a,))
    compared = compare_runs(RunStore(tmp_path / "h.sqlite"), a, b, top=3).comparison
    assert compared.metrics == compare_reports(after, before)
    assert compared.moved_lines() == most_changed(before, after, 3)


def test_runs_of_different_datasets_are_refused_paired_or_compared_by_means(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path / "h.sqlite")
    a = stored(store, results(0, 6), dataset="d")
    b = stored(store, results(1, 6), dataset="other")
    with pytest.raises(ConfigError, match=r"do not pair; pass --any-dataset"):
        compare_runs(store, a, b)
    paired = compare_runs(store, a, b, other_dataset="pair")
    assert paired.paired and paired.comparison.metrics["faithfulness"].paired_samples == 6
    means = compare_runs(store, a, b, other_dataset="means", changes=10)
    assert not means.paired
    assert means.comparison.metrics["faithfulness"].paired_samples == 0
    assert means.comparison.changed == 0 and means.comparison.changes == ()


def test_an_unfinished_run_says_how_to_complete_it(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite")
    a = stored(store, results(0, 3))
    running = store.start("d", build_plan())
    with pytest.raises(ConfigError, match=rf"run {running} did not finish; .*--resume"):
        compare_runs(store, a, running)


def test_the_cli_prints_the_library_comparison_and_refuses_a_negative_top(
    two_runs: tuple[RunStore, str, str, Report, Report], tmp_path: Path
) -> None:
    store, a, b, before, after = two_runs
    history = str(tmp_path / "h.sqlite")
    shown = CliRunner().invoke(cli.app, ["compare", a, b, "--history", history, "--top", "2"])
    assert shown.exit_code == 0, shown.output
    compared = compare_runs(store, a, b, top=2).comparison
    summary = (
        f"{compared.changed} samples changed a claim's verdict or a score: {compared.worse} "
        f"worse, {compared.better} better"
    )
    # The console wraps long lines at its width: compared word by word.
    words = " ".join(shown.output.split())
    assert summary in words
    assert words.endswith(" ".join(" ".join(most_changed(before, after, 2)).split()))
    refused = CliRunner().invoke(cli.app, ["compare", a, b, "--history", history, "--top", "-1"])
    assert refused.exit_code == 2
    assert "--top -1: give 0 or more" in refused.output
