"""The review page of `vera view`: a run's calibration and triage queues, the labels stored so
far, and the calibration block they give (`vera._review._review`).

Rendered read-only (no form) unless the view was started with `--review`; then each sample of
the queue is a form that posts to `/review/RUN/labels` with the session's CSRF token
(`vera._viewer._writes`). Nothing here writes: the page only reads the history.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from vera._review._review import (
    QUEUES,
    ReviewError,
    ReviewState,
    SampleLabels,
    review_calibration,
    review_state,
    triage_order,
)
from vera._store._history import RunStore
from vera._types import Verdict
from vera._types._errors import ConfigError
from vera._types._report import SampleResult
from vera._types._samples import Sample
from vera.render._calibration import calibration_lines
from vera.render._outputs import stored_run_view

QUEUE_SHOWN = 5
"""Samples of a queue shown at once: the next ones to label."""
VERDICT_CHOICES = tuple(v.value for v in Verdict)


def review_url(run_id: str, queue: str = "calibration", **query: str) -> str:
    return "/review/" + quote(run_id, safe="") + "?" + urlencode({"queue": queue, **query})


@dataclass(frozen=True)
class ReviewItem:
    """One sample as the queue shows it, with the labels it has so far."""

    result: SampleResult
    sample: Sample | None
    why: str
    labels: SampleLabels | None

    @property
    def id(self) -> str:
        return self.result.id

    @property
    def query(self) -> str:
        return self.sample.query if self.sample is not None else ""

    @property
    def response(self) -> str:
        return self.result.response or (self.sample.response if self.sample else None) or ""

    @property
    def contexts(self) -> list[str]:
        contexts = self.result.contexts or (self.sample.contexts if self.sample else ())
        return [context.text for context in contexts]

    def claim_label(self, text: str) -> str:
        found = self.labels.claims.get(text) if self.labels is not None else None
        return found.label if found is not None else ""


def _items(
    ids: Sequence[str],
    results: Mapping[str, SampleResult],
    samples: Callable[[], Mapping[str, Sample]],
    state: ReviewState,
    why: Mapping[str, str],
) -> list[ReviewItem]:
    """The next `QUEUE_SHOWN` of `ids` without a label of their whole response."""
    chosen = []
    for sample_id in ids:
        entry = state.labels.get(sample_id)
        if entry is None or entry.sample is None:
            chosen.append(sample_id)
        if len(chosen) == QUEUE_SHOWN:
            break
    found = samples() if chosen else {}
    return [
        ReviewItem(results[i], found.get(i), why.get(i, ""), state.labels.get(i)) for i in chosen
    ]


def _calibration_block(
    store: RunStore, run_id: str, results: Sequence[SampleResult]
) -> tuple[list[str], str]:
    """The block's lines from the stored labels, or why there are none."""
    try:
        found = review_calibration(store, run_id, results)
    except ReviewError as exc:
        return [], str(exc)
    if found is None:
        return [], "No sample of this run is labelled yet."
    return calibration_lines(found), ""


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _labelled_rows(state: ReviewState) -> list[dict[str, Any]]:
    """The current labels, newest first, as the page's table lists them."""
    chosen = set(state.calibration_sample)
    rows = []
    for sample_id, entry in state.labels.items():
        for label in [entry.sample, *entry.claims.values()]:
            if label is None:
                continue
            rows.append(
                {
                    "sample": sample_id,
                    "claim": label.claim,
                    "label": label.label,
                    "reviewer": label.reviewer,
                    "queue": label.queue,
                    "note": label.note,
                    "when": _stamp(label.created),
                    "created": label.created,
                    "in_sample": sample_id in chosen,
                }
            )
    return sorted(rows, key=lambda row: -float(row["created"]))


def review_page_values(store: RunStore, run_id: str, queue: str) -> dict[str, Any]:
    """What `review.html.j2` renders for `queue` of the finished run `run_id`."""
    if queue not in QUEUES:
        raise ConfigError(f"?queue= is one of {', '.join(QUEUES)}, not {queue[:40]!r}")
    record = store.get(run_id)
    results = {result.id: result for result in store.iter_results(record.id)}
    state = review_state(store, record.id, results.values())
    view = stored_run_view(store, record.id)
    if queue == "calibration":
        ids: Sequence[str] = state.order[len(state.calibration_sample) :]
        why: dict[str, str] = {}
    else:
        triage = triage_order(results.values())
        ids, why = [t.sample_id for t in triage], {t.sample_id: t.why for t in triage}
    lines, no_block = _calibration_block(store, record.id, list(results.values()))
    return {
        "record": record,
        "queue": queue,
        "queues": QUEUES,
        "state": state,
        "total": len(results),
        "items": _items(ids, results, lambda: view.samples, state, why),
        "calibration": lines,
        "no_calibration": no_block,
        "labelled_rows": _labelled_rows(state),
        "verdict_choices": VERDICT_CHOICES,
        "review_url": review_url,
    }
