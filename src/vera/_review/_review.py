"""People reviewing a stored run: the two queues they label from, the labels kept in the run
history beside the judge's verdicts, the run's calibration from those labels, and the labelled
dataset they export.

    from vera import review
    from vera._store import RunStore
    store = RunStore(".vera/runs.sqlite")
    state = review.review_state(store, run_id)
    review.add_label(store, run_id, state.next_calibration, "unfaithful", reviewer="ana",
                     queue="calibration", claims={"The cap is 5 GB.": "CONTRADICTED"})
    review.review_calibration(store, run_id)       # the run's block, from the stored labels
    review.export_labels(store, run_id, Path("labelled.jsonl"))

The **calibration queue** is every sample of the run in a random order fixed by the run's id
(each sample ranked by a SHA-256 of the run id and its own id), so it is the same in every
session and on every machine. Prediction-powered intervals hold only for labels on a uniformly
random sample, so the calibration block counts the samples from the start of that order up to
the first one not labelled: a prefix of a random permutation is a uniform sample without
replacement, whoever labelled it and from whichever queue. A sample labelled past a gap (a
skipped sample, a label given in triage) is kept and exported but left out of the block, which
says how many were. The **triage queue** puts first the samples most worth a look: the lowest
faithfulness, or where the judge was unsure (a claim's entailment or the response's
faithfulness_probability near 0.5). Its labels are biased by construction, so they never enter
the intervals unless their sample is in the calibration sample.

A label never changes the judge's verdicts: labels are rows of their own
(`vera._review._labels`), only ever added; the newest label of a sample (or claim) is the one
that counts.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from vera._review._labels import StoredLabel, add_labels, stored_labels
from vera._stats._calibration import CALIBRATED_METRIC, RANKING_METRIC, CalibrationTally
from vera._store._history import RunStore
from vera._types import Verdict
from vera._types._errors import ConfigError
from vera._types._report import Calibration, SampleResult, SampleStatus
from vera._types._samples import LabelledClaim, Sample
from vera.render._outputs import atomic_text, stored_run_view
from vera.render._registry import get_reporter

SAMPLE_LABELS: dict[str, bool] = {"faithful": True, "unfaithful": False}
"""A sample's label and the `human_faithful` it stands for."""
QUEUES = ("calibration", "triage")
MAX_NOTE_CHARS = 2000
MAX_REVIEWER_CHARS = 80
ExportScope = Literal["labelled", "calibration"]


class ReviewError(ConfigError):
    """A label that cannot be stored, saying what to change."""


def _rank(run_id: str, sample_id: str) -> str:
    return hashlib.sha256(f"{run_id}\0{sample_id}".encode()).hexdigest()


def calibration_order(run_id: str, sample_ids: Iterable[str]) -> list[str]:
    """`sample_ids` in the run's calibration order: random, fixed by the ids alone."""
    return sorted(sample_ids, key=lambda sample_id: _rank(run_id, sample_id))


@dataclass(frozen=True)
class TriageItem:
    """A sample of the triage queue: its priority (0 first) and why it is there."""

    sample_id: str
    priority: float
    why: str


def _unsure(result: SampleResult) -> tuple[float, str] | None:
    """How sure the judge was (0: a coin toss, 1: certain) where it gave probabilities."""
    found: list[tuple[float, str]] = [
        (2 * abs(claim.entailment - 0.5), f"a claim at entailment {claim.entailment:.2f}")
        for claim in result.claims
        if claim.entailment is not None
    ]
    probability = result.results.get(RANKING_METRIC)
    if probability is not None and probability.score is not None:
        found.append(
            (2 * abs(probability.score - 0.5), f"{RANKING_METRIC} {probability.score:.2f}")
        )
    return min(found) if found else None


def triage_order(results: Iterable[SampleResult]) -> list[TriageItem]:
    """The scored samples, the lowest faithfulness or least sure judgement first."""
    items = []
    for result in results:
        faithfulness = result.results.get(CALIBRATED_METRIC)
        if result.status is not SampleStatus.SCORED or faithfulness is None:
            continue
        if faithfulness.score is None:
            continue
        priority, why = faithfulness.score, f"faithfulness {faithfulness.score:.2f}"
        unsure = _unsure(result)
        if unsure is not None and unsure[0] < priority:
            priority, why = unsure[0], f"the judge was unsure: {unsure[1]}"
        items.append(TriageItem(result.id, priority, why))
    return sorted(items, key=lambda item: (item.priority, item.sample_id))


@dataclass
class SampleLabels:
    """A sample's labels as they stand: the newest of its whole response, and per claim."""

    sample: StoredLabel | None = None
    claims: dict[str, StoredLabel] = field(default_factory=dict)

    @property
    def faithful(self) -> bool | None:
        return None if self.sample is None else SAMPLE_LABELS[self.sample.label]

    def labelled_claims(self) -> tuple[LabelledClaim, ...]:
        return tuple(
            LabelledClaim(text=text, verdict=Verdict(label.label))
            for text, label in self.claims.items()
        )


def current_labels(labels: Iterable[StoredLabel]) -> dict[str, SampleLabels]:
    """Per sample, its newest labels (`labels` oldest first, as the history gives them)."""
    found: dict[str, SampleLabels] = {}
    for label in labels:
        entry = found.setdefault(label.sample_id, SampleLabels())
        if label.claim is None:
            entry.sample = label
        else:
            entry.claims[label.claim] = label
    return found


@dataclass(frozen=True)
class ReviewState:
    """A run's review as it stands: its calibration order, the labels, and which of the
    labelled samples make the calibration sample (the labelled prefix of the order)."""

    run_id: str
    order: tuple[str, ...]
    labels: dict[str, SampleLabels]
    calibration_sample: tuple[str, ...]

    @property
    def next_calibration(self) -> str | None:
        """The next sample the calibration queue asks for (None: every one is labelled)."""
        at = len(self.calibration_sample)
        return self.order[at] if at < len(self.order) else None

    @property
    def labelled(self) -> int:
        return sum(entry.sample is not None for entry in self.labels.values())

    @property
    def outside(self) -> int:
        """Labelled samples past the first gap in the order: kept, but not in the block."""
        return self.labelled - len(self.calibration_sample)


def review_state(
    store: RunStore, run_id: str, results: Iterable[SampleResult] | None = None
) -> ReviewState:
    """The review of the finished run `run_id` (`results`: its results, when already read)."""
    record = store.get(run_id)
    ids = [r.id for r in results] if results is not None else _sample_ids(store, record.id)
    labels = current_labels(stored_labels(store, record.id))
    order = calibration_order(record.id, ids)
    prefix: list[str] = []
    for sample_id in order:
        entry = labels.get(sample_id)
        if entry is None or entry.sample is None:
            break
        prefix.append(sample_id)
    return ReviewState(record.id, tuple(order), labels, tuple(prefix))


def _sample_ids(store: RunStore, run_id: str) -> list[str]:
    return [result.id for result in store.iter_results(run_id)]


def _reviewer(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MAX_REVIEWER_CHARS or not name.isprintable():
        raise ReviewError(
            f"the reviewer's name must be 1 to {MAX_REVIEWER_CHARS} printable characters "
            "(the `reviewer` field): every label records who gave it"
        )
    return name


def _claim_rows(result: SampleResult, claims: Mapping[str, str]) -> list[tuple[str, str]]:
    """(claim, verdict) for each claim label, checked against the judge's claims."""
    known = {claim.text for claim in result.claims}
    rows = []
    for text, verdict in claims.items():
        if text not in known:
            raise ReviewError(
                f"sample {result.id!r} has no claim {text[:80]!r}: a claim label names one of "
                "the claims the judge found, word for word"
            )
        if verdict not in {v.value for v in Verdict}:
            names = ", ".join(v.value for v in Verdict)
            raise ReviewError(f"{verdict[:40]!r} is not a verdict; give one of {names}")
        rows.append((text, Verdict(verdict).value))
    return rows


def add_label(
    store: RunStore,
    run_id: str,
    sample_id: str,
    label: str | None,
    *,
    reviewer: str,
    queue: str,
    claims: Mapping[str, str] | None = None,
    note: str = "",
) -> list[StoredLabel]:
    """Store a person's labels of one sample of a finished run: `label` ("faithful" or
    "unfaithful", None: only claims) and `claims` (claim text -> the verdict they believe),
    all in one transaction. `ReviewError` says what is wrong before anything is written."""
    record = store.get(run_id)
    if record.status != "finished":
        raise ReviewError(f"run {record.id} is {record.status}; only a finished run is reviewed")
    if queue not in QUEUES:
        raise ReviewError(f"queue {queue[:40]!r} is not one of {', '.join(QUEUES)}")
    result = store.result(record.id, sample_id)
    if result is None:
        raise ReviewError(f"run {record.id} has no sample {sample_id[:80]!r}")
    if label is not None and label not in SAMPLE_LABELS:
        raise ReviewError(f"a sample's label is faithful or unfaithful, not {label[:40]!r}")
    if len(note) > MAX_NOTE_CHARS:
        raise ReviewError(f"the note has {len(note)} characters; at most {MAX_NOTE_CHARS}")
    rows: list[tuple[str | None, str]] = [(None, label)] if label is not None else []
    rows += _claim_rows(result, claims or {})
    if not rows:
        raise ReviewError("nothing to store: choose faithful or unfaithful, or a claim's verdict")
    return add_labels(
        store, record.id, result.id, rows, reviewer=_reviewer(reviewer), queue=queue, note=note
    )


def _reviewed(results: Iterable[SampleResult], state: ReviewState) -> Iterator[SampleResult]:
    """The results with the calibration sample's labels in place of any from the dataset."""
    chosen = set(state.calibration_sample)
    for result in results:
        entry = state.labels.get(result.id)
        if result.id in chosen and entry is not None:
            yield result.model_copy(
                update={
                    "human_faithful": entry.faithful,
                    "human_claims": entry.labelled_claims(),
                }
            )
        else:
            yield result.model_copy(update={"human_faithful": None, "human_claims": ()})


def review_calibration(
    store: RunStore, run_id: str, results: Sequence[SampleResult] | None = None
) -> Calibration | None:
    """The run's calibration block from its stored labels (see the module's docstring); None
    when the run has none (`results`: the run's, when already read). Samples labelled outside
    the calibration sample, and labels the dataset carried, are left out, and the block's
    warnings say so."""
    record = store.get(run_id)
    if results is None:
        results = list(store.iter_results(record.id))
    state = review_state(store, record.id, results)
    if not state.labels:
        return None
    found = CalibrationTally.of(_reviewed(results, state)).calibration()
    notes = _left_out(state, results)
    if found is None:
        raise ReviewError(
            f"run {record.id} has {state.labelled} labelled samples but none in its calibration "
            f"sample: label the calibration queue in its order, starting with sample "
            f"{state.next_calibration!r} (vera view --review, /review/{record.id})"
        )
    return found.model_copy(update={"warnings": (*found.warnings, *notes)})


def _left_out(state: ReviewState, results: Sequence[SampleResult]) -> list[str]:
    notes = []
    if state.outside:
        notes.append(
            f"{state.outside} labelled sample(s) lie past the first unlabelled one in the "
            f"calibration order (next: {state.next_calibration!r}) and are left out: only a "
            "uniformly random sample gives valid intervals; label the calibration queue in order"
        )
    dataset = sum(r.human_faithful is not None for r in results)
    if dataset:
        notes.append(
            f"{dataset} human_faithful label(s) from the dataset are not used: the labels "
            "stored by review are"
        )
    return notes


def reviewed_report_html(
    store: RunStore,
    run_id: str,
    *,
    links: Sequence[tuple[str, str]] = (),
    thread_link: str | None = None,
) -> str:
    """The run's HTML report (`vera.render._outputs.stored_report_html`) with its calibration block
    from the stored labels, where it has any; `thread_link` as `RunView` takes it."""
    view = stored_run_view(store, run_id, links=links, thread_link=thread_link)
    try:
        calibration = review_calibration(store, view.run_id or run_id)
    except ReviewError:
        # Labels are stored but none is in the calibration sample: the dataset's labels no
        # longer count and the stored ones cannot yet, so there is no block (the review page
        # says what to label).
        view.report = view.report.model_copy(update={"calibration": None})
    else:
        if calibration is not None:
            view.report = view.report.model_copy(update={"calibration": calibration})
    out = io.StringIO()
    get_reporter("html").write(view, out)
    return out.getvalue()


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _review_metadata(entry: SampleLabels, in_sample: bool) -> dict[str, Any]:
    labels = [entry.sample] if entry.sample is not None else []
    labels += list(entry.claims.values())
    return {
        "in_calibration_sample": in_sample,
        "labels": [
            {
                "claim": label.claim,
                "label": label.label,
                "note": label.note,
                "reviewer": label.reviewer,
                "queue": label.queue,
                "labelled_at": _stamp(label.created),
            }
            for label in labels
        ],
    }


def _row(sample: Sample, result: SampleResult, entry: SampleLabels | None, chosen: bool) -> Sample:
    update: dict[str, Any] = {
        "response": result.response or sample.response,
        "contexts": result.contexts or sample.contexts,
        "human_faithful": None,
        "human_claims": (),
    }
    if entry is not None:
        update.update(human_faithful=entry.faithful, human_claims=entry.labelled_claims())
        update["metadata"] = {**sample.metadata, "review": _review_metadata(entry, chosen)}
    return sample.model_copy(update=update)


def export_labels(
    store: RunStore, run_id: str, path: Path, *, scope: ExportScope = "labelled"
) -> int:
    """Write the run's labelled samples to `path` as a JSONL dataset (query, response,
    contexts, `human_faithful`, `human_claims`, and who labelled what when in
    `metadata.review`); the number of rows. `scope="calibration"` writes every sample, with
    labels on the calibration sample only: `vera calibrate FILE` on it gives the intervals
    the run's block gives. `ReviewError` when the run's dataset can no longer be read (its
    queries and contexts are not stored with the results) or nothing is labelled."""
    view = stored_run_view(store, run_id)
    record_id = view.run_id or run_id
    results = list(store.iter_results(record_id))
    state = review_state(store, record_id, results)
    if not state.labels:
        raise ReviewError(f"run {record_id} has no stored labels to export")
    samples = view.samples
    missing = [r.id for r in results if r.id not in samples]
    if missing:
        raise ReviewError(
            f"the dataset of run {record_id} cannot be read any more (or lacks sample "
            f"{missing[0]!r}): the export needs its queries and contexts; run the export where "
            "the run's dataset file is"
        )
    chosen = set(state.calibration_sample)
    rows = []
    for result in results:
        entry = state.labels.get(result.id)
        if scope == "calibration":
            entry = entry if result.id in chosen else None
        elif entry is None or (entry.sample is None and not entry.claims):
            continue
        rows.append(_row(samples[result.id], result, entry, result.id in chosen))
    with atomic_text(path, what="the labelled dataset") as out:
        for row in rows:
            out.write(row.model_dump_json(exclude_defaults=True) + "\n")
    return len(rows)
