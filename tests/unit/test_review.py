"""Review labels in the run history: stored beside the judge's verdicts, the two queues, the
calibration block from the calibration sample, and the labelled dataset they export.

The run is the bundled `example` judged by `offline:learned` (claim probabilities, so
faithfulness_probability ranks) and stored in a real SQLite history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.cli import run_vera

import vera
from vera import (
    ReviewError,
    RunStore,
    Settings,
    add_label,
    export_labels,
    review_calibration,
    review_state,
    run_plan,
)
from vera._plan import DatasetRef, build_plan
from vera._review import calibration_order, triage_order
from vera._review._labels import stored_labels
from vera._types import Calibration
from vera.datasets import bundled_path

WHITEBOX = "the review queues' order; the labels as stored rows"

JUDGE = "offline:learned"
METRICS = ["faithfulness", "faithfulness_probability"]
LABELLED = 14


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("review") / "runs.sqlite"
    settings = Settings(judge=JUDGE, history_path=path, cache=False)
    plan = build_plan(dataset=DatasetRef(source="example"), metrics=METRICS, settings=settings)
    run_id = run_plan(plan).run_id
    assert run_id is not None
    return path, run_id


@pytest.fixture
def store(history: tuple[Path, str], tmp_path: Path) -> RunStore:
    """A fresh copy of the history, so each test labels its own."""
    copy = tmp_path / "runs.sqlite"
    copy.write_bytes(history[0].read_bytes())
    return RunStore(copy)


def _human(store: RunStore, run_id: str, sample_id: str) -> str:
    """A person who agrees with the judge mostly: unfaithful below 0.75, with two flipped."""
    result = store.result(run_id, sample_id)
    assert result is not None
    score = result.results["faithfulness"].score
    assert score is not None
    unfaithful = score < 0.75
    if sample_id in {"ex-03", "ex-10"}:
        unfaithful = not unfaithful
    return "unfaithful" if unfaithful else "faithful"


def _label_calibration(store: RunStore, run_id: str, count: int) -> list[str]:
    labelled = []
    for _ in range(count):
        sample_id = review_state(store, run_id).next_calibration
        assert sample_id is not None
        add_label(
            store,
            run_id,
            sample_id,
            _human(store, run_id, sample_id),
            reviewer="ana",
            queue="calibration",
        )
        labelled.append(sample_id)
    return labelled


def test_the_calibration_order_is_random_but_fixed_by_the_run(history: tuple[Path, str]) -> None:
    ids = [f"ex-{i:02d}" for i in range(1, 29)]
    order = calibration_order("run-a", ids)
    assert order == calibration_order("run-a", reversed(ids))  # not the input's order
    assert sorted(order) == ids
    assert order != ids and order != calibration_order("run-b", ids)


def test_a_label_is_a_row_of_its_own_and_the_newest_counts(
    store: RunStore, history: tuple[Path, str]
) -> None:
    run_id = history[1]
    before = store.result(run_id, "ex-01")
    assert before is not None
    claim = before.claims[0]
    add_label(store, run_id, "ex-01", "faithful", reviewer="ana", queue="triage", note="ok")
    rows = add_label(
        store,
        run_id,
        "ex-01",
        "unfaithful",
        reviewer="bo",
        queue="triage",
        claims={claim.text: "CONTRADICTED"},
    )
    assert [(r.claim, r.label, r.reviewer) for r in rows] == [
        (None, "unfaithful", "bo"),
        (claim.text, "CONTRADICTED", "bo"),
    ]
    assert len(stored_labels(store, run_id)) == 3  # the first label stays, as the record
    entry = review_state(store, run_id).labels["ex-01"]
    assert entry.faithful is False and entry.claims[claim.text].label == "CONTRADICTED"
    assert store.result(run_id, "ex-01") == before  # the judge's verdicts are untouched


@pytest.mark.parametrize(
    ("sample", "label", "claims", "reviewer", "says"),
    [
        ("ex-99", "faithful", {}, "ana", "no sample 'ex-99'"),
        ("ex-01", "maybe", {}, "ana", "faithful or unfaithful"),
        ("ex-01", None, {"No such claim.": "CONTRADICTED"}, "ana", "has no claim"),
        ("ex-01", "faithful", {}, "  ", "reviewer"),
        ("ex-01", None, {}, "ana", "nothing to store"),
    ],
)
def test_a_label_that_says_nothing_valid_is_refused_before_any_write(
    store: RunStore,
    history: tuple[Path, str],
    sample: str,
    label: str | None,
    claims: dict[str, str],
    reviewer: str,
    says: str,
) -> None:
    with pytest.raises(ReviewError, match=says):
        add_label(
            store, history[1], sample, label, reviewer=reviewer, queue="triage", claims=claims
        )
    assert stored_labels(store, history[1]) == []


def test_a_claim_label_must_be_a_verdict(store: RunStore, history: tuple[Path, str]) -> None:
    result = store.result(history[1], "ex-01")
    assert result is not None
    with pytest.raises(ReviewError, match="not a verdict"):
        add_label(
            store,
            history[1],
            "ex-01",
            None,
            reviewer="ana",
            queue="triage",
            claims={result.claims[0].text: "WRONG"},
        )


def test_triage_puts_the_lowest_or_least_sure_first(
    store: RunStore, history: tuple[Path, str]
) -> None:
    items = triage_order(store.iter_results(history[1]))
    assert len(items) == 28
    assert [i.priority for i in items] == sorted(i.priority for i in items)
    first = store.result(history[1], items[0].sample_id)
    assert first is not None
    score = first.results["faithfulness"].score
    assert score is not None and items[0].priority <= score


def _intervals(found: Calibration) -> tuple[object, ...]:
    return (
        found.labelled,
        found.unlabelled,
        found.agreement,
        found.auroc,
        found.unfaithful_share,
        found.mean_faithfulness,
        found.claims,
    )


def test_calibration_queue_labels_give_the_intervals_of_calibrate_on_a_labelled_file(
    store: RunStore, history: tuple[Path, str], tmp_path: Path
) -> None:
    run_id = history[1]
    labelled = _label_calibration(store, run_id, LABELLED)
    # A triage label past the calibration sample is kept but must not enter the intervals.
    outside = next(i for i in review_state(store, run_id).order[LABELLED + 1 :])
    add_label(store, run_id, outside, "unfaithful", reviewer="bo", queue="triage")
    from_store = review_calibration(store, run_id)
    assert from_store is not None
    assert from_store.labelled == LABELLED
    assert any("1 labelled sample(s) lie past" in w for w in from_store.warnings)

    # The equivalent labelled file, made from the bundled data, not by the export.
    source = bundled_path("example")
    assert source is not None
    labels = {s: _human(store, run_id, s) == "faithful" for s in labelled}
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    for row in rows:
        if row["id"] in labels:
            row["human_faithful"] = labels[row["id"]]
    equivalent = tmp_path / "labelled.jsonl"
    equivalent.write_text("".join(json.dumps(row) + "\n" for row in rows))
    settings = Settings(history=False, cache=False)
    from_file = vera.calibrate(equivalent, JUDGE, settings=settings)
    assert _intervals(from_file) == _intervals(from_store)
    unfaithful = from_store.unfaithful_share
    assert unfaithful is not None and unfaithful.ci_low < unfaithful.ci_high

    # `vera calibrate RUN` reads the same stored labels.
    by_id = vera.calibrate(run_id, settings=Settings(history_path=store.path, cache=False))
    assert _intervals(by_id) == _intervals(from_store)

    # And the export of the calibration sample is such a file.
    exported = tmp_path / "exported.jsonl"
    assert export_labels(store, run_id, exported, scope="calibration") == 28
    assert _intervals(vera.calibrate(exported, JUDGE, settings=settings)) == _intervals(from_store)


def test_the_export_holds_each_labelled_sample_with_who_labelled_it(
    store: RunStore, history: tuple[Path, str], tmp_path: Path
) -> None:
    run_id = history[1]
    # The calibration order is random, fixed by the run's id: the first samples in it may be
    # answers without claims (an abstention); label in that order up to one with a claim.
    labelled: list[str] = []
    while True:
        labelled += _label_calibration(store, run_id, 1)
        result = store.result(run_id, labelled[-1])
        assert result is not None
        if result.claims:
            break
    first = labelled[-1]
    add_label(
        store,
        run_id,
        first,
        None,
        reviewer="bo",
        queue="calibration",
        claims={result.claims[0].text: "NO_EVIDENCE"},
    )
    path = tmp_path / "labelled.jsonl"
    assert export_labels(store, run_id, path) == len(labelled)
    rows = {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}
    assert sorted(rows) == sorted(labelled)
    row = rows[first]
    assert row["contexts"] and row["query"]
    assert row["human_faithful"] == (_human(store, run_id, first) == "faithful")
    assert row["human_claims"] == [{"text": result.claims[0].text, "verdict": "NO_EVIDENCE"}]
    review = row["metadata"]["review"]
    assert review["in_calibration_sample"] is True
    assert [(x["reviewer"], x["queue"]) for x in review["labels"]] == [
        ("ana", "calibration"),
        ("bo", "calibration"),
    ]


@pytest.mark.slow
def test_vera_labels_export_writes_the_file_and_refuses_a_run_without_labels(
    store: RunStore, history: tuple[Path, str], tmp_path: Path
) -> None:
    run_id = history[1]
    refused = run_vera(
        tmp_path, "labels", "export", run_id, "-o", "out.jsonl", "--history", str(store.path)
    )
    assert refused.returncode == 2 and "no stored labels" in refused.stderr
    assert not (tmp_path / "out.jsonl").exists()
    _label_calibration(store, run_id, 2)
    done = run_vera(
        tmp_path, "labels", "export", run_id[:12], "-o", "out.jsonl", "--history", str(store.path)
    )
    assert done.returncode == 0, done.stderr
    assert "2 samples written" in done.stdout
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_the_docs_example_runs(tmp_path: Path) -> None:
    from tests.support.docs import run_example

    ran = run_example("review.md", tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "6 rows exported" in ran.stdout
    assert len((tmp_path / "labelled.jsonl").read_text().splitlines()) == 6


@pytest.mark.slow
def test_vera_calibrate_run_prints_the_block_of_the_stored_labels(
    store: RunStore, history: tuple[Path, str], tmp_path: Path
) -> None:
    run_id = history[1]
    # Only a label past the start of the calibration order: nothing to calibrate with yet.
    add_label(
        store,
        run_id,
        review_state(store, run_id).order[3],
        "faithful",
        reviewer="a",
        queue="triage",
    )
    early = run_vera(tmp_path, "calibrate", run_id, "--history", str(store.path))
    assert early.returncode == 2
    assert "none in its calibration sample" in early.stderr
    assert review_state(store, run_id).order[0] in early.stderr  # the sample to label first
    _label_calibration(store, run_id, 3)
    done = run_vera(tmp_path, "calibrate", run_id, "--history", str(store.path))
    assert done.returncode == 0, done.stderr
    # The triage label of the fourth sample joins the prefix: it is part of the random order.
    assert "Calibration against 4 human labels" in done.stdout


def test_stored_labels_take_the_place_of_the_datasets_and_the_block_says_so(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": f"s{i}", "response": "Paris is in France.", "contexts": [c], "human_faithful": ok}
        for i, (c, ok) in enumerate([("Paris is in France.", True), ("Rome is in Italy.", False)])
    ]
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    path = tmp_path / "runs.sqlite"
    settings = Settings(history_path=path, cache=False)
    plan = build_plan(dataset=DatasetRef(source=str(data)), settings=settings)
    run_id = run_plan(plan).run_id
    assert run_id is not None
    store = RunStore(path)
    assert review_calibration(store, run_id) is None  # no stored label: the dataset's count
    assert vera.calibrate(run_id, settings=settings).labelled == 2
    first = review_state(store, run_id).order[0]
    add_label(store, run_id, first, "faithful", reviewer="ana", queue="calibration")
    found = vera.calibrate(run_id, settings=settings)
    store.close()
    assert found.labelled == 1
    assert any(
        "2 human_faithful label(s) from the dataset are not used" in w for w in found.warnings
    )
