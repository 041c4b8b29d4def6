"""Each pass over a dataset keeps its own invalid-row log: two passes over one source (the
system's and a baseline's, or two read side by side) never mix their logs, and a pass's report
lists exactly the rows that pass skipped."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

from vera._run import LocalExecutor
from vera.datasets import open_dataset
from vera.datasets._source import PassLog, SampleSource
from vera.executors import PassWork, run_pass
from vera.judges import OfflineJudge
from vera.metrics._faithfulness import Faithfulness

WHITEBOX = "the dataset readers' own parts"

GOOD = {"query": "Where is Paris?", "response": "Paris is in France."}
ROWS = [
    {"id": "a", **GOOD, "contexts": ["Paris is the capital of France."]},
    {"id": "b", **GOOD, "latency_ms": -1},
    {"id": "c", **GOOD, "contexts": ["Paris is the capital of France."]},
    {"id": "d", **GOOD, "latency_ms": -2},
    {"id": "e", **GOOD, "contexts": ["Paris is the capital of France."]},
]


def dataset(tmp_path: Path) -> SampleSource:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return open_dataset(path, skip_invalid=True)


def test_two_passes_read_side_by_side_keep_separate_logs(tmp_path: Path) -> None:
    data = dataset(tmp_path)
    first, second = data.read(), data.read()
    started = iter(first)
    assert next(started).id == "a"
    # The second pass runs to its end while the first is under way.
    assert [s.id for s in second] == ["a", "c", "e"]
    assert [s.id for s in started] == ["c", "e"]
    assert [r.location for r in first.invalid_rows] == ["line 2", "line 4"]
    assert [r.location for r in second.invalid_rows] == ["line 2", "line 4"]
    assert first.invalid_rows is not second.invalid_rows


def test_a_pass_that_stops_early_logs_only_the_rows_it_read(tmp_path: Path) -> None:
    data = dataset(tmp_path)
    short, full = data.read(), data.read()
    assert [s.id for s in itertools.islice(short, 2)] == ["a", "c"]
    assert [s.id for s in full] == ["a", "c", "e"]
    assert [r.location for r in short.invalid_rows] == ["line 2"]
    assert [r.location for r in full.invalid_rows] == ["line 2", "line 4"]
    assert isinstance(short, PassLog) and short.name == data.name == "rows"
    assert short.size_hint() == 5


async def test_concurrent_passes_report_their_own_invalid_rows(tmp_path: Path) -> None:
    data = dataset(tmp_path)
    short, full = data.read(), data.read()
    work, local = PassWork([Faithfulness()], OfflineJudge()), LocalExecutor()
    reports = await asyncio.gather(
        run_pass(itertools.islice(short, 2), work, local, source=short),
        run_pass(full, work, local, source=full),
    )
    assert [r.location for r in reports[0].invalid_rows] == ["line 2"]
    assert [r.location for r in reports[1].invalid_rows] == ["line 2", "line 4"]
    assert (reports[0].counts.invalid_rows, reports[1].counts.invalid_rows) == (1, 2)
    assert (reports[0].counts.total, reports[1].counts.total) == (2, 3)
