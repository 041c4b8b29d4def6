"""Reporters through one door (issue 28): every output of a run, built-in or plugin, is written
by `Reporter.write(view, out)` from one `RunView` of the finished run.

- a plugin reporter gets the same dataset samples, results and history as the HTML report
  (it used to get none of the samples or the history);
- the run history is opened once for all the outputs of a streamed run (counted by a wrapper
  around the real `RunStore`), not once per output;
- `vera eval --report FORMAT=PATH` writes any registered format, plugins included, and refuses
  an unknown format or a path given twice before the run;
- the JSON report is byte-for-byte the stored report's JSON, whichever flag asked for it.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_vera
from tests.support.plugin import PLUGIN_ENTRY_POINTS, PLUGIN_MODULE, PLUGIN_SOURCE, write_plugin

from vera import Bindings, ConfigError, RunResult, RunStore, Sample, Settings, run_plan
from vera._plan import DatasetRef, build_plan
from vera.datasets import open_dataset
from vera.render import (
    REPORTER_REGISTRY,
    open_run_view,
    render_html,
    write_reports,
    write_run_reports,
)
from vera.render._outputs import _samples

WHITEBOX = "what the built-in reporters are handed, counted"

EXAMPLE_SAMPLES = sum(1 for _ in open_dataset("example"))


def install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str = PLUGIN_SOURCE,
    entries: str = PLUGIN_ENTRY_POINTS,
) -> Any:
    """A plugin written to a folder put on sys.path, its reporters loaded; its module."""
    site = write_plugin(tmp_path / "site", source, entries)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, PLUGIN_MODULE, raising=False)
    importlib.invalidate_caches()
    REPORTER_REGISTRY.reset_plugins()
    REPORTER_REGISTRY.load_plugins()
    return sys.modules[PLUGIN_MODULE]


@pytest.fixture(autouse=True)
def _no_plugin_outlives_a_test() -> Iterator[None]:
    yield
    sys.modules.pop(PLUGIN_MODULE, None)
    REPORTER_REGISTRY.reset_plugins()


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The test plugin (tests.support.plugin) installed; its module."""
    return install(tmp_path, monkeypatch)


def streamed_run(tmp_path: Path, *, threshold: float | None = None) -> RunResult:
    """The bundled example evaluated as `vera eval` does: results streamed to a history."""
    settings = Settings(history_path=tmp_path / "runs.sqlite", cache=False)
    plan = build_plan(dataset=DatasetRef(source="example"), settings=settings, threshold=threshold)
    result = run_plan(plan, Bindings(keep_samples=False))
    assert result.streamed and result.run_id is not None
    return result


class CountingStore(RunStore):
    """The real run store, counting how often one is opened."""

    opened = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).opened += 1
        super().__init__(*args, **kwargs)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountingStore]:
    """Every store the outputs could open (the view's, and `RunResult.results()`'s) counted."""
    CountingStore.opened = 0
    monkeypatch.setattr("vera.render._outputs.RunStore", CountingStore)
    monkeypatch.setattr("vera._run._engine.RunStore", CountingStore)
    return CountingStore


def html_sample_counts(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """What the built-in HTML reporter is given, recorded by a wrapper around its renderer."""
    seen: list[dict[str, int]] = []
    real = render_html

    def recording(report: Any, **kwargs: Any) -> str:
        samples: Mapping[str, Sample] = kwargs["samples"]
        results = list(kwargs["results"])
        seen.append(
            {"samples": len(samples), "results": len(results), "history": len(kwargs["history"])}
        )
        return real(report, **{**kwargs, "results": results})

    monkeypatch.setattr("vera.render._registry.render_html", recording)
    return seen


def test_a_plugin_reporter_gets_what_the_html_report_gets(
    plugin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = streamed_run(tmp_path, threshold=0.99)
    html = html_sample_counts(monkeypatch)
    out = tmp_path / "out"
    targets = [("html", out / "r.html"), ("counts", out / "r.counts"), ("csv", out / "r.csv")]
    write_run_reports(result, targets)
    counts = json.loads((out / "r.counts").read_text())
    assert EXAMPLE_SAMPLES > 0
    assert html == [{"samples": EXAMPLE_SAMPLES, "results": EXAMPLE_SAMPLES, "history": 1}]
    assert counts["samples"] == counts["texts"] == counts["results"] == EXAMPLE_SAMPLES
    assert counts["history"] == 1 and counts["run_id"] == result.run_id
    assert counts["gate_failures"] == list(result.gate_failures) != []
    # The earlier render(report, context) shape gets the same, and a streamed run's rows.
    assert plugin.RENDERED == [{"samples": EXAMPLE_SAMPLES, "history": 1}]
    rows = (out / "r.csv").read_text().splitlines()
    assert len(rows) == 1 + EXAMPLE_SAMPLES + 1 and rows[-1] == f"gate:{len(result.gate_failures)}"


@pytest.mark.usefixtures("plugin")
def test_the_history_is_opened_once_for_every_output_of_a_streamed_run(
    tmp_path: Path, counted: type[CountingStore]
) -> None:
    result = streamed_run(tmp_path)
    counted.opened = 0
    formats = ["json", "html", "md", "junit", "csv", "counts"]
    write_run_reports(result, [(fmt, tmp_path / f"r.{fmt}") for fmt in formats])
    assert counted.opened == 1
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["samples"]) == EXAMPLE_SAMPLES
    junit = (tmp_path / "r.junit").read_text()
    # A case per sample for its answer verdict, and one per sample for faithfulness.
    assert junit.count("<testcase ") == 2 * EXAMPLE_SAMPLES


def test_one_view_reads_the_dataset_once_and_opens_nothing_it_does_not_need(
    tmp_path: Path, counted: type[CountingStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = streamed_run(tmp_path)
    reads: list[str | None] = []
    real = _samples

    def counting(source: str | None, fields: Any = None) -> dict[str, Sample]:
        reads.append(source)
        return real(source, fields)

    monkeypatch.setattr("vera.render._outputs._samples", counting)
    counted.opened = 0
    with open_run_view(result) as view:
        assert counted.opened == 0 and reads == []  # nothing loaded before it is read
        write_reports(view, [("html", tmp_path / "a.html"), ("html", tmp_path / "b.html")])
        assert len(view.samples) == EXAMPLE_SAMPLES
    assert reads == ["example"] and counted.opened == 1
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


BROKEN = """
class Broken:
    name, extension = "broken", ".broken"

    def write(self, view, out):
        out.write("half")
        raise KeyError("no such column")


BROKEN = Broken()
"""


def test_a_reporter_that_fails_is_named_and_spares_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch, BROKEN, "[vera.reporters]\nbroken = vera_test_plugin:BROKEN\n")
    result = streamed_run(tmp_path)
    targets = [("broken", tmp_path / "r.broken"), ("md", tmp_path / "r.md")]
    with pytest.raises(ConfigError) as caught:
        write_run_reports(result, targets)
    assert str(caught.value) == (
        f"report format 'broken' failed writing {tmp_path / 'r.broken'}: KeyError: 'no such column'"
    )
    assert (tmp_path / "r.md").is_file() and not (tmp_path / "r.broken").exists()
    assert list(tmp_path.glob(".*.partial")) == []


# --- the CLI ----------------------------------------------------------------------------------


def stored_run_id(history: Path) -> str:
    """The id of the one run `history` holds."""
    store = RunStore(history, read_only=True)
    try:
        [record] = store.list()
    finally:
        store.close()
    return record.id


def test_eval_report_writes_a_plugin_format_and_a_built_in_one(tmp_path: Path) -> None:
    site = write_plugin(tmp_path / "site")
    result = run_vera(
        tmp_path, "eval", "-d", "example", "--history", "h.sqlite",
        "--report", "counts=out/r.counts", "--report", "CSV=r.csv", "--report", "md=r.md",
        "--junit", "r.xml",
        PYTHONPATH=str(site),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # the example's unfaithful answers
    for path in ("r.xml", "out/r.counts", "r.csv", "r.md"):
        assert f"Report written to {path}\n" in result.stdout
    counts = json.loads((tmp_path / "out/r.counts").read_text())
    assert counts["samples"] == counts["results"] == EXAMPLE_SAMPLES
    assert counts["history"] == 1
    assert len((tmp_path / "r.csv").read_text().splitlines()) == EXAMPLE_SAMPLES + 2
    assert (tmp_path / "r.md").read_text().startswith("#")
    # A case per sample for its answer verdict, and one per sample for faithfulness.
    assert (tmp_path / "r.xml").read_text().count("<testcase ") == 2 * EXAMPLE_SAMPLES
    # A stored run written again goes through the same door, with the same data.
    again = run_vera(
        tmp_path, "report", stored_run_id(tmp_path / "h.sqlite"), "--history", "h.sqlite",
        "--format", "counts", "-o", "s.counts", PYTHONPATH=str(site),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    stored = json.loads((tmp_path / "s.counts").read_text())
    assert stored == {**counts, "gate_failures": []}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("cvs=r.csv", "--report 'cvs=r.csv': unknown report format 'cvs'; did you mean 'csv'?"),
        ("r.csv", "--report 'r.csv': give FORMAT=PATH, e.g. --report html=report.html"),
        ("md=", "--report 'md=': give FORMAT=PATH"),
    ],
)
def test_eval_refuses_a_report_it_cannot_write_before_the_run(
    tmp_path: Path, value: str, message: str
) -> None:
    site = write_plugin(tmp_path / "site")
    result = run_vera(
        tmp_path, "eval", "-d", "example", "--history", "h.sqlite", "--report", value,
        PYTHONPATH=str(site),
    )  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "h.sqlite").exists()  # nothing was run


def test_eval_refuses_two_reports_to_one_path(tmp_path: Path) -> None:
    result = run_vera(
        tmp_path, "eval", "-d", "example", "--no-history", "-o", "r.json",
        "--report", "md=./r.json",
    )  # fmt: skip
    assert result.returncode == 2
    assert "two reports would be written to r.json (json and md)" in result.stderr


def test_the_json_report_is_the_stored_reports_json_byte_for_byte(tmp_path: Path) -> None:
    result = run_vera(
        tmp_path, "eval", "-d", "example", "--history", "h.sqlite", "-o", "r.json",
        "--report", "json=again.json",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # the example's unfaithful answers
    written = (tmp_path / "r.json").read_bytes()
    assert (tmp_path / "again.json").read_bytes() == written
    run_id = stored_run_id(tmp_path / "h.sqlite")
    store = RunStore(tmp_path / "h.sqlite", read_only=True)
    try:
        stored = store.report(run_id)
    finally:
        store.close()
    # The stored report, each sample with the dataset's contexts it was judged against
    # (the history does not store them twice; issue 44).
    data = json.loads(written)
    dataset = {s.id: s for s in open_dataset("example")}
    for sample in data["samples"]:
        expected = [c.model_dump(mode="json") for c in dataset[sample["id"]].contexts]
        assert sample["contexts"] == expected and expected
        sample["contexts"] = []
    assert data == json.loads(stored.to_json())
    assert len(data["samples"]) == EXAMPLE_SAMPLES
    again = run_vera(tmp_path, "report", run_id, "-o", "s.json", "--history", "h.sqlite")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "s.json").read_bytes() == written
