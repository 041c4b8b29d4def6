"""The JSON report: exactly `Report.to_json()`, written a sample at a time for a streamed run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TextIO

from vera.render._run_view import RunView
from vera.results._builder import Report, SampleResult

__all__ = ["json_chunks", "write_json"]

_SAMPLES_SLOT = "\x00samples\x00"


def json_chunks(report: Report, results: Iterable[SampleResult]) -> Iterator[str]:
    """`report` as the text `Report.to_json()` gives, with its samples taken from `results`
    one at a time: the same bytes, without the whole document in memory."""
    data = report.model_copy(update={"samples": ()}).to_dict()
    data["samples"] = _SAMPLES_SLOT
    head, tail = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).split(
        json.dumps(_SAMPLES_SLOT)
    )
    yield head
    first = True
    for result in results:
        text = json.dumps(
            result.model_dump(mode="json"), indent=2, ensure_ascii=False, allow_nan=False
        )
        yield ("[\n    " if first else ",\n    ") + text.replace("\n", "\n    ")
        first = False
    yield ("[]" if first else "\n  ]") + tail + "\n"


def write_json(view: RunView, out: TextIO) -> None:
    """The run's JSON report; a streamed run's samples are read back one at a time, never
    built whole in memory."""
    if view.streamed:
        out.writelines(json_chunks(view.report, view.sample_results()))
    else:
        out.write(view.report.to_json() + "\n")
