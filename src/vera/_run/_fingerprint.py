"""`run_fingerprint`: what a run measures, so a regression gate compares like with like.

Two runs' scores can be compared only when they asked the same questions, with the same judge,
metrics, pipeline and thresholds. The fingerprint states each of these as text and hashes
them (`RunFingerprint.digest`); the run history keeps it in each finished run's report, and
`--regression` looks for the newest finished run with the same digest.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from vera._plan._plan import QUICK_SAMPLES, RunPlan
from vera._types import Sample
from vera._types._fingerprint import RunFingerprint
from vera.datasets._source import SampleSource
from vera.judges._base import Judge
from vera.metrics._base import Metric
from vera.pipelines._core import Pipeline

TEST_SET_FIELDS = ("id", "query", "reference", "category", "answerable")
"""What a sample asks, as opposed to what the system under test answered (response,
contexts, citations, latency): the part of the data two runs must share to be compared."""


def dataset_digest(samples: Iterable[Sample]) -> str:
    """The test set's "sha256:…": each sample's `TEST_SET_FIELDS`, in order.

    A new version of the system writes new responses (and contexts) to the same questions;
    its run must still compare with the last one, so the answers are left out. One pass over
    the samples, validated as the run reads them, before any is judged."""
    digest = hashlib.sha256()
    for sample in samples:
        asked = {name: getattr(sample, name) for name in TEST_SET_FIELDS}
        digest.update(json.dumps(asked, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def content_digest(samples: Iterable[Sample]) -> str:
    """The data's "sha256:…": every field of every sample, in order (answers included, unlike
    `dataset_digest`): what a resumed run must find unchanged, so that its report holds one
    dataset."""
    digest = hashlib.sha256()
    for sample in samples:
        digest.update(sample.model_dump_json().encode("utf-8"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def file_digest(path: Path) -> str:
    """A file's "sha256:…", read a megabyte at a time: the content digest of a dataset that is
    one file, without parsing it again."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _dataset_part(plan: RunPlan, data: SampleSource) -> str:
    samples: Iterable[Sample] = itertools.islice(data, QUICK_SAMPLES) if plan.quick else data
    text = dataset_digest(samples)[:23]  # "sha256:" and 16 hex digits tell test sets apart
    fields = plan.settings.fields
    if fields:
        text += " fields " + ",".join(f"{k}={v}" for k, v in sorted(fields.items()))
    if plan.quick:
        text += f" (first {QUICK_SAMPLES} samples)"
    return text


def _judge_part(plan: RunPlan, judge: Judge) -> str:
    described = judge.describe()
    parts = [described.spec]
    parts += [
        f"{name}={value}"
        for name, value in (
            ("mode", described.mode),
            ("samples", described.samples),
            ("temperature", described.temperature),
            ("prompts", plan.settings.judge_prompts_dir),
            ("min_support", plan.settings.offline_min_support),
            ("language", plan.settings.language),
        )
        if value is not None
    ]
    return " ".join(parts)


def _metrics_part(metrics: Iterable[Metric]) -> str:
    named = sorted(
        f"{m.name}({'≥' if m.higher_is_better else '≤'}{m.threshold:g})" for m in metrics
    )
    return ", ".join(named)


def _pipeline_part(plan: RunPlan, system: Pipeline | None) -> str:
    if system is None:
        return "responses from the dataset"
    generator, retrieval = plan.generator, plan.retrieval
    return (
        f"{system.name} (generator {generator.spec}, top_k {retrieval.top_k}, chunks "
        f"{retrieval.chunk_size}/{retrieval.chunk_overlap}, documents "
        f"{retrieval.documents or 'the dataset'})"
    )


def _thresholds_part(plan: RunPlan) -> str:
    gates = plan.settings.gates.model_dump(exclude_none=True)
    table: Mapping[str, object] = {k: v for k, v in gates.items() if v not in ({}, None)}
    threshold = "none" if plan.threshold is None else f"{plan.threshold:g}"
    return f"--threshold {threshold}, gates {json.dumps(table, sort_keys=True)}"


def run_fingerprint(
    plan: RunPlan,
    data: SampleSource,
    judge: Judge,
    metrics: Iterable[Metric],
    system: Pipeline | None,
) -> RunFingerprint:
    """The fingerprint of a run of `plan` with these built components (`vera._run._engine` builds
    them; objects given from Python count by their names and thresholds)."""
    return RunFingerprint.of(
        dataset=_dataset_part(plan, data),
        judge=_judge_part(plan, judge),
        metrics=_metrics_part(metrics),
        pipeline=_pipeline_part(plan, system),
        thresholds=_thresholds_part(plan),
    )
