"""The JSON report: `Report.to_json()`, written a sample at a time, each sample with the
contexts it was judged against (a dataset's own, read back as the HTML report reads them, or
what a pipeline retrieved)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TextIO

from vera._types import Sample
from vera._types._report import Report, SampleResult
from vera.render._run_view import RunView

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


def with_contexts(
    results: Iterable[SampleResult], dataset: Iterator[Sample]
) -> Iterator[SampleResult]:
    """Each result with the contexts it was judged against: a result without contexts of its
    own (the dataset's were judged, and the history does not store them twice) takes its
    sample's from `dataset`. Both are in dataset order, so they are read side by side: a
    sample the results skip (an invalid row) is passed over, and memory stays flat."""
    waiting: dict[str, Sample] = {}
    for result in results:
        if result.contexts or result.response is None:
            yield result
            continue
        sample = waiting.pop(result.id, None)
        while sample is None:
            found = next(dataset, None)
            if found is None:
                break
            if found.id == result.id:
                sample = found
            elif len(waiting) < _AHEAD:
                waiting[found.id] = found
        yield result if sample is None else result.model_copy(update={"contexts": sample.contexts})


_AHEAD = 1000
"""Samples read past and kept for a result that comes later (out of dataset order)."""


def write_json(view: RunView, out: TextIO) -> None:
    """The run's JSON report, its samples (a streamed run's read back one at a time, never
    built whole in memory) with the contexts they were judged against."""
    results = with_contexts(view.sample_results(), view.dataset_samples())
    out.writelines(json_chunks(view.report, results))
