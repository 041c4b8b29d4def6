"""Which pipelines a run evaluates, built from the CLI's names: baselines or your own system."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from vera.baselines._baselines import BASELINES, build_baseline, corpus_of
from vera.datasets._source import SampleSource
from vera.judges._base import Judge
from vera.pipelines._core import Pipeline
from vera.pipelines._user import load_user_pipeline
from vera.providers._base import ChatModel
from vera.types import Context, Sample
from vera.types._errors import ConfigError

__all__ = ["resolve_pipeline"]


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
