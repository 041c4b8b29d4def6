"""Which pipelines a run evaluates, built from the plan's names: baselines or your own system.

What a run builds from its plan alone (the data, the pipelines by name) is built here, so the
driver and every worker process of an executor build the same thing from the same plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from vera._baselines._baselines import BASELINES, build_baseline, corpus_of
from vera._baselines._documents import load_documents
from vera._plan import RunPlan
from vera._types import Context, Sample
from vera._types._errors import ConfigError
from vera.datasets import open_dataset
from vera.datasets._source import SampleSource
from vera.judges._base import Judge
from vera.judges._registry import create_managed_model
from vera.pipelines._core import Pipeline
from vera.pipelines._user import load_user_pipeline
from vera.providers._base import ChatModel


def resolve_pipeline(
    spec: str,
    data: SampleSource,
    judge: Judge,
    *,
    generator: ChatModel | None = None,
    top_k: int = 3,
    chunk_size: int = 800,
    chunk_overlap: int = 100,
    documents: Sequence[Context] | None = None,
    samples: Iterable[Sample] | None = None,
) -> Pipeline:
    """A baseline by name ("naive-rag", "simple-verification", "vera") over `documents`, else
    the dataset's documents, else the distinct contexts of its samples; or a user pipeline
    ("module:function", an http(s) URL)."""
    if spec in BASELINES:
        rows = samples if samples is not None else data
        corpus = (
            list(documents)
            if documents
            else corpus_of(data.documents, (c for s in rows for c in s.contexts))
        )
        return build_baseline(
            spec,
            corpus,
            judge,
            generator=generator,
            top_k=top_k,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
        )
    if ":" not in spec:
        raise ConfigError(
            f"unknown baseline {spec!r}: use {', '.join(BASELINES)}, module:function, "
            "or an http(s) URL"
        )
    return load_user_pipeline(spec)


def open_plan_data(plan: RunPlan) -> SampleSource:
    """The dataset `plan` names (the bundled example for a quick run that names none)."""
    ref = plan.dataset
    source = ref.source or ("example" if plan.quick else None)
    if source is None:
        raise ConfigError("give --dataset PATH, or --quick to try the bundled example")
    return open_dataset(
        source,
        format=ref.format,
        skip_invalid=ref.skip_invalid,
        name=ref.name,
        fields=plan.settings.fields,
        user_facts=plan.settings.user_facts,
        agent_steps=plan.settings.agent_steps,
    )


def system_spec(plan: RunPlan, data: SampleSource) -> str | None:
    """The name of the pipeline that answers as the system: the plan's, or with baselines and
    a corpus but no pipeline of yours, VERA's own; None when the responses come with the data."""
    has_corpus = bool(data.documents or plan.retrieval.documents)
    return plan.pipeline or ("vera" if plan.baselines and has_corpus else None)


def plan_pipelines(
    plan: RunPlan,
    data: SampleSource,
    judge: Judge,
    names: Iterable[str],
    *,
    documents: Sequence[Context] | None = None,
) -> dict[str, Pipeline]:
    """The pipelines of `plan` named in `names` (the system's spec, baselines), built alike
    wherever they are built: one generator model shared by them, one corpus (the plan's
    documents file, else `documents`, else the data's)."""
    retrieval = plan.retrieval
    corpus: Sequence[Context] | None = (
        load_documents(Path(retrieval.documents)) if retrieval.documents else documents
    )
    generator = plan.generator
    chat = (
        create_managed_model(generator.spec, plan.settings, base_url=generator.base_url)
        if generator.uses_model
        else None
    )
    return {
        name: resolve_pipeline(
            name,
            data,
            judge,
            generator=chat,
            top_k=retrieval.top_k,
            chunk_size=retrieval.chunk_size,
            chunk_overlap=retrieval.chunk_overlap,
            documents=corpus,
        )
        for name in dict.fromkeys(names)
    }
